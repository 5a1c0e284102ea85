#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/options.hpp"

#include <redlock/error.hpp>

#include <csignal>
#include <cstdlib>
#include <iostream>

int main(int argc, char** argv) {
    using namespace redlock::cli;
    std::string error;
    auto o = parse_options(argc, argv, std::getenv("REDLOCK_NODES"), error);
    if (!o) {
        std::cerr << "redlock: " << error << "\n";
        return exit_usage;
    }
    if (o->command != "run") {
        // status and demo talk to Redis through blocking hiredis, whose writes to a reset
        // connection would raise SIGPIPE; a failed write is reported as an error instead.
        // run keeps the default, which its command inherits.
        std::signal(SIGPIPE, SIG_IGN);
    }
    try {
        if (o->command == "help") {
            std::cout << usage();
            return exit_ok;
        }
        if (o->command == "run") {
            return run_command(*o);
        }
        if (o->command == "acquire") {
            return acquire_command(*o);
        }
        if (o->command == "extend") {
            return extend_command(*o);
        }
        if (o->command == "release") {
            return release_command(*o);
        }
        if (o->command == "status") {
            return status_command(*o);
        }
        if (o->command == "demo") {
            return demo_command(*o);
        }
        std::cerr << "redlock: unknown command \"" << o->command << "\" (see redlock --help)\n";
        return exit_usage;
    } catch (const std::system_error& e) {
        std::cerr << "redlock: " << e.what() << "\n";
        return e.code() == redlock::errc::invalid_argument ? exit_usage : exit_internal;
    } catch (const std::exception& e) {
        std::cerr << "redlock: " << e.what() << "\n";
        return exit_internal;
    }
}
