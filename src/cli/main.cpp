#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/options.hpp"
#include "cli/terminal.hpp"
#include "core/validate.hpp"

#include <redlock/error.hpp>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>

namespace {

/// Overwrites the values of `REDLOCK_PASSWORD` and `REDLOCK_NODES` in place, once read:
/// getenv() points into the block the process started with, which /proc/PID/environ shows
/// to root and (while the process is dumpable) its user. What is left there is `*`s.
void scrub_secrets_from_environment() {
    for (const char* name : {"REDLOCK_PASSWORD", "REDLOCK_NODES"}) {
        if (char* value = std::getenv(name)) {
            std::memset(value, '*', std::strlen(value));
        }
    }
}

} // namespace

int main(int argc, char** argv) {
    using namespace redlock::cli;
    std::string error;
    auto o = parse_options(argc, argv, std::getenv("REDLOCK_NODES"), error,
                           std::getenv("REDLOCK_MAX_TTL"), std::getenv("REDLOCK_NODE_TIMEOUT"));
    if (!o) {
        std::cerr << "redlock: " << error << "\n";
        return exit_usage;
    }
    if (o->command == "help") {
        std::cout << help_text(o->help_topic);
        return exit_ok;
    }
    if (o->command == "version") {
        std::cout << "redlock " << REDLOCK_VERSION << "\n";
        return exit_ok;
    }
    if (!load_credentials(*o, std::getenv("REDLOCK_PASSWORD"), error,
                          std::getenv("REDLOCK_NODE_CREDENTIALS_FILE"))) {
        std::cerr << "redlock: " << error << "\n";
        return exit_usage;
    }
    scrub_secrets_from_environment();
    // Before any connection, and the same for every command: the library's own check (its
    // messages name a node by its index, never by its text, which may hold a password).
    std::vector<redlock::node_address> addresses;
    if (auto why = redlock::detail::check_client_config(make_config(*o), addresses); !why.empty()) {
        std::cerr << "redlock: bad node list (--nodes or $REDLOCK_NODES): " << why << "\n";
        return exit_usage;
    }
    if (o->tls.dangerously_skip_verification) {
        // Even with --quiet: a setting that hands every lock to whoever sits in the middle.
        std::cerr << "redlock: WARNING: --tls-insecure-skip-verify: the nodes' certificates are "
                     "not checked; anyone in the middle can take, hold or steal every lock\n";
    }
    if (o->command != "run") {
        // A reader of our output that goes away (`redlock acquire ... | head -c0`) makes the
        // write fail instead of killing us between the lock's outcome and the exit code that
        // reports it (the library's own sockets never raise SIGPIPE: MSG_NOSIGNAL). run keeps
        // the default, which its command inherits.
        std::signal(SIGPIPE, SIG_IGN);
    }
    // parse_options let only these through.
    static const std::map<std::string, int (*)(const options&)> commands{
        {"run", run_command},         {"acquire", acquire_command}, {"extend", extend_command},
        {"release", release_command}, {"status", status_command},   {"nodes", nodes_command},
        {"demo", demo_command}};
    try {
        return commands.at(o->command)(*o);
    } catch (const std::system_error& e) {
        std::cerr << "redlock: " << printable(e.what()) << "\n";
        return e.code() == redlock::errc::invalid_argument ? exit_usage : exit_internal;
    } catch (const std::exception& e) {
        std::cerr << "redlock: " << printable(e.what()) << "\n";
        return exit_internal;
    }
}
