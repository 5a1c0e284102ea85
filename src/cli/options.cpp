#include "cli/options.hpp"

#include "client/percent_encoding.hpp"

#include <redlock/node_address.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace redlock::cli {

using std::chrono::milliseconds;

namespace {

/// Milliseconds per unit of a duration; 0 for an unknown unit.
long long milliseconds_per(std::string_view unit) {
    if (unit == "ms") {
        return 1;
    }
    if (unit == "s" || unit.empty()) {
        return 1000;
    }
    if (unit == "m") {
        return 60'000;
    }
    if (unit == "h") {
        return 3'600'000;
    }
    return 0;
}

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

bool is_letter(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

} // namespace

std::optional<milliseconds> parse_duration(std::string_view text, std::string& why) {
    const std::string over_the_limit =
        "is over the limit of " + std::to_string(max_duration.count()) + "ms (about 24 days)";
    if (text.starts_with('-')) {
        why = "is negative";
        return std::nullopt;
    }
    // Decimal digits, an optional fraction, a unit: counted in integers, never in floating
    // point, so that 0.1s is exactly 100ms and no "nan" or "inf" can get in.
    std::size_t at = 0;
    while (at < text.size() && is_digit(text[at])) {
        ++at;
    }
    const std::string_view whole = text.substr(0, at);
    std::string_view fraction;
    if (at < text.size() && text[at] == '.') {
        const std::size_t begin = ++at;
        while (at < text.size() && is_digit(text[at])) {
            ++at;
        }
        fraction = text.substr(begin, at - begin);
    }
    const std::string_view unit = text.substr(at);
    const bool has_number = !whole.empty() || !fraction.empty();
    const long long scale = milliseconds_per(unit);
    if (!has_number || scale == 0) {
        if (has_number && unit.size() > 1 && (unit[0] == 'e' || unit[0] == 'E') &&
            (is_digit(unit[1]) || unit[1] == '+' || unit[1] == '-')) {
            why = "has an exponent: write the number out (1e3s: 1000s)";
        } else if (has_number && std::all_of(unit.begin(), unit.end(), is_letter)) {
            why = "has an unknown unit \"" + std::string(unit) + "\" (ms, s, m or h)";
        } else {
            why = "is not a duration (examples: 500ms, 1.5s, 2m, 1h)";
        }
        return std::nullopt;
    }

    long long count = 0; // of the unit, before the point
    if (!whole.empty()) {
        const auto parsed = std::from_chars(whole.data(), whole.data() + whole.size(), count);
        if (parsed.ec != std::errc{} || count > max_duration.count() / scale) {
            why = over_the_limit;
            return std::nullopt;
        }
    }
    // Trailing zeros say nothing. A fraction of more than 7 significant decimals is never a
    // whole number of milliseconds, not even of an hour (3,600,000 ms = 2^7 * 3^2 * 5^5 ms).
    while (!fraction.empty() && fraction.back() == '0') {
        fraction.remove_suffix(1);
    }
    const std::string finer_than_a_millisecond =
        "is not a whole number of milliseconds (durations count in ms)";
    constexpr std::size_t most_decimals = 7;
    if (fraction.size() > most_decimals) {
        why = finer_than_a_millisecond;
        return std::nullopt;
    }
    long long numerator = 0;
    long long denominator = 1;
    for (const char digit : fraction) {
        numerator = numerator * 10 + (digit - '0');
        denominator *= 10;
    }
    if (numerator * scale % denominator != 0) {
        why = finer_than_a_millisecond;
        return std::nullopt;
    }
    const long long fraction_ms = numerator * scale / denominator;
    const milliseconds total(count * scale + fraction_ms);
    if (total > max_duration) {
        why = over_the_limit;
        return std::nullopt;
    }
    return total;
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
        std::string why;
        auto d = parse_duration(*text, why);
        if (!d) {
            error = std::string(flag) + ": \"" + std::string(*text) + "\" " + why;
            return false;
        }
        out = *d;
        return true;
    };
    auto text_of = [&](std::string_view flag, std::string& out) {
        auto text = value_of(flag);
        if (!text) {
            return false;
        }
        if (text->empty()) {
            error = std::string(flag) + " needs a non-empty value";
            return false;
        }
        out = std::string(*text);
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
        } else if (arg == "--password-file") {
            ok = text_of(arg, o.password_file);
        } else if (arg == "--tls-ca") {
            ok = text_of(arg, o.tls.ca_file);
        } else if (arg == "--tls-ca-dir") {
            ok = text_of(arg, o.tls.ca_directory);
        } else if (arg == "--tls-cert") {
            ok = text_of(arg, o.tls.certificate_file);
        } else if (arg == "--tls-key") {
            ok = text_of(arg, o.tls.private_key_file);
        } else if (arg == "--tls-server-name") {
            ok = text_of(arg, o.tls.server_name);
        } else if (arg == "--tls-insecure-skip-verify") {
            o.tls.dangerously_skip_verification = true;
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
    if (o.tls.certificate_file.empty() != o.tls.private_key_file.empty()) {
        error = "--tls-cert and --tls-key go together (a client certificate and its key)";
        return std::nullopt;
    }
    return o;
}

namespace {

/// The first line of `path`, without its line end. Reads no further than that line (the
/// file may be a pipe: `--password-file <(pass show redis)`), and at most max_password_size.
bool read_password_file(const std::string& path, std::string& password, std::string& error) {
    const std::string flag = "--password-file " + path;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        error = flag + ": " + std::strerror(errno);
        return false;
    }
    std::string line;
    char c = 0;
    ssize_t got = 0;
    while ((got = ::read(fd, &c, 1)) == 1 && c != '\n' && line.size() <= max_password_size) {
        line.push_back(c);
    }
    const int read_error = got < 0 ? errno : 0;
    ::close(fd);
    if (read_error != 0) {
        error = flag + ": " + std::strerror(read_error);
        return false;
    }
    if (!line.empty() && line.back() == '\r') {
        line.pop_back();
    }
    if (line.size() > max_password_size) {
        error = flag + ": the first line is longer than " + std::to_string(max_password_size) +
                " bytes";
        return false;
    }
    if (line.empty()) {
        error = flag + ": the first line is empty (it should hold the password)";
        return false;
    }
    password = std::move(line);
    return true;
}

bool readable(const std::string& path, bool directory, const char* flag, std::string& error) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0 || ::access(path.c_str(), R_OK) != 0) {
        error = std::string(flag) + " " + path + ": " + std::strerror(errno);
        return false;
    }
    if (S_ISDIR(info.st_mode) != directory) {
        error =
            std::string(flag) + " " + path + (directory ? ": not a directory" : ": a directory");
        return false;
    }
    return true;
}

} // namespace

std::string with_password(const std::string& text, std::string_view password) {
    node_address a;
    std::string why;
    if (parse_node_address(text, a, why) || !a.password.empty()) {
        return text;
    }
    const std::string secret = detail::percent_encode(password);
    if (a.kind == node_address::transport::unix_socket) {
        std::string url = "unix://" + a.path + "?password=" + secret;
        if (!a.user.empty()) {
            url += "&user=" + detail::percent_encode(a.user);
        }
        if (a.db != 0) {
            url += "&db=" + std::to_string(a.db);
        }
        return url;
    }
    // An empty user before the colon is the default user: redis://:password@host.
    return std::string(a.tls ? "rediss://" : "redis://") + detail::percent_encode(a.user) + ":" +
           secret + "@" + a.display() + (a.db != 0 ? "/" + std::to_string(a.db) : "");
}

bool load_credentials(options& o, const char* environment_password, std::string& error) {
    std::string password;
    if (!o.password_file.empty()) {
        if (!read_password_file(o.password_file, password, error)) {
            return false;
        }
    } else if (environment_password) {
        password = environment_password;
    }
    if (!password.empty()) {
        for (auto& node : o.nodes) {
            node = with_password(node, password);
        }
    }
    const auto& t = o.tls;
    return (t.ca_file.empty() || readable(t.ca_file, false, "--tls-ca", error)) &&
           (t.ca_directory.empty() || readable(t.ca_directory, true, "--tls-ca-dir", error)) &&
           (t.certificate_file.empty() ||
            readable(t.certificate_file, false, "--tls-cert", error)) &&
           (t.private_key_file.empty() || readable(t.private_key_file, false, "--tls-key", error));
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
      --password-file FILE  password for every node whose address has none: the first
                        line of FILE (default: $REDLOCK_PASSWORD). Keeps it out of argv
      --tls-ca FILE     CA certificates (PEM) that rediss:// nodes are checked against
                        (default: the system's trust store)
      --tls-ca-dir DIR  directory of hashed CA certificates (openssl rehash)
      --tls-cert FILE   client certificate (PEM) for nodes that require mutual TLS
      --tls-key FILE    its private key (PEM); --tls-cert and --tls-key go together
      --tls-server-name NAME  name the nodes' certificates must carry (default: each
                        node's host)
      --tls-insecure-skip-verify  accept any certificate: anyone in the middle can take,
                        hold or steal every lock. Throwaway test setups only; warns
  -q, --quiet           no messages on stderr (the insecure TLS warning still shows)
  demo: --buyers N (200), --stock N (100), --instances N (6)

DUR: 500ms, 1.5s, 2m, 1h, or a number of seconds; whole milliseconds, at most 2147483647ms
(about 24 days).

exit status:
  0   success (run: the command's own status; 128+N if it died of signal N)
  64  bad usage            69  too few nodes reachable for a quorum
  70  internal error       75  lock held by another (or granted too slowly)
  79  lock lost, or TOKEN does not hold KEY
  127 run: COMMAND could not be started
  129, 130, 143  run, acquire: SIGHUP, SIGINT, SIGTERM while waiting for the lock
                 (the attempt is cleaned up on every node, COMMAND never starts)
)";
}

} // namespace redlock::cli
