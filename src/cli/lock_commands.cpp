// acquire, extend, release: one operation each, for shell scripts.
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/terminal.hpp"

#include <redlock/blocking_client.hpp>
#include <redlock/client.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <cstring>
#include <iostream>
#include <optional>

namespace redlock::cli {

namespace asio = boost::asio;
using std::chrono::duration_cast;
using std::chrono::milliseconds;

client_config make_config(const options& o) {
    client_config c;
    c.nodes = o.nodes;
    c.quarantine.enabled = o.quarantine;
    c.tls = o.tls;
    return c;
}

void say(const options& o, const std::string& message) {
    if (!o.quiet) {
        // Messages carry the nodes' own error texts.
        std::cerr << "redlock: " << printable(message) << "\n";
    }
}

namespace {

/// KEY and TOKEN from the command line, as a lock the library can extend or release. The
/// validity is unknown here; the nodes' compare-and-set is what protects other holders.
lock lock_from_arguments(const options& o) {
    return lock(o.positional.at(0), o.positional.at(1), lock::clock::now() + o.ttl,
                to_lock_options(o));
}

bool expect_arguments(const options& o, std::size_t count, const char* shape) {
    if (o.positional.size() != count) {
        std::cerr << "redlock " << o.command << ": expected " << shape << " (see redlock "
                  << o.command << " --help)\n";
        return false;
    }
    return true;
}

long long left_ms(const lock& l) {
    return duration_cast<milliseconds>(l.remaining()).count();
}

/// The acquire, unless SIGINT, SIGTERM or SIGHUP comes first: then the wait stops, the
/// library cleans the attempt up on every node (and a lock granted at that very moment is
/// released), and `interrupted` is the signal.
acquire_result acquire_unless_interrupted(const options& o, std::error_code& ec, int& interrupted) {
    asio::io_context io;
    std::optional<client> locks(std::in_place, io.get_executor(), make_config(o));
    asio::signal_set signals(io, SIGINT, SIGTERM, SIGHUP);
    asio::cancellation_signal stop_waiting;
    signals.async_wait([&](const boost::system::error_code& error, int signal) {
        if (!error) {
            interrupted = signal;
            stop_waiting.emit(asio::cancellation_type::terminal);
        }
    });
    acquire_result result;
    locks->async_acquire(
        o.positional[0], to_lock_options(o),
        asio::bind_cancellation_slot(
            stop_waiting.slot(), [&](boost::system::error_code e, acquire_result r) {
                signals.cancel();
                ec = e;
                result = std::move(r);
                if (interrupted != 0 && !ec) {
                    locks->async_release(result.lock, [&](boost::system::error_code,
                                                          release_result) { locks.reset(); });
                    return;
                }
                locks.reset(); // its shutdown lets the cleanups reach the nodes, then io runs dry
            }));
    io.run();
    return result;
}

} // namespace

int acquire_command(const options& o) {
    if (!expect_arguments(o, 1, "KEY")) {
        return exit_usage;
    }
    std::error_code ec;
    int interrupted = 0;
    auto r = acquire_unless_interrupted(o, ec, interrupted);
    if (interrupted != 0) {
        say(o, std::string("interrupted (") + ::strsignal(interrupted) + ") while waiting for " +
                   o.positional[0]);
        return 128 + interrupted;
    }
    if (ec) {
        say(o, "could not acquire " + o.positional[0] + ": " + r.message);
        return exit_for(ec);
    }
    std::cout << r.lock.token();
    if (o.fence) {
        std::cout << " " << r.lock.fencing_token();
    }
    std::cout << "\n";
    say(o, "acquired " + o.positional[0] + ", valid for " + std::to_string(left_ms(r.lock)) +
               " ms; release with: redlock release " + o.positional[0] + " " + r.lock.token());
    return exit_ok;
}

int extend_command(const options& o) {
    if (!expect_arguments(o, 2, "KEY TOKEN")) {
        return exit_usage;
    }
    blocking_client client(make_config(o));
    std::error_code ec;
    auto r = client.extend(lock_from_arguments(o), o.ttl, ec);
    if (ec) {
        say(o, "could not extend " + o.positional[0] + ": " + r.message);
        return exit_for(ec);
    }
    say(o,
        "extended " + o.positional[0] + ", valid for " + std::to_string(left_ms(r.lock)) + " ms");
    return exit_ok;
}

int release_command(const options& o) {
    if (!expect_arguments(o, 2, "KEY TOKEN")) {
        return exit_usage;
    }
    blocking_client client(make_config(o));
    std::error_code ec;
    auto r = client.release(lock_from_arguments(o), ec);
    if (ec) {
        say(o, "release of " + o.positional[0] + ": " + r.message);
        return exit_for(ec);
    }
    say(o, "released " + o.positional[0] + " on " + std::to_string(r.released) + " of " +
               std::to_string(o.nodes.size()) + " nodes");
    return exit_ok;
}

} // namespace redlock::cli
