// acquire, extend, release: one operation each, for shell scripts.
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/json_output.hpp"
#include "cli/progress.hpp"
#include "cli/terminal.hpp"

#include <redlock/blocking_client.hpp>
#include <redlock/client.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

namespace redlock::cli {

namespace asio = boost::asio;
using std::chrono::duration_cast;
using std::chrono::milliseconds;

client_config make_config(const options& o) {
    client_config c;
    c.nodes = o.nodes;
    c.quarantine.enabled = o.quarantine;
    // Every command weighs a restart against the fleet's maximum, as the library does: never
    // against its own --ttl, which says nothing of the locks other clients hold.
    c.fleet_max_ttl = o.max_ttl;
    c.eviction.accept_evicting_nodes = o.accept_evicting_nodes;
    c.tls = o.tls;
    return c;
}

std::string built_in_nodes_note(const options& o) {
    return o.nodes_from == options::source::built_in
               ? " (nodes: the built-in 127.0.0.1:7001-7005, as neither --nodes nor "
                 "REDLOCK_NODES names any)"
               : "";
}

void say(const options& o, const std::string& message) {
    if (!o.quiet) {
        // Messages carry the nodes' own error texts.
        std::cerr << "redlock: " << printable(message) << built_in_nodes_note(o) << "\n";
    }
}

std::string keys_text(std::span<const std::string> keys) {
    std::string text;
    for (const auto& key : keys) {
        text.append(text.empty() ? "" : " ").append(key);
    }
    return text;
}

namespace {

/// KEY... TOKEN: every argument but the last.
std::vector<std::string> keys_before_token(const options& o) {
    return {o.positional.begin(), o.positional.end() - 1};
}

/// KEY... and TOKEN from the command line, as a lock the library can extend or release. The
/// validity is unknown here; the nodes' compare-and-set is what protects other holders.
lock lock_from_arguments(const options& o) {
    auto keys = keys_before_token(o);
    std::sort(keys.begin(), keys.end());
    return lock(std::move(keys), o.positional.back(), lock::clock::now() + o.ttl,
                to_lock_options(o));
}

bool expect_arguments(const options& o, std::size_t least, const char* shape) {
    if (o.positional.size() < least) {
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
    auto config = make_config(o);
    auto attempts = std::make_shared<attempt_counter>();
    config.metrics = attempts;
    std::optional<client> locks(std::in_place, io.get_executor(), config);
    progress_line progress(io.get_executor(), o);
    progress.start(*locks, attempts);
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
        o.positional, to_lock_options(o),
        asio::bind_cancellation_slot(
            stop_waiting.slot(), [&](boost::system::error_code e, acquire_result r) {
                progress.stop();
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

/// The flags that extend and release need to be told again: the mode the lock was taken in.
std::string mode_flags(const options& o) {
    if (o.shared) {
        return " --shared";
    }
    return o.permits != 0 ? " --permits " + std::to_string(o.permits) : "";
}

/// On a terminal, asks before a forced release; anywhere else (scripts) --yes is required,
/// so that nobody deletes a lock by piping something into redlock.
bool confirm_force(const options& o) {
    if (o.yes) {
        return true;
    }
    if (::isatty(STDIN_FILENO) == 0 || ::isatty(STDERR_FILENO) == 0) {
        std::cerr << "redlock release --force: not on a terminal, so nobody can confirm; add "
                     "--yes to delete the lock state of "
                  << printable(keys_text(o.positional)) << " whatever its holder\n";
        return false;
    }
    std::cerr << "Delete the lock state of " << printable(keys_text(o.positional))
              << " on every node, whatever holds it?\n"
                 "Its holder is not told now: one that renews (run, a watchdog) learns it at\n"
                 "its next renewal and signals the loss; until then, and one that does not\n"
                 "renew until it extends or releases, it goes on as if it held the lock.\n"
                 "Type yes to go on: ";
    std::string answer;
    std::getline(std::cin, answer);
    return answer == "yes";
}

int force_release(const options& o) {
    if (!confirm_force(o)) {
        say(o, "nothing deleted");
        return exit_usage;
    }
    asio::io_context io;
    std::optional<client> locks(std::in_place, io.get_executor(), make_config(o));
    std::error_code ec;
    release_result result;
    locks->async_force_release(o.positional, std::max(o.node_timeout, milliseconds(200)),
                               [&](boost::system::error_code e, release_result r) {
                                   ec = e;
                                   result = std::move(r);
                                   locks.reset();
                               });
    io.run();
    if (o.json) {
        auto out = outcome_json(o, o.positional, ec, exit_for(ec), result.message);
        out["forced"] = true;
        out["released"] = result.released;
        out["nodes"] = votes_json(o, result.votes, "nothing to delete");
        print_json(out);
    }
    if (ec) {
        say(o, "forced release of " + keys_text(o.positional) + ": " + result.message);
        return exit_for(ec);
    }
    say(o, "forced release of " + keys_text(o.positional) + ": lock state deleted on " +
               std::to_string(result.released) + " of " + std::to_string(o.nodes.size()) +
               " nodes" + (result.message.empty() ? "" : "; " + result.message));
    return exit_ok;
}

} // namespace

int acquire_command(const options& o) {
    if (!expect_arguments(o, 1, "KEY...")) {
        return exit_usage;
    }
    const auto keys = keys_text(o.positional);
    std::error_code ec;
    int interrupted = 0;
    auto r = acquire_unless_interrupted(o, ec, interrupted);
    const int status = interrupted != 0 ? 128 + interrupted
                       : ec             ? exit_for(ec, static_cast<int>(o.conflict_exit_code))
                                        : exit_ok;
    if (o.json) {
        auto out = outcome_json(o, o.positional, interrupted != 0 ? errc::cancelled : ec, status,
                                interrupted != 0
                                    ? std::string("interrupted (") + ::strsignal(interrupted) + ")"
                                    : r.message);
        add_lock(out, o, r.lock);
        out["attempts"] = r.attempts;
        out["nodes"] = votes_json(o, r.votes, "held by another token");
        print_json(out);
    }
    if (interrupted != 0) {
        say(o, std::string("interrupted (") + ::strsignal(interrupted) + ") while waiting for " +
                   keys);
        return status;
    }
    if (ec) {
        say(o, "could not acquire " + keys + ": " + r.message);
        return status;
    }
    if (!o.json) {
        std::cout << r.lock.token();
        if (o.fence) {
            std::cout << " " << r.lock.fencing_token();
        }
        std::cout << "\n";
    }
    say(o, "acquired " + keys + ", valid for " + std::to_string(left_ms(r.lock)) +
               " ms; release with: redlock release " + keys + " " + r.lock.token() +
               (mode_flags(o).empty() ? ""
                                      : "; extend with: redlock extend" + mode_flags(o) + " " +
                                            keys + " " + r.lock.token()));
    return exit_ok;
}

int extend_command(const options& o) {
    if (!expect_arguments(o, 2, "KEY... TOKEN")) {
        return exit_usage;
    }
    const auto keys = keys_text(keys_before_token(o));
    blocking_client client(make_config(o));
    std::error_code ec;
    auto r = client.extend(lock_from_arguments(o), o.ttl, ec);
    if (ec) {
        say(o, "could not extend " + keys + ": " + r.message);
        return exit_for(ec);
    }
    say(o, "extended " + keys + ", valid for " + std::to_string(left_ms(r.lock)) + " ms");
    return exit_ok;
}

int release_command(const options& o) {
    if (o.force) {
        if (!expect_arguments(o, 1, "--force KEY...")) {
            return exit_usage;
        }
        return force_release(o);
    }
    if (!expect_arguments(o, 2, "KEY... TOKEN")) {
        return exit_usage;
    }
    const auto keys = keys_text(keys_before_token(o));
    blocking_client client(make_config(o));
    std::error_code ec;
    auto r = client.release(lock_from_arguments(o), ec);
    if (o.json) {
        const auto key_list = keys_before_token(o);
        auto out = outcome_json(o, key_list, ec, exit_for(ec), r.message);
        out["forced"] = false;
        out["token"] = o.positional.back();
        out["released"] = r.released;
        out["nodes"] = votes_json(o, r.votes, "the token does not hold it");
        print_json(out);
    }
    if (ec == errc::lock_lost) {
        // The library's words are the holder's ("lock is no longer held"); here somebody
        // handed us a token, and the lock may well be held, by another.
        std::string_view detail = r.message;
        if (const auto prefix = ec.message() + ": "; detail.starts_with(prefix)) {
            detail.remove_prefix(prefix.size());
        }
        say(o, "release of " + keys + ": not released: the token " + o.positional.back() +
                   " does not hold it on a quorum (it expired, was released already, or the "
                   "lock is another holder's): " +
                   std::string(detail));
        return exit_for(ec);
    }
    if (ec) {
        say(o, "release of " + keys + ": " + r.message);
        return exit_for(ec);
    }
    // A release completes at a quorum of deletes; the rest were sent and are on their way.
    const auto pending = std::count_if(r.votes.begin(), r.votes.end(), [](const node_vote& v) {
        return v.outcome == node_outcome::pending;
    });
    say(o, "released " + keys + ": deleted on " + std::to_string(r.released) + " of " +
               std::to_string(o.nodes.size()) + " nodes when the quorum was reached" +
               (pending > 0 ? "; the deletes sent to the other " + std::to_string(pending) +
                                  " were still on their way"
                            : ""));
    return exit_ok;
}

} // namespace redlock::cli
