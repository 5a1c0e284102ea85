#include "sim_node.hpp"

#include "transport/scripts.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstdlib>

namespace redlock::sim {

namespace {

std::string status(std::string_view s) {
    return "+" + std::string(s) + "\r\n";
}
std::string error(std::string_view s) {
    return "-" + std::string(s) + "\r\n";
}
std::string integer(long long v) {
    return ":" + std::to_string(v) + "\r\n";
}
std::string bulk(std::string_view s) {
    return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n";
}
const std::string nil = "$-1\r\n";

std::string upper(std::string_view s) {
    std::string out(s);
    for (auto& c : out) {
        if (c >= 'a' && c <= 'z') {
            c = static_cast<char>(c - 'a' + 'A');
        }
    }
    return out;
}

bool parse_int(std::string_view s, long long& out) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

/// Decimal strings without leading zeros compare by length, then lexically (as the scripts do).
bool decimal_less(std::string_view a, std::string_view b) {
    return a.size() < b.size() || (a.size() == b.size() && a < b);
}

constexpr std::array known_scripts{&detail::release_script,        &detail::extend_script,
                                   &detail::fence_raise_script,    &detail::fenced_call_script,
                                   &detail::acquire_script,        &detail::holders_acquire_script,
                                   &detail::writer_waiting_script, &detail::force_release_script};

const detail::script* script_by_sha(std::string_view sha) {
    for (const auto* s : known_scripts) {
        if (s->sha1 == sha) {
            return s;
        }
    }
    return nullptr;
}

const detail::script* script_by_text(std::string_view text) {
    for (const auto* s : known_scripts) {
        if (s->text == text) {
            return s;
        }
    }
    return nullptr;
}

std::string array(const std::vector<std::string>& bulks) {
    std::string out = "*" + std::to_string(bulks.size()) + "\r\n";
    for (const auto& b : bulks) {
        out += bulk(b);
    }
    return out;
}

const std::string wrongtype =
    error("WRONGTYPE Operation against a key holding the wrong kind of value");

/// The scripts' own argument checks: `^[1-9][0-9]*$` of at most `digits` digits.
bool positive_decimal(const std::vector<std::string>& argv, std::size_t i, std::size_t digits) {
    if (i >= argv.size() || argv[i].empty() || argv[i].size() > digits || argv[i][0] == '0') {
        return false;
    }
    return std::all_of(argv[i].begin(), argv[i].end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// The slot a semaphore's holder takes: the decimal after the '/' that ends its token.
std::optional<long long> slot_of(const std::string& token) {
    const auto slash = token.rfind('/');
    if (slash == std::string::npos || slash + 1 == token.size() || token.size() - slash > 8) {
        return std::nullopt;
    }
    for (std::size_t i = slash + 1; i < token.size(); ++i) {
        if (token[i] < '0' || token[i] > '9') {
            return std::nullopt;
        }
    }
    return std::stoll(token.substr(slash + 1));
}

/// A semaphore's mode: a permit count from 1 to 1000000.
bool permit_count(std::string_view s) {
    long long n = 0;
    return !s.empty() && s[0] != '0' && s.size() <= 7 && parse_int(s, n) && n >= 1 && n <= 1000000;
}

/// A holder's deadline as the scripts read it (a Lua number), or none for a value that is
/// not one: then the holder counts as expired.
std::optional<double> deadline(std::string_view v) {
    // Longer is no deadline of ours (and would overflow PEXPIREAT): counted as expired.
    if (v.empty() || v.size() > 15 ||
        !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return std::nullopt;
    }
    return std::strtod(std::string(v).c_str(), nullptr);
}

std::string decimal(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
}

const std::string ttl_error = " ttl must be a positive integer of milliseconds below 10^15";

/// Seconds since the epoch at the nodes' local clock 0: TIME reads like a real node's.
constexpr std::int64_t epoch_ns = 1'700'000'000LL * sec;

} // namespace

sim_node::sim_node(world& w, int id, drift_clock clock, node_faults faults)
    : world_(w)
    , id_(id)
    , clock_(clock)
    , faults_(faults) {
    restart();
    // Up long before the schedule starts: no quarantine at the first connect.
    started_ = -w.uniform(10 * sec, 86400 * sec);
}

std::pair<real_ns, real_ns> sim_node::schedule_execution() {
    const real_ns start = std::max(world_.now(), busy_until_);
    real_ns service = 5 * us;
    if (world_.chance(faults_.slow_rate)) {
        service = world_.uniform(1 * ms, faults_.slow_max);
    }
    busy_until_ = start + service;
    return {start, busy_until_};
}

sim_node::entry* sim_node::find(const std::string& key) {
    auto it = data_.find(key);
    if (it == data_.end()) {
        return nullptr;
    }
    if (it->second.expire_at >= 0 && local_now() >= it->second.expire_at) {
        data_.erase(it);
        return nullptr;
    }
    return &it->second;
}

bool sim_node::set_nx_px(const std::string& key, const std::string& value, std::int64_t ttl_ms,
                         bool nx) {
    if (nx && find(key)) {
        return false;
    }
    data_[key] = entry{value, ttl_ms >= 0 ? local_now() + ttl_ms * ms : -1, commands_};
    if (sent_before_connect) {
        written_across_reconnect_.emplace(key, value);
    }
    return true;
}

std::string sim_node::execute(const std::vector<std::string>& args, const std::string& who) {
    ++commands_;
    if (args.empty()) {
        return error("ERR empty command");
    }
    const auto verb = upper(args[0]);
    if (faults_.evict_rate > 0 && verb != "INFO" && world_.chance(faults_.evict_rate)) {
        evict_one();
    }
    if (verb != "INFO" && world_.chance(faults_.error_rate)) {
        static const char* const errors[] = {
            "READONLY You can't write against a read only replica.",
            "OOM command not allowed when used memory > 'maxmemory'.",
            ("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN "
             "NOSAVE."),
            "NOPERM this user has no permissions to run one of the commands"};
        std::string e = errors[world_.uniform(0, 3)];
        SIM_TRACE(world_, name(), who + " " + args[0] + " -> injected -" + e.substr(0, 8));
        return error(e);
    }
    auto out = run(args, 0, 0);
    if (world_.tracing()) {
        std::string text;
        for (std::size_t i = 0; i < args.size(); ++i) {
            auto a = args[i];
            if (a.size() > 16) {
                a = a.substr(0, 8) + "..";
            }
            text += (i ? " " : "") + a;
        }
        auto shown = out.substr(0, out.size() - 2);
        for (auto& c : shown) {
            if (c == '\r' || c == '\n') {
                c = ' ';
            }
        }
        world_.trace(name(), who + " " + text + " -> " + shown.substr(0, 40));
    }
    return out;
}

std::string sim_node::run(const std::vector<std::string>& args, std::size_t from, int depth) {
    const std::size_t n = args.size() - from;
    const auto name = upper(args[from]);
    auto arg = [&](std::size_t i) -> const std::string& { return args[from + i]; };
    if (name == "SET" && n >= 3) {
        bool nx = false;
        long long px = -1;
        for (std::size_t i = 3; i < n; ++i) {
            const auto opt = upper(arg(i));
            if (opt == "NX") {
                nx = true;
            } else if (opt == "PX" && i + 1 < n) {
                if (!parse_int(arg(++i), px) || px <= 0) {
                    return error("ERR invalid expire time in 'set' command");
                }
            } else {
                return error("ERR syntax error");
            }
        }
        return set_nx_px(arg(1), arg(2), px, nx) ? status("OK") : nil;
    }
    if (name == "GET" && n == 2) {
        auto* e = find(arg(1));
        if (e && e->type != kind::string) {
            return wrongtype;
        }
        return e ? bulk(e->value) : nil;
    }
    if (name == "TYPE" && n == 2) {
        auto* e = find(arg(1));
        if (!e) {
            return status("none");
        }
        return status(e->type == kind::string ? "string" : e->type == kind::hash ? "hash" : "list");
    }
    if (name == "HGETALL" && n == 2) {
        auto* e = find(arg(1));
        if (e && e->type != kind::hash) {
            return wrongtype;
        }
        std::vector<std::string> flat;
        for (const auto& [field, value] : e ? e->fields : decltype(e->fields){}) {
            flat.push_back(field);
            flat.push_back(value);
        }
        return array(flat);
    }
    if (name == "HSET" && n >= 4 && n % 2 == 0) {
        auto* e = find(arg(1));
        if (e && e->type != kind::hash) {
            return wrongtype;
        }
        if (!e) {
            e = &(data_[arg(1)] = entry{{}, -1, commands_, kind::hash});
        }
        long long added = 0;
        for (std::size_t i = 2; i < n; i += 2) {
            added += e->fields.insert_or_assign(arg(i), arg(i + 1)).second ? 1 : 0;
        }
        e->written = commands_;
        return integer(added);
    }
    if (name == "RPUSH" && n >= 3) {
        auto* e = find(arg(1));
        if (e && e->type != kind::list) {
            return wrongtype;
        }
        if (!e) {
            e = &(data_[arg(1)] = entry{{}, -1, commands_, kind::list});
        }
        for (std::size_t i = 2; i < n; ++i) {
            e->items.push_back(arg(i));
        }
        return integer(static_cast<long long>(e->items.size()));
    }
    if (name == "TIME" && n == 1) {
        const auto us_now = (epoch_ns + local_now()) / us;
        return array({std::to_string(us_now / 1'000'000), std::to_string(us_now % 1'000'000)});
    }
    if (name == "DEL" && n >= 2) {
        long long count = 0;
        for (std::size_t i = 1; i < n; ++i) {
            if (find(arg(i))) {
                data_.erase(arg(i));
                ++count;
            }
        }
        return integer(count);
    }
    if (name == "PEXPIRE" && n == 3) {
        long long ttl = 0;
        if (!parse_int(arg(2), ttl)) {
            return error("ERR value is not an integer or out of range");
        }
        auto* e = find(arg(1));
        if (!e) {
            return integer(0);
        }
        if (ttl <= 0) {
            data_.erase(arg(1));
        } else {
            e->expire_at = local_now() + ttl * ms;
        }
        return integer(1);
    }
    if (name == "PTTL" && n == 2) {
        auto* e = find(arg(1));
        if (!e) {
            return integer(-2);
        }
        return integer(e->expire_at < 0 ? -1 : (e->expire_at - local_now() + ms - 1) / ms);
    }
    if (name == "PING") {
        return status("PONG");
    }
    if (name == "INFO") {
        const auto uptime = (world_.now() - started_) / sec;
        const bool evicts = faults_.evict_rate > 0;
        return bulk("# Server\r\nredis_version:7.0.11\r\nrun_id:" + run_id_ +
                    "\r\nuptime_in_seconds:" + std::to_string(uptime) +
                    "\r\n\r\n# Memory\r\nmaxmemory:" + (evicts ? "3145728" : "0") +
                    "\r\nmaxmemory_policy:" + (evicts ? "volatile-ttl" : "noeviction") +
                    "\r\n\r\n# Stats\r\nevicted_keys:" + std::to_string(evicted_keys_) + "\r\n");
    }
    if (name == "SCRIPT" && n >= 2) {
        const auto sub = upper(arg(1));
        if (sub == "FLUSH") {
            scripts_.clear();
            return status("OK");
        }
        if (sub == "LOAD" && n == 3) {
            const auto* s = script_by_text(arg(2));
            if (!s) {
                return error("ERR script not known to the simulation");
            }
            scripts_.insert(std::string(s->sha1));
            return bulk(s->sha1);
        }
        return error("ERR unknown SCRIPT subcommand");
    }
    if ((name == "EVALSHA" || name == "EVAL") && n >= 3 && depth == 0) {
        const detail::script* s = nullptr;
        if (name == "EVALSHA") {
            if (!scripts_.count(arg(1))) {
                if (arg(1) == detail::release_script.sha1 && n >= 5) {
                    release_noscript_[arg(4)] = commands_;
                }
                return error("NOSCRIPT No matching script. Please use EVAL.");
            }
            s = script_by_sha(arg(1));
        } else {
            s = script_by_text(arg(1));
            if (s) {
                scripts_.insert(std::string(s->sha1));
            }
        }
        if (!s) {
            return error("ERR script not known to the simulation");
        }
        long long keys = 0;
        if (!parse_int(arg(2), keys) || keys < 0 || static_cast<std::size_t>(keys) > n - 3) {
            return error("ERR Number of keys can't be greater than number of args");
        }
        return run_script(
            s->sha1,
            std::vector<std::string>(args.begin() + static_cast<long>(from) + 2, args.end()), depth,
            name == "EVAL");
    }
    return error("ERR unknown command or wrong arguments '" + args[from] + "'");
}

/// `a` = numkeys, KEYS..., ARGV...
std::string sim_node::run_script(std::string_view sha, const std::vector<std::string>& a, int depth,
                                 bool via_eval) {
    long long numkeys = 0;
    parse_int(a[0], numkeys);
    const auto nk = static_cast<std::size_t>(numkeys);
    std::vector<std::string> keys(a.begin() + 1, a.begin() + 1 + static_cast<long>(nk));
    std::vector<std::string> argv(a.begin() + 1 + static_cast<long>(nk), a.end());
    auto get = [&](const std::string& k) -> std::optional<std::string> {
        auto* e = find(k);
        return e ? std::optional<std::string>(e->value) : std::nullopt;
    };
    auto bad = [] { return error("ERR wrong number of arguments for the script"); };

    if (sha == detail::release_script.sha1) {
        return release(keys, argv, via_eval);
    }
    if (sha == detail::extend_script.sha1) {
        return extend(keys, argv);
    }
    if (sha == detail::acquire_script.sha1) {
        return acquire(keys, argv);
    }
    if (sha == detail::holders_acquire_script.sha1) {
        return holders_acquire(keys, argv);
    }
    if (sha == detail::fence_raise_script.sha1) {
        return fence_raise(keys, argv);
    }
    if (sha == detail::writer_waiting_script.sha1) {
        return writer_waiting(keys, argv);
    }
    if (sha == detail::force_release_script.sha1) {
        return force_release(keys);
    }
    if (sha == detail::fenced_call_script.sha1) {
        if (keys.empty() || argv.size() < 2) {
            return bad();
        }
        const auto& token = argv[0];
        long long value = 0;
        if (token.size() > 20 || token[0] == '0' || !parse_int(token, value)) {
            return error("ERR fencing token must be a positive decimal integer");
        }
        const auto highest = get(keys[0]).value_or("0");
        if (decimal_less(token, highest)) {
            return error("FENCED " + token + " < " + highest);
        }
        if (token != highest) {
            data_[keys[0]] = entry{token, -1, commands_};
        }
        return run(std::vector<std::string>(argv.begin() + 1, argv.end()), 0, depth + 1);
    }
    return error("ERR script not known to the simulation");
}

std::int64_t sim_node::time_ms() const {
    return (epoch_ns + local_now()) / ms;
}

bool sim_node::lock_hash(const entry& e) {
    if (e.type != kind::hash) {
        return false;
    }
    const auto mode = e.fields.find("mode");
    return mode != e.fields.end() && (mode->second == "shared" || permit_count(mode->second));
}

bool sim_node::holds(const std::string& key, const std::string& token) {
    const auto* e = find(key);
    if (!e) {
        return false;
    }
    if (e->type == kind::string) {
        return e->value == token;
    }
    if (!lock_hash(*e)) {
        return false;
    }
    const auto field = e->fields.find(token);
    if (field == e->fields.end()) {
        return false;
    }
    const auto d = deadline(field->second);
    return d && *d > static_cast<double>(time_ms());
}

bool sim_node::permit_free(const entry& e, const std::string& token,
                           const std::string& permits) const {
    const auto slot = slot_of(token);
    if (!slot || *slot >= std::stoll(permits)) {
        return false;
    }
    const auto now = static_cast<double>(time_ms());
    long long count = 0;
    for (const auto& [field, value] : e.fields) {
        if (field != "mode" && field != "writer_waiting") {
            const auto d = deadline(value);
            if (d && *d > now) {
                if (slot_of(field) == slot) {
                    return false;
                }
                ++count;
            }
        }
    }
    return count < std::stoll(permits);
}

void sim_node::expire_at_ms(entry& e, double deadline_ms) const {
    e.expire_at = static_cast<std::int64_t>(deadline_ms) * ms - epoch_ns;
}

void sim_node::settle(const std::string& key) {
    auto& e = data_.at(key);
    const auto now = static_cast<double>(time_ms());
    std::optional<double> latest;
    for (auto it = e.fields.begin(); it != e.fields.end();) {
        const auto d = it->first == "mode" ? std::optional<double>() : deadline(it->second);
        if (it->first != "mode" && (!d || *d <= now)) {
            it = e.fields.erase(it);
            continue;
        }
        if (d && it->first != "writer_waiting" && (!latest || *d > *latest)) {
            latest = d;
        }
        ++it;
    }
    if (latest) {
        expire_at_ms(e, *latest);
    } else {
        data_.erase(key);
    }
}

void sim_node::publish_release(const std::string& key, const std::string& payload) {
    const auto channel = "redlock:released:" + key;
    SIM_TRACE(world_, name(), "PUBLISH " + channel + " " + payload);
    if (on_publish) {
        on_publish(channel, payload);
    }
    if (const auto it = channels_.find(channel); it != channels_.end()) {
        const auto sinks = it->second; // a sink may unsubscribe
        for (const auto& [id, sink] : sinks) {
            sink(channel, payload);
        }
    }
}

sim_node::reply sim_node::release(const std::vector<std::string>& keys,
                                  const std::vector<std::string>& argv, bool via_eval) {
    if (keys.empty() || argv.empty()) {
        return error("ERR release.lua: KEYS = lock keys (at least one), ARGV[1] = token");
    }
    const auto& token = argv[0];
    const std::string announcement = argv.size() > 1 ? argv[1] : std::string();
    long long all = 1;
    for (const auto& key : keys) {
        bool removed = false;
        auto* e = find(key);
        if (e && e->type == kind::string && e->value == token) {
            const auto refused = release_noscript_.find(token);
            if (via_eval && on_note && refused != release_noscript_.end() &&
                e->written > refused->second) {
                on_note("defect 1 pattern on " + name() +
                        ": a compare-and-delete refused with NOSCRIPT, resent as EVAL, deleted " +
                        key + " written by a later command with the same token " +
                        token.substr(0, 8));
            }
            data_.erase(key);
            removed = true;
        } else if (e && lock_hash(*e) && e->fields.count(token)) {
            const auto d = deadline(e->fields.at(token));
            if (!d || *d <= static_cast<double>(time_ms())) {
                all = 0;
            }
            e->fields.erase(token);
            removed = true;
            settle(key);
        } else {
            all = 0;
        }
        if (removed) {
            if (on_delete) {
                on_delete(key, token);
            }
            publish_release(key, announcement);
        }
    }
    return integer(all);
}

sim_node::reply sim_node::extend(const std::vector<std::string>& keys,
                                 const std::vector<std::string>& argv) {
    if (keys.empty() || argv.empty()) {
        return error("ERR extend.lua: KEYS = lock keys (at least one), ARGV = token, ttl, "
                     "recreate, kind");
    }
    if (!positive_decimal(argv, 1, 15)) {
        return error("ERR extend.lua:" + ttl_error);
    }
    const auto& token = argv[0];
    const long long ttl = std::stoll(argv[1]);
    const bool recreate = argv.size() > 2 && argv[2] == "1";
    const std::string lock_kind = argv.size() > 3 ? argv[3] : "";
    if (!lock_kind.empty() && lock_kind != "shared" && !permit_count(lock_kind)) {
        return error("ERR extend.lua: kind must be \"\", \"shared\" or a permit count from 1 to "
                     "1000000");
    }
    const auto now = static_cast<double>(time_ms());
    enum class step { pexpire, set, hold };
    std::vector<step> plan;
    for (const auto& key : keys) {
        auto* e = find(key);
        if (!e) {
            if (!recreate || (!lock_kind.empty() && lock_kind != "shared" &&
                              !permit_free(entry{}, token, lock_kind))) {
                return integer(0);
            }
            plan.push_back(step::set);
        } else if (e->type == kind::string) {
            if (e->value != token || !lock_kind.empty()) {
                return integer(0);
            }
            plan.push_back(step::pexpire);
        } else {
            const auto mode = e->fields.find("mode");
            if (lock_kind.empty() || e->type != kind::hash || mode == e->fields.end() ||
                mode->second != lock_kind) {
                return integer(0);
            }
            const auto field = e->fields.find(token);
            const auto d = field == e->fields.end() ? std::nullopt : deadline(field->second);
            const bool held = d && *d > now;
            if (!held &&
                !(recreate && (lock_kind == "shared" || permit_free(*e, token, lock_kind)))) {
                return integer(0);
            }
            plan.push_back(step::hold);
            if (held) {
                continue;
            }
        }
        const auto forced = forced_.find({key, token});
        if (plan.back() != step::pexpire && forced != forced_.end() &&
            (command_sent_at < 0 || command_sent_at > forced->second)) {
            if (written_across_reconnect_.count({key, token})) {
                if (on_note) {
                    on_note("(n) residue: a write-back after a force release of a hold written "
                            "across a reconnect (docs/safety.md)");
                }
            } else if (on_forced_recreate) {
                on_forced_recreate(key, token);
            }
        }
    }
    for (std::size_t i = 0; i < keys.size(); ++i) {
        if (plan[i] == step::pexpire) {
            data_.at(keys[i]).expire_at = local_now() + ttl * ms;
        } else if (plan[i] == step::set && lock_kind.empty()) {
            set_nx_px(keys[i], token, ttl, false);
        } else {
            auto [it, created] = data_.try_emplace(keys[i], entry{{}, -1, commands_, kind::hash});
            it->second.fields["mode"] = lock_kind;
            it->second.fields[token] = decimal(now + static_cast<double>(ttl));
            it->second.written = commands_;
            settle(keys[i]);
        }
    }
    return integer(1);
}

sim_node::reply sim_node::acquire(const std::vector<std::string>& keys,
                                  const std::vector<std::string>& argv) {
    const std::size_t n = positive_decimal(argv, 2, 18) ? std::stoull(argv[2]) : 0;
    if (argv.empty() || n == 0 || (keys.size() != n && keys.size() != 2 * n)) {
        return error("ERR acquire.lua: KEYS = n lock keys then 0 or n counters, ARGV = token, "
                     "ttl, n");
    }
    if (!positive_decimal(argv, 1, 15)) {
        return error("ERR acquire.lua:" + ttl_error);
    }
    for (std::size_t i = 0; i < n; ++i) {
        if (const auto* e = find(keys[i])) {
            if (e->type == kind::string && e->expire_at < 0) {
                return error("REDLOCK_MISMATCH key " + keys[i] +
                             " is a string without expiry, not a lock");
            }
            return nil;
        }
    }
    std::optional<std::string> largest;
    if (keys.size() == 2 * n) {
        largest = "0";
        for (std::size_t i = n; i < 2 * n; ++i) {
            const auto* counter = find(keys[i]);
            if (counter && counter->type != kind::string) {
                return error("WRONGTYPE fencing counter " + keys[i] + " is not a string");
            }
            if (counter && decimal_less(*largest, counter->value)) {
                largest = counter->value;
            }
        }
    }
    for (std::size_t i = 0; i < n; ++i) {
        set_nx_px(keys[i], argv[0], std::stoll(argv[1]), false);
    }
    if (largest && faults_.lies_about_counter) {
        return bulk("18446744073709551614");
    }
    return largest ? bulk(*largest) : integer(1);
}

sim_node::reply sim_node::holders_acquire(const std::vector<std::string>& keys,
                                          const std::vector<std::string>& argv) {
    if ((keys.size() != 1 && keys.size() != 2) || argv.empty()) {
        return error("ERR holders_acquire.lua: KEYS = lock key[, counter], ARGV = token, ttl, "
                     "kind");
    }
    if (!positive_decimal(argv, 1, 15)) {
        return error("ERR holders_acquire.lua:" + ttl_error);
    }
    const std::string lock_kind = argv.size() > 2 ? argv[2] : "";
    if (lock_kind != "shared" && !permit_count(lock_kind)) {
        return error("ERR holders_acquire.lua: kind must be \"shared\" or a permit count from 1 "
                     "to 1000000");
    }
    const auto describe = [](const std::string& mode) -> std::string {
        if (mode == "shared") {
            return "a read-write lock's readers";
        }
        return mode == "1" ? "a semaphore of 1 permit" : "a semaphore of " + mode + " permits";
    };
    std::optional<long long> slot;
    if (lock_kind != "shared") {
        slot = slot_of(argv[0]);
        if (!slot || *slot >= std::stoll(lock_kind)) {
            return error("ERR holders_acquire.lua: a permit token ends in /SLOT, SLOT from 0 to "
                         "N-1");
        }
    }
    const auto& key = keys[0];
    auto* e = find(key);
    if (e && e->type == kind::string && e->expire_at < 0) {
        return error("REDLOCK_MISMATCH key is a string without expiry, not a lock");
    }
    if (e && e->type == kind::string) {
        return nil;
    }
    if (e && e->type == kind::list) {
        return error("REDLOCK_MISMATCH key is a list, not a lock");
    }
    if (e && !lock_hash(*e)) {
        return error("REDLOCK_MISMATCH key is a hash, not a lock");
    }
    if (e && e->fields.at("mode") != lock_kind) {
        const auto& mode = e->fields.at("mode");
        const auto asked =
            lock_kind == "shared" || mode == "shared" ? describe(lock_kind) : lock_kind;
        return error("REDLOCK_MISMATCH key holds " + describe(mode) + ", asked for " + asked);
    }
    std::optional<std::string> counter;
    if (keys.size() == 2) {
        const auto* c = find(keys[1]);
        if (c && c->type != kind::string) {
            return error("WRONGTYPE fencing counter " + keys[1] + " is not a string");
        }
        counter = c ? c->value : "0";
    }
    const auto now = static_cast<double>(time_ms());
    const auto mine = now + static_cast<double>(std::stoll(argv[1]));
    long long holding = 0;
    bool taken = false;
    double latest = mine;
    std::optional<double> mark;
    if (e) {
        for (auto it = e->fields.begin(); it != e->fields.end();) {
            if (it->first == "mode") {
                ++it;
                continue;
            }
            const auto d = deadline(it->second);
            if (!d || *d <= now) {
                it = e->fields.erase(it);
                continue;
            }
            if (it->first == "writer_waiting") {
                mark = d;
            } else {
                ++holding;
                latest = std::max(latest, *d);
                taken = taken || (slot && slot_of(it->first) == slot);
            }
            ++it;
        }
        if (mark && holding == 0) {
            // The mark dies with the last reader.
            e->fields.erase("writer_waiting");
            mark.reset();
        }
    }
    if (lock_kind == "shared" ? mark.has_value() : taken || holding >= std::stoll(lock_kind)) {
        return nil;
    }
    if (!e) {
        e = &(data_[key] = entry{{}, -1, commands_, kind::hash});
    }
    e->fields["mode"] = lock_kind;
    e->fields[argv[0]] = decimal(mine);
    e->written = commands_;
    expire_at_ms(*e, latest);
    return counter ? bulk(*counter) : integer(1);
}

sim_node::reply sim_node::fence_raise(const std::vector<std::string>& keys,
                                      const std::vector<std::string>& argv) {
    const std::size_t n = keys.size() / 2;
    if (n < 1 || keys.size() % 2 != 0 || argv.empty()) {
        return error("ERR fence_raise.lua: KEYS = n lock keys then their n counters, ARGV = "
                     "token, t");
    }
    if (!positive_decimal(argv, 1, 20)) {
        return error("ERR fence_raise.lua: t must be a positive decimal integer");
    }
    const auto& t = argv[1];
    for (std::size_t i = 0; i < n; ++i) {
        if (!holds(keys[i], argv[0])) {
            return integer(0);
        }
        const auto* counter = find(keys[n + i]);
        if (counter && counter->type != kind::string) {
            return error("WRONGTYPE fencing counter " + keys[n + i] + " is not a string");
        }
        if (!decimal_less(counter ? counter->value : "0", t)) {
            return integer(0);
        }
    }
    for (std::size_t i = n; i < 2 * n; ++i) {
        data_[keys[i]] = entry{t, -1, commands_};
    }
    return integer(1);
}

sim_node::reply sim_node::writer_waiting(const std::vector<std::string>& keys,
                                         const std::vector<std::string>& argv) {
    if (keys.size() != 1) {
        return error("ERR writer_waiting.lua: KEYS = lock key, ARGV = mark ttl");
    }
    if (!positive_decimal(argv, 0, 15)) {
        return error("ERR writer_waiting.lua:" + ttl_error);
    }
    auto* e = find(keys[0]);
    if (!e || e->type != kind::hash || !e->fields.count("mode") ||
        e->fields.at("mode") != "shared") {
        return integer(0);
    }
    const auto now = static_cast<double>(time_ms());
    std::vector<std::string> expired;
    std::optional<double> latest;
    std::optional<double> mark;
    for (const auto& [field, value] : e->fields) {
        if (field == "mode") {
            continue;
        }
        const auto d = deadline(value);
        if (!d || *d <= now) {
            expired.push_back(field);
        } else if (field == "writer_waiting") {
            mark = d;
        } else if (!latest || *d > *latest) {
            latest = d;
        }
    }
    if (!latest) {
        return integer(0);
    }
    for (const auto& field : expired) {
        e->fields.erase(field);
    }
    expire_at_ms(*e, *latest);
    const auto until = now + static_cast<double>(std::stoll(argv[0]));
    if (!mark || *mark < until) {
        e->fields["writer_waiting"] = decimal(until);
        e->written = commands_;
    }
    return integer(1);
}

sim_node::reply sim_node::force_release(const std::vector<std::string>& keys) {
    long long deleted = 0;
    for (const auto& key : keys) {
        const auto* e = find(key);
        if (e && ((e->type == kind::string && e->expire_at >= 0) || lock_hash(*e))) {
            if (e->type == kind::string) {
                forced_[{key, e->value}] = world_.now();
                if (on_force_delete) {
                    on_force_delete(key, e->value);
                }
            } else {
                for (const auto& [field, value] : e->fields) {
                    if (field != "mode" && field != "writer_waiting") {
                        forced_[{key, field}] = world_.now();
                        if (on_force_delete) {
                            on_force_delete(key, field);
                        }
                    }
                }
            }
            data_.erase(key);
            publish_release(key, "");
            ++deleted;
        }
    }
    return integer(deleted);
}

void sim_node::subscribe(const std::string& channel, std::uint64_t subscriber, message_sink sink) {
    channels_[channel][subscriber] = std::move(sink);
}

void sim_node::unsubscribe(const std::string& channel, std::uint64_t subscriber) {
    const auto it = channels_.find(channel);
    if (it != channels_.end()) {
        it->second.erase(subscriber);
        if (it->second.empty()) {
            channels_.erase(it);
        }
    }
}

void sim_node::unsubscribe_all(std::uint64_t subscriber) {
    for (auto it = channels_.begin(); it != channels_.end();) {
        it->second.erase(subscriber);
        it = it->second.empty() ? channels_.erase(it) : std::next(it);
    }
}

void sim_node::crash() {
    if (!up_) {
        return;
    }
    up_ = false;
    ++incarnation_;
    SIM_TRACE(world_, name(),
              "CRASH (data lost" +
                  std::string(faults_.durable_counters ? ", counters kept)" : ")"));
    for (auto it = data_.begin(); it != data_.end();) {
        const bool counter = it->first.ends_with(":fence");
        if (counter && faults_.durable_counters) {
            ++it;
        } else {
            it = data_.erase(it);
        }
    }
    scripts_.clear();
    channels_.clear();
    forced_.clear();
    written_across_reconnect_.clear();
    auto cuts = on_crash;
    for (auto& [id, cut] : cuts) {
        cut();
    }
}

void sim_node::evict_one() {
    const auto now = local_now();
    auto victim = data_.end();
    for (auto it = data_.begin(); it != data_.end(); ++it) {
        const auto& e = it->second;
        if (e.expire_at >= 0 && now < e.expire_at &&
            (victim == data_.end() || e.expire_at < victim->second.expire_at ||
             (e.expire_at == victim->second.expire_at && it->first < victim->first))) {
            victim = it;
        }
    }
    if (victim == data_.end()) {
        return;
    }
    SIM_TRACE(world_, name(), "evicted " + victim->first);
    data_.erase(victim);
    ++evicted_keys_;
    forced_.clear(); // the clients see keys forgotten: a write-back is expected now
}

void sim_node::restart() {
    up_ = true;
    evicted_keys_ = 0;
    started_ = world_.now();
    busy_until_ = world_.now();
    char id[48];
    std::snprintf(id, sizeof id, "%016llx%016llx%08x",
                  static_cast<unsigned long long>(world_.rng()()),
                  static_cast<unsigned long long>(world_.rng()()), static_cast<unsigned>(id_));
    run_id_ = id;
    if (incarnation_ > 1) {
        SIM_TRACE(world_, name(), "restarted, run_id " + run_id_.substr(0, 8));
    }
}

void sim_node::flush_scripts() {
    scripts_.clear();
    SIM_TRACE(world_, name(), "SCRIPT FLUSH");
}

std::vector<std::string> sim_node::live_lock_keys() const {
    std::vector<std::string> out;
    const auto now = clock_.local(world_.now());
    for (const auto& [key, e] : data_) {
        if (key.ends_with(":fence") || key.starts_with("fence:")) {
            continue;
        }
        if (e.expire_at < 0 || now < e.expire_at) {
            out.push_back(key);
        }
    }
    return out;
}

} // namespace redlock::sim
