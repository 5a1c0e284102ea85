#include "cli/options.hpp"

#include "client/percent_encoding.hpp"

#include <redlock/node_address.hpp>

#include <boost/program_options.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iostream>
#include <optional>
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
    if (unit == "s") {
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
    if (text.size() > 1 && text[0] == '-' && (is_digit(text[1]) || text[1] == '.')) {
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
    // `-t 5 minutes` must not take 5 s and a key named "minutes": a number needs its unit
    // (zero alone is zero in every unit).
    if (has_number && unit.empty() &&
        !std::all_of(text.begin(), text.end(), [](char c) { return c == '0' || c == '.'; })) {
        why = "has no unit: write it with one of ms, s, m or h (examples: 500ms, 1.5s, 2m, 1h)";
        return std::nullopt;
    }
    const long long scale = unit.empty() ? 1 : milliseconds_per(unit);
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

namespace po = boost::program_options;

/// Commas separate the nodes, and inside a Sentinel address (up to its `#master-name`) its
/// Sentinels: `redis-sentinel://s1,s2,s3#a,redis-sentinel://s1,s2,s3#b,10.0.0.9:6379`. A list
/// with a Sentinel address and a `;` is split at `;` only (for a master name that holds a
/// comma); in a list without one, a `;` is a character like any other (in a password).
std::vector<std::string> split_nodes(std::string_view list) {
    std::vector<std::string> nodes;
    const bool semicolons = list.find(';') != std::string_view::npos &&
                            list.find("-sentinel://") != std::string_view::npos;
    while (!list.empty()) {
        std::size_t end = std::string_view::npos;
        if (semicolons) {
            end = list.find(';');
        } else if (list.starts_with("redis-sentinel://") ||
                   list.starts_with("rediss-sentinel://")) {
            const auto hash = list.find('#');
            end = hash == std::string_view::npos ? std::string_view::npos : list.find(',', hash);
        } else {
            end = list.find(',');
        }
        if (end != 0) {
            nodes.emplace_back(list.substr(0, end));
        }
        list = end == std::string_view::npos ? std::string_view() : list.substr(end + 1);
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

// Each subcommand is a bit, so that an option can say where it applies.
enum subcommand_bit : unsigned {
    for_run = 1U << 0,
    for_acquire = 1U << 1,
    for_extend = 1U << 2,
    for_release = 1U << 3,
    for_status = 1U << 4,
    for_demo = 1U << 5,
    for_nodes = 1U << 6,
};
/// The options that make the client: which nodes, how to reach them, how to count their
/// votes, how much to say. Every subcommand takes them, so that one set serves every call of
/// a script, even where one of them changes nothing (--no-quarantine for status).
constexpr unsigned for_every_command =
    for_run | for_acquire | for_extend | for_release | for_status | for_demo | for_nodes;

struct subcommand {
    std::string_view name;
    std::string_view arguments; ///< what follows [options] on its usage line
    std::string_view summary;   ///< its line in the overview
    std::string_view details;   ///< the paragraph of its own help
    unsigned bit;
};

constexpr subcommand subcommands[] = {
    {"run", "KEY... -- COMMAND [ARGS...]", "run COMMAND while holding KEY",
     "Acquires KEY (retrying per --wait and --retries), starts COMMAND in its own\n"
     "process group with $REDLOCK_KEY and $REDLOCK_TOKEN set, renews the lock every\n"
     "ttl/3 while it runs, releases it when COMMAND exits, and exits with COMMAND's\n"
     "status. If the lock is lost, the process group gets --on-loss, then SIGKILL\n"
     "after --grace, and redlock exits 79. The -- before COMMAND is required.\n"
     "Several keys are taken all at once ($REDLOCK_KEYS lists them, one per line);\n"
     "--shared holds KEY as one of many readers (plain run is the writer), and\n"
     "--permits N as one of at most N holders of a semaphore.",
     for_run},
    {"acquire", "KEY...", "take KEY, print its token",
     "Takes KEY (retrying per --wait and --retries) and prints its token on stdout,\n"
     "then, with --fence, the fencing token. Nothing renews the lock: it stays until\n"
     "released or expired. Several keys are taken all at once; --shared and\n"
     "--permits as for run.",
     for_acquire},
    {"extend", "KEY... TOKEN", "push KEY's expiry to --ttl from now",
     "Sets the expiry of KEY to --ttl from now on every node where TOKEN still holds\n"
     "it; exits 79 unless a quorum of nodes does. A reader or a permit holder needs\n"
     "the --shared or --permits it was acquired with.",
     for_extend},
    {"release", "KEY... TOKEN | --force KEY...", "release KEY if TOKEN still holds it",
     "Deletes KEY on every node where TOKEN holds it (never another holder's); exits\n"
     "79 when TOKEN does not hold KEY. Works for every kind of lock.\n"
     "--force deletes the lock state of KEY on every node whatever the token: the\n"
     "holder is NOT told now: one that renews (run, a watchdog) learns it at its next\n"
     "renewal and signals the loss; until then, and one that does not renew until it\n"
     "extends or releases, it believes it holds the lock, so two holders can\n"
     "overlap. For an operator clearing a lock whose holder is known to be\n"
     "dead. Asks for confirmation on a terminal (--yes skips it); leaves fencing\n"
     "counters alone.",
     for_release},
    {"status", "KEY... [TOKEN]", "show KEY on every node",
     "Reads KEY on every node and shows, per node, whether it is free or held (the\n"
     "token, the time left), refused or unreachable; with TOKEN, whether each node\n"
     "holds that token. Several keys are a lock over several keys, each shown under\n"
     "its name. The last argument is TOKEN when it is one: 32 lowercase hex digits,\n"
     "as acquire prints it (or give it with --token); one that only looks like a\n"
     "token is a usage error. Exits 69 when fewer than a quorum could answer for a\n"
     "key, and with TOKEN, 79 unless a quorum holds it for every key.",
     for_status},
    {"nodes", "", "show what each node is, and if its votes count",
     "Asks every node what an operator looks at first and prints one line per node:\n"
     "reachable or not (and why), role, server version, run_id, uptime, persistence\n"
     "(aof_enabled from INFO; the save points and appendfsync from CONFIG GET),\n"
     "maxmemory-policy, the clock (not measured yet), the restart quarantine with the\n"
     "time left, whether its votes count now (and why not), and TLS. A field the\n"
     "node's ACL refuses reads \"unknown (not permitted)\". Exits 69 when fewer than a\n"
     "quorum of nodes answered.",
     for_nodes},
    {"demo", "", "replay the flash-sale incident",
     "Sells --stock units to --buyers concurrent buyers on --instances simulated\n"
     "service instances, once per lock strategy, and prints the orders, units\n"
     "oversold and locks lost of each. The stock lives on the first node; the\n"
     "demo's keys are removed afterwards.",
     for_demo},
};

const subcommand* find_subcommand(std::string_view name) {
    for (const auto& s : subcommands) {
        if (s.name == name) {
            return &s;
        }
    }
    return nullptr;
}

/// "run, acquire or extend": the subcommands in `where`.
std::string subcommand_names(unsigned where) {
    std::vector<std::string_view> names;
    for (const auto& s : subcommands) {
        if ((where & s.bit) != 0) {
            names.push_back(s.name);
        }
    }
    std::string text;
    for (std::size_t i = 0; i < names.size(); ++i) {
        text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + std::string(names[i]);
    }
    return text;
}

/// How one option's value lands in `options`; false, with `error`, when it does not fit.
/// `flag` names the option in messages (`--ttl`); flags get an empty `value`.
using option_setter = bool (*)(options& o, const std::string& flag, const std::string& value,
                               std::string& error);

template <milliseconds options::*field>
bool set_duration(options& o, const std::string& flag, const std::string& value,
                  std::string& error) {
    std::string why;
    const auto d = parse_duration(value, why);
    if (!d) {
        error = flag + ": \"" + value + "\" " + why;
        return false;
    }
    o.*field = *d;
    return true;
}

/// --max-ttl and $REDLOCK_MAX_TTL: a duration, but never zero (no lock could be taken).
bool set_max_ttl(options& o, const std::string& flag, const std::string& value,
                 std::string& error) {
    if (!set_duration<&options::max_ttl>(o, flag, value, error)) {
        return false;
    }
    if (o.max_ttl == milliseconds::zero()) {
        error = flag + ": must be above 0 (the longest lock any client of these nodes takes)";
        return false;
    }
    return true;
}

template <unsigned options::*field, unsigned least, unsigned most>
bool set_count(options& o, const std::string& flag, const std::string& value, std::string& error) {
    unsigned count = 0;
    const auto* end = value.data() + value.size();
    const auto parsed = std::from_chars(value.data(), end, count);
    if (parsed.ec != std::errc{} || parsed.ptr != end || count < least || count > most) {
        error = flag + ": \"" + value + "\" is not a whole number from " + std::to_string(least) +
                " to " + std::to_string(most);
        return false;
    }
    o.*field = count;
    return true;
}

/// A name (of a file, a server): empty would only fail later, and less clearly.
bool set_name(std::string& field, const std::string& flag, const std::string& value,
              std::string& error) {
    if (value.empty()) {
        error = flag + " needs a non-empty value";
        return false;
    }
    field = value;
    return true;
}

template <std::string options::*field>
bool set_text(options& o, const std::string& flag, const std::string& value, std::string& error) {
    return set_name(o.*field, flag, value, error);
}

template <std::string tls_options::*field>
bool set_tls_text(options& o, const std::string& flag, const std::string& value,
                  std::string& error) {
    return set_name(o.tls.*field, flag, value, error);
}

template <bool options::*field, bool to>
bool set_flag(options& o, const std::string&, const std::string&, std::string&) {
    o.*field = to;
    return true;
}

bool set_nodes(options& o, const std::string&, const std::string& value, std::string&) {
    o.nodes = split_nodes(value);
    o.nodes_from = options::source::flag;
    return true;
}

bool set_loss_signal(options& o, const std::string& flag, const std::string& value,
                     std::string& error) {
    const auto number = parse_signal(value);
    if (!number) {
        error = flag + ": unknown signal \"" + value +
                "\" (TERM, INT, HUP, KILL, USR1, USR2, QUIT or none)";
        return false;
    }
    o.loss_signal = *number;
    return true;
}

bool set_insecure(options& o, const std::string&, const std::string&, std::string&) {
    o.tls.dangerously_skip_verification = true;
    return true;
}

struct option_spec {
    const char* names;      ///< as program_options takes them: "ttl,t"
    const char* value_name; ///< in the help: DUR, N, FILE...; empty for a flag
    unsigned applies_to;    ///< subcommand bits
    const char* description;
    option_setter set;
};

const option_spec option_specs[] = {
    {"nodes,n", "LIST", for_every_command,
     "comma-separated masters: host:port, redis://user:pass@host:port/db, rediss://..., "
     "unix:///path (default: $REDLOCK_NODES, else 127.0.0.1:7001-7005)",
     set_nodes},
    {"password-file", "FILE", for_every_command,
     "password for every node whose address has none: the first line of FILE (default: "
     "$REDLOCK_PASSWORD); keeps it out of argv",
     set_text<&options::password_file>},
    {"node-credentials", "FILE", for_every_command,
     "each node's own credentials, one line per node: ADDRESS [USER] PASSWORD (default: "
     "$REDLOCK_NODE_CREDENTIALS_FILE); before --password-file, keeps them out of argv",
     set_text<&options::node_credentials_file>},
    {"tls-ca", "FILE", for_every_command,
     "CA certificates (PEM) that rediss:// nodes are checked against (default: the system's "
     "trust store)",
     set_tls_text<&tls_options::ca_file>},
    {"tls-ca-dir", "DIR", for_every_command, "directory of hashed CA certificates (openssl rehash)",
     set_tls_text<&tls_options::ca_directory>},
    {"tls-cert", "FILE", for_every_command,
     "client certificate (PEM) for nodes that require mutual TLS; goes with --tls-key",
     set_tls_text<&tls_options::certificate_file>},
    {"tls-key", "FILE", for_every_command, "the client certificate's private key (PEM)",
     set_tls_text<&tls_options::private_key_file>},
    {"tls-server-name", "NAME", for_every_command,
     "name sent as SNI and required in the nodes' certificates (default: each node's host)",
     set_tls_text<&tls_options::server_name>},
    {"tls-insecure-skip-verify", "", for_every_command,
     "accept any certificate: anyone in the middle can take, hold or steal every lock. "
     "Throwaway test setups only; warns on every run",
     set_insecure},
    {"no-quarantine", "", for_every_command,
     "count the votes of nodes restarted within the TTL (unsafe: a node restarted without "
     "persistence forgot its locks); for test setups that restart nodes",
     set_flag<&options::quarantine, false>},
    {"accept-evicting-nodes", "", for_every_command,
     "count the votes of nodes that can evict keys (maxmemory with a policy other than "
     "noeviction; unsafe: an evicted lock key is a forgotten lock, the double grant the veto "
     "prevents)",
     set_flag<&options::accept_evicting_nodes, true>},
    {"quiet,q", "", for_every_command,
     "none of redlock's notes on stderr (usage errors and the --tls-insecure-skip-verify "
     "warning still show)",
     set_flag<&options::quiet, true>},
    {"ttl,t", "DUR", for_run | for_acquire | for_extend,
     "lock expiry (default 30s, at most --max-ttl)", set_duration<&options::ttl>},
    {"max-ttl", "DUR", for_every_command & ~for_demo,
     "the longest --ttl any client of these nodes uses, the same on all of them; a restarted "
     "node's votes count again after this (default: $REDLOCK_MAX_TTL, else 60s)",
     set_max_ttl},
    {"wait,w", "DUR", for_run | for_acquire,
     "keep retrying this long while the lock is busy (default 0: one try)",
     set_duration<&options::wait>},
    {"retries,r", "N", for_run | for_acquire,
     "retries after the first attempt (default 0; with --wait, a cap)",
     set_count<&options::retries, 0, 1'000'000>},
    {"conflict-exit-code,E", "N", for_run | for_acquire,
     "exit status when the lock cannot be had now: held by another, granted too slowly, or "
     "nodes in restart quarantine (default 75; 1 to 255). For run, pick one its COMMAND "
     "never exits with: run passes COMMAND's own status through",
     set_count<&options::conflict_exit_code, 1, 255>},
    {"node-timeout", "DUR",
     for_run | for_acquire | for_extend | for_release | for_status | for_nodes,
     "per-node answer bound (default: $REDLOCK_NODE_TIMEOUT, else 50ms; status and nodes "
     "wait at least 200ms)",
     set_duration<&options::node_timeout>},
    {"shared", "", for_run | for_acquire | for_extend,
     "hold KEY as one of many readers of a read-write lock; new readers wait while a writer "
     "(a plain run or acquire) waits",
     set_flag<&options::shared, true>},
    {"permits", "N", for_run | for_acquire | for_extend,
     "hold one of N permits of the semaphore KEY; every holder must give the same N",
     set_count<&options::permits, 1, max_permits>},
    {"force", "", for_release,
     "delete the lock state whatever the token (dangerous: see redlock release --help)",
     set_flag<&options::force, true>},
    {"yes", "", for_release, "with --force: do not ask for confirmation",
     set_flag<&options::yes, true>},
    {"token", "TOKEN", for_status,
     "the token to look for (as acquire printed it: 32 lowercase hex digits); the same as "
     "a TOKEN after the keys",
     set_text<&options::token>},
    {"json", "", for_acquire | for_release | for_status | for_nodes,
     "print the outcome as one JSON object on stdout (see docs/cli.md): the outcome, the "
     "token, the fencing token, the validity and every node's answer; messages stay on stderr",
     set_flag<&options::json, true>},
    {"fence", "", for_run | for_acquire,
     "also take a fencing token, higher than any earlier holder's: acquire prints it after "
     "the token, run exports it as $REDLOCK_FENCING_TOKEN",
     set_flag<&options::fence, true>},
    {"on-loss", "SIG", for_run,
     "signal for the command's process group when the lock is lost: TERM (default), INT, "
     "HUP, KILL, USR1, USR2, QUIT, or none (then only exit 79 once the command ends)",
     set_loss_signal},
    {"grace", "DUR", for_run, "then SIGKILL after this (default 5s)",
     set_duration<&options::grace>},
    {"buyers", "N", for_demo, "concurrent buyers (default 200)",
     set_count<&options::buyers, 1, 5000>},
    {"stock", "N", for_demo, "units for sale (default 100)",
     set_count<&options::stock, 0, 1'000'000>},
    {"instances", "N", for_demo, "simulated service instances (default 6)",
     set_count<&options::instances, 1, 64>},
};

/// What an option means for one subcommand where the same words would mislead another's
/// help: --ttl is renewed by run, left alone by acquire, set anew by extend.
struct description_for_subcommand {
    std::string_view option; ///< its long name
    unsigned bit;
    const char* description;
};

constexpr description_for_subcommand descriptions_for_subcommands[] = {
    {"ttl", for_run,
     "lock expiry (default 30s, at most --max-ttl); renewed every ttl/3 while COMMAND runs, "
     "so it only bounds how long the lock outlives a redlock that stops renewing"},
    {"ttl", for_acquire,
     "lock expiry (default 30s, at most --max-ttl); nothing renews it: it stays until "
     "released or expired (extend pushes it)"},
    {"ttl", for_extend, "the new expiry, from now (default 30s, at most --max-ttl)"},
};

/// "ttl" of "ttl,t": the key program_options gives a parsed option.
std::string_view long_name(const option_spec& spec) {
    const std::string_view names = spec.names;
    return names.substr(0, names.find(','));
}

const option_spec* find_option(std::string_view key) {
    for (const auto& spec : option_specs) {
        if (long_name(spec) == key) {
            return &spec;
        }
    }
    return nullptr;
}

/// Adds `spec` to `into`, described as for the subcommand `bit` (0: for any).
void describe(po::options_description& into, const option_spec& spec, unsigned bit = 0) {
    const char* description = spec.description;
    for (const auto& d : descriptions_for_subcommands) {
        if (d.bit == bit && d.option == long_name(spec)) {
            description = d.description;
        }
    }
    if (*spec.value_name != '\0') {
        into.add_options()(spec.names, po::value<std::string>()->value_name(spec.value_name),
                           description);
    } else {
        into.add_options()(spec.names, description);
    }
}

/// Every option, for parsing: one that a subcommand does not take is still recognised (and
/// its value consumed), so that the error can say where it belongs.
const po::options_description& every_option() {
    static const po::options_description all = [] {
        po::options_description d;
        d.add_options()("help,h", "this help; with a subcommand, that subcommand's")(
            "version,V", "print the version");
        for (const auto& spec : option_specs) {
            describe(d, spec);
        }
        return d;
    }();
    return all;
}

/// GNU getopt's forms (-t 30s, -t30s, --ttl 30s, --ttl=30s, -qt 30s), but no abbreviations:
/// with them, --no would mean --no-quarantine until a second --no-something came along.
constexpr int command_line_style =
    po::command_line_style::unix_style & ~po::command_line_style::allow_guessing;

/// How program_options refused an option's value, said the way the other errors are.
std::string syntax_error(const po::invalid_command_line_syntax& e) {
    const std::string option = e.get_option_name();
    switch (e.kind()) {
    case po::invalid_syntax::missing_parameter:
        return option + " needs a value";
    case po::invalid_syntax::extra_parameter:
        return option + " takes no value";
    case po::invalid_syntax::empty_adjacent_parameter:
        return option + " needs a value after the =";
    default:
        return std::string(e.what()) + " (see redlock --help)";
    }
}

/// An option program_options does not know, as the user wrote it: it keeps a long option's
/// name without the dashes, a short one with its dash.
std::string unknown_name(const po::option& unknown) {
    const bool long_form =
        !unknown.original_tokens.empty() && unknown.original_tokens.front().starts_with("--");
    return long_form ? "--" + unknown.string_key : unknown.string_key;
}

bool is_positional(const po::option& parsed) {
    return parsed.position_key >= 0;
}

/// Whether `parsed` took its value from the next word, and that word is one of our long
/// options: `--ttl --wait 5s`. program_options refuses a short option there (`--ttl -w 5s`)
/// but takes a long one as the value.
bool took_an_option_as_value(const po::option& parsed) {
    if (parsed.original_tokens.size() < 2 || !parsed.value.front().starts_with("--")) {
        return false;
    }
    const std::string& word = parsed.value.front();
    const auto name = word.substr(2, word.find('=') - 2);
    // `--` or `--=x` names no option; program_options takes an empty name as a prefix of
    // every option and throws ambiguous_option, even from find_nothrow (the config fuzzer
    // found `--nodes --=x` ending the process).
    return !name.empty() && every_option().find_nothrow(name, false) != nullptr;
}

/// `word` as a POSIX shell reads it back: as it is when that is safe, else in single quotes.
std::string shell_quoted(const std::string& word) {
    const auto plain = [](char c) {
        return is_digit(c) || is_letter(c) ||
               std::string_view("@%+=:,./_-").find(c) != std::string_view::npos;
    };
    if (!word.empty() && std::all_of(word.begin(), word.end(), plain)) {
        return word;
    }
    std::string quoted = "'";
    for (const char c : word) {
        quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return quoted + "'";
}

/// How program_options reads `words`: our options, unknown options and plain words, in
/// order. Throws po::error on a malformed option of ours. An unknown option comes back
/// marked, in place, rather than as an exception: whether it is a typo or the first word of
/// run's command depends on where it stands.
std::vector<po::option> read_words(const std::vector<std::string>& words) {
    return po::command_line_parser(words)
        .options(every_option())
        .style(command_line_style)
        .allow_unregistered()
        .run()
        .options;
}

/// run's COMMAND written without the -- before it (`redlock run KEY sh -c 'echo hi'`): the
/// error that shows the user's own command line with the -- in place, or empty when `words`
/// hold no such COMMAND. It starts at the first word after KEY that is not one of our
/// options: a plain word, or an option we do not know (`redlock run KEY -c ...`). The words
/// are read one at a time, before the whole is parsed, so that none of the command's own
/// options is taken for ours (tail -n 5 is no --nodes 5, ls --help no call for our help).
std::optional<std::string>
missing_separator(const std::vector<std::string>& words,
                  const std::optional<std::vector<std::string>>& after_separator) {
    std::vector<std::string> positional;        // the subcommand, then KEY
    std::optional<std::size_t> first_extra_key; // the first word after KEY taken as a KEY
    for (std::size_t i = 0; i < words.size(); ++i) {
        std::vector<po::option> read;
        try {
            read = read_words({words[i]});
        } catch (const po::invalid_command_line_syntax& e) {
            if (e.kind() == po::invalid_syntax::missing_parameter) {
                ++i; // an option of ours whose value is the next word
                continue;
            }
            return std::nullopt; // a mistake of its own, which the full parse reports
        } catch (const po::error&) {
            return std::nullopt;
        }
        const bool plain = is_positional(read.front());
        const auto unknown = std::find_if(read.begin(), read.end(),
                                          [](const po::option& p) { return p.unregistered; });
        const bool after_key = positional.size() >= 2 && positional.front() == "run";
        if (!after_key && unknown != read.end()) {
            // Whether it takes the next word as its value is anybody's guess, and so is
            // which word is KEY: the full parse reports the option alone.
            return std::nullopt;
        }
        if (after_key && plain && after_separator) {
            // One more KEY, the command being after the --; unless one of the command's own
            // options follows (`run k sh -c x -- y`): then the command started here.
            first_extra_key = first_extra_key.value_or(i);
            continue;
        }
        if (after_key && (plain || unknown != read.end())) {
            const std::size_t at = first_extra_key.value_or(i);
            const bool command_word = plain || first_extra_key.has_value();
            std::string line = "redlock";
            for (std::size_t w = 0; w < words.size(); ++w) {
                line += (w == at ? " -- " : " ") + shell_quoted(words[w]);
            }
            if (after_separator) {
                line += " --";
                for (const auto& w : *after_separator) {
                    line += " " + shell_quoted(w);
                }
            }
            const std::string hint = "put -- before the command: " + line;
            return command_word ? hint
                                : "unknown option " + unknown_name(*unknown) +
                                      " for run; if it is the command's, " + hint;
        }
        if (plain) {
            positional.push_back(words[i]);
            if (positional.front() != "run") {
                return std::nullopt;
            }
        }
    }
    return std::nullopt;
}

} // namespace

std::optional<options> parse_options(int argc, const char* const* argv,
                                     const char* environment_nodes, std::string& error,
                                     const char* environment_max_ttl,
                                     const char* environment_node_timeout) {
    options o;
    // REDLOCK_NODES set but empty (an unset variable in a deployment script) is no request for
    // the built-in nodes: it is an error below unless --nodes names some.
    if (environment_nodes) {
        o.nodes = split_nodes(environment_nodes);
        o.nodes_from = options::source::environment;
    } else {
        o.nodes = split_nodes(built_in_nodes);
    }
    if (environment_max_ttl && *environment_max_ttl &&
        !set_max_ttl(o, "$REDLOCK_MAX_TTL", environment_max_ttl, error)) {
        return std::nullopt;
    }
    // Set once for a slow link (TLS across zones, a loaded host) instead of on every call.
    if (environment_node_timeout && *environment_node_timeout &&
        !set_duration<&options::node_timeout>(o, "$REDLOCK_NODE_TIMEOUT", environment_node_timeout,
                                              error)) {
        return std::nullopt;
    }
    // The first -- ends the options. What follows is run's command word for word, and the
    // other subcommands' arguments (a KEY that starts with -): program_options never sees it.
    std::vector<std::string> words;
    int at = 1;
    for (; at < argc && std::string_view(argv[at]) != "--"; ++at) {
        words.emplace_back(argv[at]);
    }
    std::optional<std::vector<std::string>> after_separator;
    if (at < argc) {
        after_separator.emplace(argv + at + 1, argv + argc);
    }

    if (auto hint = missing_separator(words, after_separator)) {
        error = std::move(*hint);
        return std::nullopt;
    }

    std::vector<po::option> parsed;
    try {
        parsed = read_words(words);
    } catch (const po::invalid_command_line_syntax& e) {
        error = syntax_error(e);
        return std::nullopt;
    } catch (const po::error& e) {
        error = std::string(e.what()) + " (see redlock --help)";
        return std::nullopt;
    }

    std::vector<std::string> positional; // the subcommand, then its arguments
    bool wants_help = false;
    bool wants_version = false;
    for (const auto& p : parsed) {
        if (is_positional(p)) {
            positional.push_back(p.value.front());
        }
        wants_help = wants_help || p.string_key == "help";
        wants_version = wants_version || p.string_key == "version";
    }
    const std::string name = positional.empty() ? "" : positional.front();
    if (wants_help || name == "help") {
        // redlock --help, redlock help [SUBCOMMAND], redlock SUBCOMMAND --help
        o.command = "help";
        o.help_topic = name != "help" ? name : positional.size() > 1 ? positional[1] : "";
        if (!o.help_topic.empty() && !find_subcommand(o.help_topic)) {
            error = "unknown command \"" + o.help_topic + "\" (see redlock --help)";
            return std::nullopt;
        }
        return o;
    }
    if (wants_version) {
        o.command = "version";
        return o;
    }
    if (name.empty()) {
        const auto unknown = std::find_if(parsed.begin(), parsed.end(),
                                          [](const po::option& p) { return p.unregistered; });
        error = unknown != parsed.end() ? "unknown option " + unknown_name(*unknown)
                                        : std::string("no command given");
        error += " (see redlock --help)";
        return std::nullopt;
    }
    const subcommand* const sub = find_subcommand(name);
    if (!sub) {
        error = "unknown command \"" + name + "\" (see redlock --help)";
        return std::nullopt;
    }
    o.command = name;
    o.positional.assign(positional.begin() + 1, positional.end());

    const std::string see = " (see redlock " + name + " --help)";
    for (const auto& p : parsed) {
        if (is_positional(p)) {
            continue;
        }
        if (p.unregistered) {
            error = "unknown option " + unknown_name(p) + " for " + name + see;
            return std::nullopt;
        }
        const option_spec* const spec = find_option(p.string_key);
        const std::string flag = "--" + p.string_key;
        if ((spec->applies_to & sub->bit) == 0) {
            error = flag + " does not apply to " + name + ", only to " +
                    subcommand_names(spec->applies_to) + see;
            return std::nullopt;
        }
        if (took_an_option_as_value(p)) {
            error = flag + " needs a value";
            return std::nullopt;
        }
        // The last of a repeated option wins, as it always has (an alias can set a default
        // that the command line then overrides).
        if (!spec->set(o, flag, p.value.empty() ? "" : p.value.front(), error)) {
            return std::nullopt;
        }
    }
    if (after_separator) {
        auto& into = sub->bit == for_run ? o.child : o.positional;
        into.insert(into.end(), after_separator->begin(), after_separator->end());
    }
    if (o.nodes.empty()) {
        error = o.nodes_from == options::source::environment
                    ? "no nodes: REDLOCK_NODES is set but names none; set it to host:port,... "
                      "(or unset it for the built-in 127.0.0.1:7001-7005), or pass --nodes"
                    : "no nodes: pass --nodes host:port,... or set REDLOCK_NODES";
        return std::nullopt;
    }
    if (o.tls.certificate_file.empty() != o.tls.private_key_file.empty()) {
        error = "--tls-cert and --tls-key go together (a client certificate and its key)";
        return std::nullopt;
    }
    if (o.shared && o.permits != 0) {
        error = "--shared and --permits exclude each other (a reader, or a semaphore's holder)";
        return std::nullopt;
    }
    if (o.yes && !o.force) {
        error = "--yes goes with --force only";
        return std::nullopt;
    }
    if ((sub->bit & (for_run | for_acquire | for_extend)) != 0 && o.ttl > o.max_ttl) {
        // The restart quarantine of every client lasts the fleet's maximum: a longer lock
        // could be granted twice after a node restart.
        error = "--ttl of " + std::to_string(o.ttl.count()) + " ms is above --max-ttl of " +
                std::to_string(o.max_ttl.count()) +
                " ms, the longest lock of these nodes' clients: pass a shorter --ttl (run "
                "renews it), or raise --max-ttl (or $REDLOCK_MAX_TTL) on every client of "
                "these nodes";
        return std::nullopt;
    }
    return o;
}

namespace {

/// A regular file of secrets that its group or everyone may read is said so, on stderr (a
/// pipe or a process substitution is not a file others can open later).
void warn_if_others_may_read(const struct stat& info, const std::string& flag) {
    if (S_ISREG(info.st_mode) && (info.st_mode & (S_IRGRP | S_IROTH)) != 0) {
        std::cerr << "redlock: warning: " << flag << " may be read by "
                  << ((info.st_mode & S_IROTH) != 0 ? "every user" : "its group")
                  << " (chmod 600 it)\n";
    }
}

/// The first line of `path`, without its line end. Reads no further than that line (the
/// file may be a pipe: `--password-file <(pass show redis)`), and at most max_password_size.
bool read_password_file(const std::string& path, std::string& password, std::string& error) {
    const std::string flag = "--password-file " + path;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        error = flag + ": " + std::strerror(errno);
        return false;
    }
    if (struct stat info{}; ::fstat(fd, &info) == 0) {
        warn_if_others_may_read(info, flag);
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

std::string with_password(const std::string& text, std::string_view password,
                          std::string_view user) {
    node_address a;
    std::string why;
    if (parse_node_address(text, a, why) || !a.password.empty()) {
        return text;
    }
    if (!user.empty()) {
        a.user = user;
    }
    const std::string secret = detail::percent_encode(password);
    if (a.kind == node_address::transport::sentinel) {
        // The data node's credentials go before the Sentinels; an `@` there already held
        // only the user (`user:@`).
        const auto scheme_end = text.find("://") + 3;
        const auto authority_end = text.find_first_of("/?#", scheme_end);
        const auto at = text.rfind('@', authority_end);
        const auto hosts = at == std::string::npos || at < scheme_end ? scheme_end : at + 1;
        return text.substr(0, scheme_end) + detail::percent_encode(a.user) + ":" + secret + "@" +
               text.substr(hosts);
    }
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

namespace {

/// `--node-credentials FILE`: one line per node, `ADDRESS [USER] PASSWORD`, fields separated
/// by spaces or tabs; blank lines and lines starting with `#` are skipped. ADDRESS is written
/// as in the node list, without credentials, and must name one of its nodes (the same server,
/// whatever its user or database); a node gets at most one line. An error names the line by
/// its number, never by its text.
bool read_node_credentials(const std::string& path, std::vector<std::string>& nodes,
                           std::string& error) {
    const std::string flag = "--node-credentials " + path;
    std::ifstream in(path);
    if (!in) {
        error = flag + ": " + std::strerror(errno);
        return false;
    }
    if (struct stat info{}; ::stat(path.c_str(), &info) == 0) {
        warn_if_others_may_read(info, flag);
    }
    std::vector<std::optional<node_address>> listed(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        node_address a;
        std::string why;
        if (!parse_node_address(nodes[i], a, why)) {
            listed[i] = a;
        }
    }
    std::vector<bool> given(nodes.size(), false);
    std::string line;
    for (std::size_t number = 1; std::getline(in, line); ++number) {
        const std::string where = flag + " line " + std::to_string(number) + ": ";
        std::istringstream fields_in(line);
        std::vector<std::string> fields;
        for (std::string field; fields_in >> field;) {
            fields.push_back(std::move(field));
        }
        if (fields.empty() || fields.front().starts_with('#')) {
            continue;
        }
        if (fields.size() != 2 && fields.size() != 3) {
            error = where + "expected ADDRESS [USER] PASSWORD, found " +
                    std::to_string(fields.size()) + " fields";
            return false;
        }
        node_address a;
        std::string why;
        if (parse_node_address(fields[0], a, why)) {
            error = where + "the address: " + why;
            return false;
        }
        if (!a.password.empty() || !a.user.empty()) {
            error = where + "the address holds credentials: give them as USER and PASSWORD";
            return false;
        }
        bool named = false;
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            if (!listed[i] || !listed[i]->same_server(a)) {
                continue;
            }
            named = true;
            if (given[i]) {
                error = where + "a second line for " + a.display();
                return false;
            }
            given[i] = true;
            nodes[i] = with_password(nodes[i], fields.back(), fields.size() == 3 ? fields[1] : "");
        }
        if (!named) {
            error = where + a.display() + " is not in the node list";
            return false;
        }
    }
    if (in.bad()) {
        error = flag + ": " + std::strerror(errno);
        return false;
    }
    return true;
}

} // namespace

bool load_credentials(options& o, const char* environment_password, std::string& error,
                      const char* environment_credentials_file) {
    if (o.node_credentials_file.empty() && environment_credentials_file &&
        *environment_credentials_file) {
        o.node_credentials_file = environment_credentials_file;
    }
    if (!o.node_credentials_file.empty() &&
        !read_node_credentials(o.node_credentials_file, o.nodes, error)) {
        return false;
    }
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
    if (o.shared) {
        l.mode = lock_mode::shared;
    } else if (o.permits != 0) {
        l.mode = lock_mode::permit;
        l.permits = o.permits;
        if (o.wait.count() == 0 && o.retries == 0) {
            // Each attempt asks for one slot (docs/safety.md): "busy" must mean that every
            // permit is taken, not that the first slot tried was. Up to 16 slots in quick
            // succession, at most a few milliseconds apart.
            l.retry.max_attempts = std::min(o.permits, 16U);
            l.retry.backoff_initial = std::chrono::milliseconds(0);
            l.retry.backoff_max = std::chrono::milliseconds(2);
        }
    }
    return l;
}

namespace {

bool applies_everywhere(const option_spec& spec) {
    return spec.applies_to == for_every_command;
}

/// The options that `belongs` picks, under `caption`.
/// `bit` picks the descriptions of one subcommand's help (0: the general ones).
template <typename Predicate>
po::options_description options_group(const std::string& caption, Predicate belongs,
                                      unsigned bit = 0) {
    po::options_description group(caption);
    for (const auto& spec : option_specs) {
        if (belongs(spec)) {
            describe(group, spec, bit);
        }
    }
    return group;
}

/// `options` as program_options lays them out, less the spaces it leaves where it wraps.
std::string laid_out(const po::options_description& options) {
    std::ostringstream printed;
    printed << options;
    std::string text;
    std::istringstream lines(printed.str());
    for (std::string line; std::getline(lines, line);) {
        if (text.empty() && line.empty()) {
            continue; // the blank line it starts a list of groups with
        }
        line.erase(line.find_last_not_of(' ') + 1);
        text += line + "\n";
    }
    return text;
}

constexpr std::string_view duration_syntax =
    "DUR: a number and its unit, ms, s, m or h (500ms, 1.5s, 2m, 1h; 0 alone);\n"
    "whole milliseconds, at most 2147483647ms (about 24 days).\n";

std::string usage_line(const subcommand& s) {
    return "redlock " + std::string(s.name) + " [options]" +
           (s.arguments.empty() ? "" : " " + std::string(s.arguments));
}

std::string subcommand_help(const subcommand& s) {
    po::options_description options;
    options.add(options_group(
        std::string(s.name) + " options",
        [&s](const option_spec& spec) {
            return !applies_everywhere(spec) && (spec.applies_to & s.bit) != 0;
        },
        s.bit));
    options.add(options_group("options of every command", applies_everywhere));
    const bool takes_durations =
        std::any_of(std::begin(option_specs), std::end(option_specs), [&s](const auto& spec) {
            return (spec.applies_to & s.bit) != 0 && std::string_view(spec.value_name) == "DUR";
        });
    return "usage: " + usage_line(s) + "\n\n" + std::string(s.details) + "\n\n" +
           laid_out(options) + "\n" + (takes_durations ? std::string(duration_syntax) + "\n" : "") +
           "Exit status: see redlock --help.\n";
}

std::string overview() {
    std::string text = "redlock: a distributed lock over independent Redis masters (Redlock).\n\n"
                       "usage:\n";
    std::size_t width = 0;
    for (const auto& s : subcommands) {
        width = std::max(width, usage_line(s).size());
    }
    const auto add_line = [&](const std::string& usage, std::string_view summary) {
        text +=
            "  " + usage + std::string(width + 3 - usage.size(), ' ') + std::string(summary) + "\n";
    };
    for (const auto& s : subcommands) {
        add_line(usage_line(s), s.summary);
    }
    add_line("redlock help SUBCOMMAND", "its options (or: SUBCOMMAND --help)");
    add_line("redlock --version", "the version");
    return text + R"(
Options go before or after SUBCOMMAND; --opt VALUE and --opt=VALUE are the
same, the last of a repeated option wins, and -- ends the options (for run,
before COMMAND).

)" + laid_out(options_group("options of every command", applies_everywhere)) +
           "\n" + std::string(duration_syntax) + R"(
exit status:
  0   success (run: the command's own status; 128+N if it died of signal N)
  64  bad usage            69  too few nodes reachable for a quorum
  70  internal error       75  lock held by another, granted too slowly, or too many
                               nodes in restart quarantine (-E N: N instead)
  79  lock lost, or TOKEN does not hold KEY
  127 run: COMMAND could not be started
  129, 130, 143  run, acquire: SIGHUP, SIGINT, SIGTERM while waiting for the lock
                 (the attempt is cleaned up on every node, COMMAND never starts)
)";
}

} // namespace

std::string help_text(std::string_view command) {
    const subcommand* s = find_subcommand(command);
    return s ? subcommand_help(*s) : overview();
}

} // namespace redlock::cli
