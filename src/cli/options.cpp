#include "cli/options.hpp"

#include <charconv>
#include <cstring>
#include <limits>
#include <sstream>

namespace redlock::cli {

using std::chrono::milliseconds;

std::optional<milliseconds> parse_duration(std::string_view text) {
    long long value = 0;
    const auto* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc{} || ptr == text.data() || value < 0) {
        return std::nullopt;
    }
    const std::string_view unit(ptr, static_cast<std::size_t>(end - ptr));
    long long scale = 0;
    if (unit == "ms") {
        scale = 1;
    } else if (unit == "s" || unit.empty()) {
        scale = 1000;
    } else if (unit == "m") {
        scale = 60'000;
    } else if (unit == "h") {
        scale = 3'600'000;
    } else {
        return std::nullopt;
    }
    if (value > std::numeric_limits<long long>::max() / scale) {
        return std::nullopt;
    }
    return milliseconds(value * scale);
}

namespace {

std::vector<std::string> split_nodes(std::string_view list) {
    std::vector<std::string> nodes;
    std::stringstream stream{std::string(list)};
    for (std::string item; std::getline(stream, item, ',');) {
        if (!item.empty()) {
            nodes.push_back(item);
        }
    }
    return nodes;
}

std::optional<int> parse_signal(std::string_view name) {
    struct entry {
        const char* name;
        int number;
    };
    static constexpr entry known[] = {{"TERM", SIGTERM}, {"INT", SIGINT},   {"HUP", SIGHUP},
                                      {"KILL", SIGKILL}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2},
                                      {"QUIT", SIGQUIT}, {"none", 0}};
    if (name.starts_with("SIG")) {
        name.remove_prefix(3);
    }
    for (const auto& e : known) {
        if (name == e.name) {
            return e.number;
        }
    }
    return std::nullopt;
}

std::optional<unsigned> parse_count(std::string_view text, unsigned max) {
    unsigned value = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || ptr != text.data() + text.size() || value > max) {
        return std::nullopt;
    }
    return value;
}

} // namespace

std::optional<options> parse_options(int argc, const char* const* argv,
                                     const char* environment_nodes, std::string& error) {
    options o;
    if (environment_nodes && *environment_nodes) {
        o.nodes = split_nodes(environment_nodes);
    } else {
        o.nodes = split_nodes("127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003,127.0.0.1:7004,"
                              "127.0.0.1:7005");
    }
    int i = 1;
    auto value_of = [&](std::string_view flag) -> std::optional<std::string_view> {
        if (i + 1 >= argc) {
            error = std::string(flag) + " needs a value";
            return std::nullopt;
        }
        return std::string_view(argv[++i]);
    };
    auto duration_of = [&](std::string_view flag, milliseconds& out) {
        auto text = value_of(flag);
        if (!text) {
            return false;
        }
        auto d = parse_duration(*text);
        if (!d) {
            error = std::string(flag) + ": \"" + std::string(*text) +
                    "\" is not a duration (examples: 500ms, 30s, 2m, 1h)";
            return false;
        }
        out = *d;
        return true;
    };
    auto count_of = [&](std::string_view flag, unsigned& out, unsigned max) {
        auto text = value_of(flag);
        if (!text) {
            return false;
        }
        auto n = parse_count(*text, max);
        if (!n) {
            error = std::string(flag) + ": \"" + std::string(*text) +
                    "\" is not a whole number up to " + std::to_string(max);
            return false;
        }
        out = *n;
        return true;
    };
    for (; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--") {
            for (++i; i < argc; ++i) {
                o.child.emplace_back(argv[i]);
            }
            break;
        }
        if (arg == "-h" || arg == "--help") {
            o.command = "help";
            return o;
        }
        bool ok = true;
        if (arg == "--nodes" || arg == "-n") {
            auto text = value_of(arg);
            ok = text.has_value();
            if (ok) {
                o.nodes = split_nodes(*text);
            }
        } else if (arg == "--ttl" || arg == "-t") {
            ok = duration_of(arg, o.ttl);
        } else if (arg == "--wait" || arg == "-w") {
            ok = duration_of(arg, o.wait);
        } else if (arg == "--retries" || arg == "-r") {
            ok = count_of(arg, o.retries, 1'000'000);
        } else if (arg == "--node-timeout") {
            ok = duration_of(arg, o.node_timeout);
        } else if (arg == "--on-loss") {
            auto text = value_of(arg);
            ok = text.has_value();
            if (ok) {
                auto sig = parse_signal(*text);
                if (!sig) {
                    error = "--on-loss: unknown signal \"" + std::string(*text) +
                            "\" (TERM, INT, HUP, KILL, USR1, USR2, QUIT or none)";
                    ok = false;
                } else {
                    o.loss_signal = *sig;
                }
            }
        } else if (arg == "--grace") {
            ok = duration_of(arg, o.grace);
        } else if (arg == "--buyers") {
            ok = count_of(arg, o.buyers, 5000);
        } else if (arg == "--stock") {
            ok = count_of(arg, o.stock, 1'000'000);
        } else if (arg == "--instances") {
            ok = count_of(arg, o.instances, 64);
        } else if (arg == "--fence") {
            o.fence = true;
        } else if (arg == "--no-quarantine") {
            o.quarantine = false;
        } else if (arg == "-q" || arg == "--quiet") {
            o.quiet = true;
        } else if (arg.starts_with("-") && arg.size() > 1) {
            error = "unknown option " + std::string(arg) + " (see redlock --help)";
            ok = false;
        } else if (o.command.empty()) {
            o.command = std::string(arg);
        } else {
            o.positional.emplace_back(arg);
        }
        if (!ok) {
            return std::nullopt;
        }
    }
    if (o.command.empty()) {
        error = "no command given (see redlock --help)";
        return std::nullopt;
    }
    if (o.nodes.empty()) {
        error = "no nodes: pass --nodes host:port,... or set REDLOCK_NODES";
        return std::nullopt;
    }
    if (o.instances == 0 || o.buyers == 0) {
        error = "--buyers and --instances must be at least 1";
        return std::nullopt;
    }
    return o;
}

lock_options to_lock_options(const options& o) {
    lock_options l;
    l.ttl = o.ttl;
    l.node_timeout = o.node_timeout;
    // --wait alone retries until the wait is over; --retries caps it either way.
    l.retry.max_attempts = o.wait.count() > 0 && o.retries == 0 ? 0 : o.retries + 1;
    l.retry.wait_budget = o.wait;
    l.fencing = o.fence;
    return l;
}

std::string usage() {
    return R"(redlock: a distributed lock over independent Redis masters (Redlock).

usage:
  redlock run [options] KEY -- COMMAND [ARGS...]   run COMMAND while holding KEY
  redlock acquire [options] KEY                    take KEY, print its token (and,
                                                   with --fence, its fencing token)
  redlock extend [options] KEY TOKEN               push KEY's expiry to --ttl from now
  redlock release [options] KEY TOKEN              release KEY if TOKEN still holds it
  redlock status [options] KEY [TOKEN]             show KEY on every node
  redlock demo [options]                           replay the flash-sale incident

options:
  -n, --nodes LIST      comma-separated masters (host:port, redis://user:pass@host:port/db,
                        unix:///path); default $REDLOCK_NODES, else 127.0.0.1:7001-7005
  -t, --ttl DUR         lock expiry (default 30s); run renews every ttl/3
  -w, --wait DUR        keep retrying this long when the lock is busy (default 0: one try)
  -r, --retries N       retries after the first attempt (default 0; with --wait, a cap)
      --node-timeout DUR  per-node answer bound (default 50ms)
      --on-loss SIG     run: signal for the command when the lock is lost (default TERM;
                        none to only exit with 79 afterwards)
      --grace DUR       run: then SIGKILL after this (default 5s)
      --fence           acquire, run: also take a fencing token, higher than any earlier
                        holder's (run exports it as $REDLOCK_FENCING_TOKEN)
      --no-quarantine   count votes of nodes that restarted within the TTL (unsafe:
                        a node restarted without persistence forgot its locks)
  -q, --quiet           no messages on stderr
  demo: --buyers N (200), --stock N (100), --instances N (6)

DUR: 500ms, 30s, 2m, 1h, or a number of seconds.

exit status:
  0   success (run: the command's own status; 128+N if it died of signal N)
  64  bad usage            69  too few nodes reachable for a quorum
  70  internal error       75  lock held by another (or granted too slowly)
  79  lock lost, or TOKEN does not hold KEY
  127 run: COMMAND could not be started
)";
}

} // namespace redlock::cli
