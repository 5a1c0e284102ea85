#include "sim_node.hpp"

#include "redlock/config.hpp"
#include "transport/scripts.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdio>

namespace redlock::sim {

namespace {

std::string upper(std::string_view s) {
    std::string out(s);
    for (auto& c : out) {
        if (c >= 'a' && c <= 'z') {
            c = static_cast<char>(c - 'a' + 'A');
        }
    }
    return out;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) {
        if (c >= 'A' && c <= 'Z') {
            c = static_cast<char>(c - 'A' + 'a');
        }
    }
    return out;
}

/// string2ll: an optional '-', digits, no leading zeros or '+' or spaces, within 64 bits.
bool parse_int(std::string_view s, long long& out) {
    if (s.empty() || s.size() > 20 || s[0] == '+' || (s.size() > 1 && s[0] == '0') ||
        (s.size() >= 2 && s[0] == '-' && s[1] == '0') || s == "-") {
        return false;
    }
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size();
}

const sim_reply wrongtype =
    sim_reply::error("WRONGTYPE Operation against a key holding the wrong kind of value");
const sim_reply not_an_integer = sim_reply::error("ERR value is not an integer or out of range");
const sim_reply syntax_error = sim_reply::error("ERR syntax error");

/// `base` microseconds plus `count` milliseconds, held at the largest value rather than
/// wrapped: an expiry 10^15 ms ahead (the scripts accept 15-digit TTLs) is far in range,
/// one near 2^63 ms is "never" (Redis would keep it for longer than any schedule).
std::int64_t after_ms(std::int64_t base, long long count) {
    std::int64_t scaled = 0;
    std::int64_t sum = 0;
    if (__builtin_mul_overflow(count, 1000LL, &scaled) ||
        __builtin_add_overflow(base, scaled, &sum)) {
        return count < 0 ? INT64_MIN + 1 : INT64_MAX; // long past, not no_expiry
    }
    return sum;
}

} // namespace

sim_node::sim_node(world& w, int id, drift_clock clock, node_faults faults)
    : world_(w)
    , id_(id)
    , clock_(clock)
    , faults_(faults)
    , keyspace_rng_(faults.keyspace_seed)
    , info_refused_rng_(faults.info_refused_seed)
    , resync_rng_(faults.resync_seed) {
    restart(faults.promoted_before_start);
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
    if (it->second.expire_us != no_expiry && local_us() >= it->second.expire_us) {
        expire(it);
        return nullptr;
    }
    return &it->second;
}

void sim_node::expire(std::unordered_map<std::string, entry>::iterator it) {
    const auto key = it->first;
    data_.erase(it);
    if (faults_.keyspace_events) {
        cmd_publish({"PUBLISH", "__keyspace@0__:" + key, "expired"});
    }
}

void sim_node::watch_expiry(const std::string& key) {
    const auto it = data_.find(key);
    if (!faults_.keyspace_events || it == data_.end() || it->second.expire_us == no_expiry) {
        return;
    }
    const auto lag = static_cast<real_ns>(keyspace_rng_() % static_cast<std::uint64_t>(100 * ms));
    if (it->second.expire_us > INT64_MAX / us || it->second.expire_us < INT64_MIN / us) {
        return; // "never" or "long past" (after_ms's bounds): found by a command, if ever
    }
    const real_ns at = clock_.real_at(it->second.expire_us * us, world_.now()) + lag;
    world_.at(at, -1, [this, key, written = it->second.written, incarnation = incarnation_] {
        const auto again = data_.find(key);
        // Gone, written again (with a watch of its own) or lost in a crash: nothing here.
        if (incarnation != incarnation_ || again == data_.end() ||
            again->second.written != written || again->second.expire_us == no_expiry) {
            return;
        }
        if (local_us() < again->second.expire_us) {
            watch_expiry(key); // moved later (PEXPIRE), or the clock stepped back
            return;
        }
        expire(again);
    });
}

sim_node::entry* sim_node::find_as(const std::string& key, kind t, bool& wrong) {
    auto* e = find(key);
    wrong = e && e->type != t;
    return wrong ? nullptr : e;
}

sim_node::entry& sim_node::create(const std::string& key, kind t) {
    auto& e = data_[key];
    e = entry{};
    e.type = t;
    e.written = commands_;
    return e;
}

void sim_node::erase(const std::string& key) {
    data_.erase(key);
}

std::string sim_node::execute(const std::vector<std::string>& args, const std::string& who) {
    ++commands_;
    if (args.empty()) {
        return sim_reply::error("ERR empty command").resp();
    }
    const auto verb = upper(args[0]);
    if (faults_.evict_rate > 0 && verb != "INFO" && world_.chance(faults_.evict_rate)) {
        evict_one();
    }
    if (faults_.resync_rate > 0 &&
        std::uniform_real_distribution<double>(0, 1)(resync_rng_) < faults_.resync_rate) {
        SIM_TRACE(world_, name(), "full resync from its primary: lock keys gone");
        std::erase_if(data_, [](const auto& item) { return !item.first.ends_with(":fence"); });
    }
    if (verb == "INFO" && faults_.info_refused_rate > 0 &&
        std::uniform_real_distribution<double>(0, 1)(info_refused_rng_) <
            faults_.info_refused_rate) {
        SIM_TRACE(world_, name(), who + " INFO -> refused (NOPERM)");
        return sim_reply::error("NOPERM User default has no permissions to run the 'info' command")
            .resp();
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
        return sim_reply::error(e).resp();
    }
    auto out = dispatch(args, false).resp();
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

const sim_node::command_spec* sim_node::lookup(const std::string& name) {
    static const std::unordered_map<std::string, command_spec> table{
        {"SET", {-3, true, true, &sim_node::cmd_set}},
        {"GET", {2, true, false, &sim_node::cmd_get}},
        {"DEL", {-2, true, true, &sim_node::cmd_del}},
        {"PEXPIRE", {-3, true, true, &sim_node::cmd_pexpire}},
        {"PEXPIREAT", {-3, true, true, &sim_node::cmd_pexpireat}},
        {"PTTL", {2, true, false, &sim_node::cmd_pttl}},
        {"TYPE", {2, true, false, &sim_node::cmd_type}},
        {"TIME", {1, true, false, &sim_node::cmd_time}},
        {"HSET", {-4, true, true, &sim_node::cmd_hset}},
        {"HGET", {3, true, false, &sim_node::cmd_hget}},
        {"HDEL", {-3, true, true, &sim_node::cmd_hdel}},
        {"HLEN", {2, true, false, &sim_node::cmd_hlen}},
        {"HGETALL", {2, true, false, &sim_node::cmd_hgetall}},
        {"RPUSH", {-3, true, true, &sim_node::cmd_rpush}},
        {"LRANGE", {4, true, false, &sim_node::cmd_lrange}},
        {"PUBLISH", {3, true, false, &sim_node::cmd_publish}},
        {"PING", {-1, true, false, &sim_node::cmd_ping}},
        {"INFO", {-1, true, false, &sim_node::cmd_info}},
        {"SCRIPT", {-2, false, false, &sim_node::cmd_script}},
        {"EVAL", {-3, false, false, &sim_node::cmd_eval}},
        {"EVALSHA", {-3, false, false, &sim_node::cmd_evalsha}},
    };
    const auto it = table.find(name);
    return it == table.end() ? nullptr : &it->second;
}

sim_reply sim_node::dispatch(const args_t& args, bool from_script) {
    const auto name = upper(args[0]);
    const auto* spec = lookup(name);
    const auto argc = static_cast<int>(args.size());
    const bool arity_ok = spec && (spec->arity > 0 ? argc == spec->arity : argc >= -spec->arity);
    if (from_script) {
        // scriptCall's checks, in its order.
        if (!spec) {
            return sim_reply::error("ERR Unknown Redis command called from script");
        }
        if (!arity_ok) {
            return sim_reply::error("ERR Wrong number of args calling Redis command from script");
        }
        if (!spec->from_scripts) {
            return sim_reply::error("ERR This Redis command is not allowed from script");
        }
    } else if (!spec) {
        std::string shown;
        for (std::size_t i = 1; i < args.size() && shown.size() < 128; ++i) {
            shown += "'" + args[i].substr(0, 128 - shown.size()) + "' ";
        }
        return sim_reply::error("ERR unknown command '" + args[0].substr(0, 128) +
                                "', with args beginning with: " + shown);
    } else if (!arity_ok) {
        return sim_reply::error("ERR wrong number of arguments for '" + lower(args[0]) +
                                "' command");
    }
    if (spec->writes && read_only_replica_) {
        // processCommand's check for a client's command, scriptVerifyWriteCommandAllow's for
        // a script's call (scripts without a shebang run, and fail at their first write).
        return sim_reply::error("READONLY You can't write against a read only replica.");
    }
    return (this->*spec->run)(args);
}

sim_reply sim_node::script_command(const std::vector<std::string>& args) {
    ++commands_;
    return dispatch(args, true);
}

sim_reply sim_node::cmd_set(const args_t& a) {
    // parseExtendedStringArgumentsOrReply, then getExpireMillisecondsOrReply, then NX/XX.
    bool nx = false, xx = false, get = false, keepttl = false;
    const std::string* expire = nullptr;
    std::string unit;
    for (std::size_t j = 3; j < a.size(); ++j) {
        const auto opt = upper(a[j]);
        const bool has_next = j + 1 < a.size();
        if (opt == "NX" && !xx) {
            nx = true;
        } else if (opt == "XX" && !nx) {
            xx = true;
        } else if (opt == "GET") {
            get = true;
        } else if (opt == "KEEPTTL" && !expire) {
            keepttl = true;
        } else if ((opt == "EX" || opt == "PX" || opt == "EXAT" || opt == "PXAT") && !keepttl &&
                   !expire && has_next) {
            unit = opt;
            expire = &a[++j];
        } else {
            return syntax_error;
        }
    }
    const auto now_ms = time_ms();
    long long when = -1; // absolute ms
    if (expire) {
        long long v = 0;
        if (!parse_int(*expire, v)) {
            return not_an_integer;
        }
        const bool seconds = unit == "EX" || unit == "EXAT";
        const bool relative = unit == "EX" || unit == "PX";
        if (v <= 0 || (seconds && v > LLONG_MAX / 1000)) {
            return sim_reply::error("ERR invalid expire time in 'set' command");
        }
        v = seconds ? v * 1000 : v;
        if (relative && v > LLONG_MAX - now_ms) {
            return sim_reply::error("ERR invalid expire time in 'set' command");
        }
        when = relative ? now_ms + v : v;
    }
    auto* e = find(a[1]);
    if (get && e && e->type != kind::string) {
        return wrongtype;
    }
    const auto old = get && e ? sim_reply::bulk(e->value) : sim_reply::nil();
    if ((nx && e) || (xx && !e)) {
        return get ? old : sim_reply::nil();
    }
    const auto kept = keepttl && e ? e->expire_us : no_expiry;
    const bool was_live = e && e->type == kind::string && e->value == a[2];
    note_hold_written(a[1], a[2], was_live);
    auto& fresh = create(a[1], kind::string);
    fresh.value = a[2];
    if (when >= 0 && on_lock_set) {
        on_lock_set(a[1], a[2]);
    }
    if (when >= 0) {
        fresh.expire_us = unit == "PX" || unit == "EX" ? after_ms(local_us(), when - now_ms)
                                                       : after_ms(-epoch_ns / us, when);
    } else {
        fresh.expire_us = kept;
    }
    watch_expiry(a[1]);
    return get ? old : sim_reply::status("OK");
}

sim_reply sim_node::cmd_get(const args_t& a) {
    bool wrong = false;
    const auto* e = find_as(a[1], kind::string, wrong);
    if (wrong) {
        return wrongtype;
    }
    return e ? sim_reply::bulk(e->value) : sim_reply::nil();
}

sim_reply sim_node::cmd_del(const args_t& a) {
    long long count = 0;
    for (std::size_t i = 1; i < a.size(); ++i) {
        auto* e = find(a[i]);
        if (!e) {
            continue;
        }
        if (running(detail::release_script) && e->type == kind::string && running_.token &&
            e->value == *running_.token) {
            // release.lua's compare-and-delete of a plain lock.
            const auto refused = release_noscript_.find(e->value);
            if (running_.via_eval && on_note && refused != release_noscript_.end() &&
                e->written > refused->second) {
                on_note("defect 1 pattern on " + name() +
                        ": a compare-and-delete refused with NOSCRIPT, resent as EVAL, deleted " +
                        a[i] + " written by a later command with the same token " +
                        e->value.substr(0, 8));
            }
            if (on_delete) {
                on_delete(a[i], e->value);
            }
        }
        if (running(detail::force_release_script)) {
            note_force_delete(a[i], *e);
        }
        erase(a[i]);
        ++count;
    }
    return sim_reply::number(count);
}

sim_reply sim_node::cmd_pexpire(const args_t& a) {
    return expire(a, false);
}

sim_reply sim_node::cmd_pexpireat(const args_t& a) {
    return expire(a, true);
}

/// expireGenericCommand (Redis 7.0): the options, the integer, overflow, then NX/XX/GT/LT;
/// a time not after now deletes the key.
sim_reply sim_node::expire(const args_t& a, bool absolute) {
    bool nx = false, xx = false, gt = false, lt = false;
    for (std::size_t j = 3; j < a.size(); ++j) {
        const auto opt = upper(a[j]);
        if (opt == "NX") {
            nx = true;
        } else if (opt == "XX") {
            xx = true;
        } else if (opt == "GT") {
            gt = true;
        } else if (opt == "LT") {
            lt = true;
        } else {
            return sim_reply::error("ERR Unsupported option " + a[j]);
        }
    }
    if (nx && (xx || gt || lt)) {
        return sim_reply::error(
            "ERR NX and XX, GT or LT options at the same time are not compatible");
    }
    if (gt && lt) {
        return sim_reply::error("ERR GT and LT options at the same time are not compatible");
    }
    long long when = 0;
    if (!parse_int(a[2], when)) {
        return not_an_integer;
    }
    const auto now_ms = time_ms();
    if (!absolute && when > LLONG_MAX - now_ms) {
        return sim_reply::error(std::string("ERR invalid expire time in '") +
                                (absolute ? "pexpireat" : "pexpire") + "' command");
    }
    auto* e = find(a[1]);
    if (!e) {
        return sim_reply::number(0);
    }
    const long long target = absolute ? when : now_ms + when;
    // The current expiry in ms, -1 for none (infinite for GT and LT).
    const long long current =
        e->expire_us == no_expiry ? -1 : (epoch_ns / us + e->expire_us) / 1000;
    if ((nx && current != -1) || (xx && current == -1) ||
        (gt && (current == -1 || target <= current)) ||
        (lt && current != -1 && target >= current)) {
        return sim_reply::number(0);
    }
    if (target <= now_ms) {
        erase(a[1]);
        return sim_reply::number(1);
    }
    e->expire_us = absolute ? after_ms(-epoch_ns / us, target) : after_ms(local_us(), when);
    watch_expiry(a[1]);
    return sim_reply::number(1);
}

sim_reply sim_node::cmd_pttl(const args_t& a) {
    const auto* e = find(a[1]);
    if (!e) {
        return sim_reply::number(-2);
    }
    return sim_reply::number(e->expire_us == no_expiry ? -1
                                                       : (e->expire_us - local_us() + 999) / 1000);
}

sim_reply sim_node::cmd_type(const args_t& a) {
    const auto* e = find(a[1]);
    if (!e) {
        return sim_reply::status("none");
    }
    return sim_reply::status(e->type == kind::string ? "string"
                             : e->type == kind::hash ? "hash"
                                                     : "list");
}

sim_reply sim_node::cmd_time(const args_t&) {
    const auto us_now = (epoch_ns + local_now()) / us;
    return sim_reply::array({sim_reply::bulk(std::to_string(us_now / 1'000'000)),
                             sim_reply::bulk(std::to_string(us_now % 1'000'000))});
}

sim_reply sim_node::cmd_hset(const args_t& a) {
    if (a.size() % 2 == 1) {
        return sim_reply::error("ERR wrong number of arguments for 'hset' command");
    }
    bool wrong = false;
    auto* e = find_as(a[1], kind::hash, wrong);
    if (wrong) {
        return wrongtype;
    }
    if (!e) {
        e = &create(a[1], kind::hash);
    }
    long long added = 0;
    for (std::size_t i = 2; i < a.size(); i += 2) {
        auto it = std::find_if(e->fields.begin(), e->fields.end(),
                               [&](const auto& f) { return f.first == a[i]; });
        if (a[i] != "mode" && a[i] != "writer_waiting") {
            // A holder's field: its value is its deadline (ms on this node's TIME).
            const bool was_live = it != e->fields.end() && deadline_ahead(it->second);
            note_hold_written(a[1], a[i], was_live);
            if (on_lock_set) {
                on_lock_set(a[1], a[i]); // a reader's or a permit holder's hold: for (s) too
            }
        }
        if (it == e->fields.end()) {
            e->fields.emplace_back(a[i], a[i + 1]);
            ++added;
        } else {
            it->second = a[i + 1];
        }
    }
    e->written = commands_;
    return sim_reply::number(added);
}

sim_reply sim_node::cmd_hget(const args_t& a) {
    bool wrong = false;
    const auto* e = find_as(a[1], kind::hash, wrong);
    if (wrong) {
        return wrongtype;
    }
    if (e) {
        for (const auto& [field, value] : e->fields) {
            if (field == a[2]) {
                return sim_reply::bulk(value);
            }
        }
    }
    return sim_reply::nil();
}

sim_reply sim_node::cmd_hdel(const args_t& a) {
    bool wrong = false;
    auto* e = find_as(a[1], kind::hash, wrong);
    if (wrong) {
        return wrongtype;
    }
    if (!e) {
        return sim_reply::number(0);
    }
    long long removed = 0;
    for (std::size_t i = 2; i < a.size(); ++i) {
        const auto it = std::find_if(e->fields.begin(), e->fields.end(),
                                     [&](const auto& f) { return f.first == a[i]; });
        if (it == e->fields.end()) {
            continue;
        }
        e->fields.erase(it);
        ++removed;
        if (running(detail::release_script) && running_.token && a[i] == *running_.token &&
            on_delete) {
            on_delete(a[1], a[i]); // release.lua's removal of our holder from a lock hash
        }
    }
    if (e->fields.empty()) {
        erase(a[1]);
    }
    return sim_reply::number(removed);
}

sim_reply sim_node::cmd_hlen(const args_t& a) {
    bool wrong = false;
    const auto* e = find_as(a[1], kind::hash, wrong);
    if (wrong) {
        return wrongtype;
    }
    return sim_reply::number(e ? static_cast<long long>(e->fields.size()) : 0);
}

sim_reply sim_node::cmd_hgetall(const args_t& a) {
    bool wrong = false;
    const auto* e = find_as(a[1], kind::hash, wrong);
    if (wrong) {
        return wrongtype;
    }
    auto out = sim_reply::array({});
    if (e) {
        for (const auto& [field, value] : e->fields) {
            out.elements.push_back(sim_reply::bulk(field));
            out.elements.push_back(sim_reply::bulk(value));
        }
    }
    return out;
}

sim_reply sim_node::cmd_rpush(const args_t& a) {
    bool wrong = false;
    auto* e = find_as(a[1], kind::list, wrong);
    if (wrong) {
        return wrongtype;
    }
    if (!e) {
        e = &create(a[1], kind::list);
    }
    e->items.insert(e->items.end(), a.begin() + 2, a.end());
    e->written = commands_;
    return sim_reply::number(static_cast<long long>(e->items.size()));
}

sim_reply sim_node::cmd_lrange(const args_t& a) {
    long long start = 0;
    long long stop = 0;
    if (!parse_int(a[2], start) || !parse_int(a[3], stop)) {
        return not_an_integer;
    }
    bool wrong = false;
    const auto* e = find_as(a[1], kind::list, wrong);
    if (wrong) {
        return wrongtype;
    }
    auto out = sim_reply::array({});
    if (!e) {
        return out;
    }
    const auto n = static_cast<long long>(e->items.size());
    start = start < 0 ? std::max(0LL, n + start) : start;
    stop = stop < 0 ? n + stop : std::min(stop, n - 1);
    for (long long i = start; i <= stop; ++i) {
        out.elements.push_back(sim_reply::bulk(e->items[static_cast<std::size_t>(i)]));
    }
    return out;
}

sim_reply sim_node::cmd_publish(const args_t& a) {
    const auto& channel = a[1];
    const auto& payload = a[2];
    SIM_TRACE(world_, name(), "PUBLISH " + channel + " " + payload);
    if (on_publish) {
        on_publish(channel, payload);
    }
    long long receivers = 0;
    if (const auto it = channels_.find(channel); it != channels_.end()) {
        const auto sinks = it->second; // a sink may unsubscribe
        for (const auto& [id, sink] : sinks) {
            sink(channel, payload);
            ++receivers;
        }
    }
    return sim_reply::number(receivers);
}

sim_reply sim_node::cmd_ping(const args_t& a) {
    if (a.size() > 2) {
        return sim_reply::error("ERR wrong number of arguments for 'ping' command");
    }
    return a.size() == 2 ? sim_reply::bulk(a[1]) : sim_reply::status("PONG");
}

sim_reply sim_node::cmd_info(const args_t&) {
    const auto uptime = (world_.now() - started_) / sec;
    const bool evicts = faults_.evict_rate > 0;
    return sim_reply::bulk(
        "# Server\r\nredis_version:7.0.11\r\nrun_id:" + run_id_ + "\r\nuptime_in_seconds:" +
        std::to_string(uptime) + "\r\n\r\n# Memory\r\nmaxmemory:" + (evicts ? "3145728" : "0") +
        "\r\nmaxmemory_policy:" + (evicts ? "volatile-ttl" : "noeviction") +
        "\r\n\r\n# Stats\r\nevicted_keys:" + std::to_string(evicted_keys_) +
        "\r\n\r\n# Replication\r\nrole:" +
        (faults_.resync_rate > 0 || read_only_replica_ ? "slave\r\nmaster_host:10.0.0.1"
                                                       : "master") +
        "\r\nmaster_replid:" + replication_id_ + "\r\nmaster_replid2:" + replication_id2_ + "\r\n");
}

sim_reply sim_node::cmd_script(const args_t& a) {
    const auto sub = upper(a[1]);
    if (sub == "FLUSH" && a.size() <= 3) {
        scripts_.clear();
        return sim_reply::status("OK");
    }
    if (sub == "LOAD" && a.size() == 3) {
        const auto sha = sha_of(a[2]);
        auto compiled = lua_scripts::shared().load(sha, a[2]);
        if (compiled.is_error()) {
            return compiled;
        }
        scripts_.insert(sha);
        return sim_reply::bulk(sha);
    }
    if (sub == "EXISTS" && a.size() >= 3) {
        auto out = sim_reply::array({});
        for (std::size_t i = 2; i < a.size(); ++i) {
            out.elements.push_back(sim_reply::number(scripts_.count(lower(a[i])) ? 1 : 0));
        }
        return out;
    }
    return sim_reply::error("ERR unknown subcommand or wrong number of arguments for '" + a[1] +
                            "'. Try SCRIPT HELP.");
}

std::string sim_node::sha_of(const std::string& text) {
    // The same few texts come again and again (every connect's SCRIPT LOADs, every EVAL of
    // the TTL ceiling's raise): their SHA1s were a seventh of a schedule's instructions. One
    // cache for the process, like lua_scripts: a text's SHA1 never changes. Looked up by
    // length and opening (the texts differ there; a clash only costs a comparison) rather
    // than a hash of kilobytes of script.
    struct by_opening {
        std::size_t operator()(const std::string& text) const noexcept {
            return std::hash<std::string_view>{}(std::string_view(text).substr(0, 64)) ^
                   (text.size() * 0x9e3779b97f4a7c15ULL);
        }
    };
    static std::unordered_map<std::string, std::string, by_opening> known;
    const auto it = known.find(text);
    if (it != known.end()) {
        return it->second;
    }
    return known.emplace(text, sha1_hex(text)).first->second;
}

/// evalGenericCommand: numkeys, then the script (by SHA1 from the cache, or the text, which
/// EVAL loads into the cache), run with this node as the host of its redis.call.
sim_reply sim_node::eval(const args_t& a, bool by_sha) {
    long long numkeys = 0;
    if (!parse_int(a[2], numkeys)) {
        return not_an_integer;
    }
    if (numkeys > static_cast<long long>(a.size()) - 3) {
        return sim_reply::error("ERR Number of keys can't be greater than number of args");
    }
    if (numkeys < 0) {
        return sim_reply::error("ERR Number of keys can't be negative");
    }
    const auto keys_end = a.begin() + 3 + numkeys;
    std::string sha;
    if (by_sha) {
        sha = lower(a[1]);
        if (!scripts_.count(sha)) {
            if (sha == detail::release_script.sha1 && keys_end != a.end()) {
                release_noscript_[*keys_end] = commands_;
            }
            return sim_reply::error("NOSCRIPT No matching script. Please use EVAL.");
        }
    } else {
        sha = sha_of(a[1]);
        auto compiled = lua_scripts::shared().load(sha, a[1]);
        if (compiled.is_error()) {
            return compiled;
        }
        scripts_.insert(sha);
    }
    const std::span<const std::string> keys(a.begin() + 3, keys_end);
    const std::span<const std::string> argv(keys_end, a.end());
    // (o): a reader's acquire where a writer's mark is ahead must be refused.
    const bool reader_past_mark = sha == detail::holders_acquire_script.sha1 && argv.size() >= 3 &&
                                  argv[2] == "shared" && !keys.empty() &&
                                  writer_mark_ahead(keys[0]);
    running_ = {&sha, argv.empty() ? nullptr : &argv[0], !by_sha};
    auto out = lua_scripts::shared().run(sha, keys, argv, *this);
    running_ = {};
    if (reader_past_mark && out.kind != sim_reply::type::nil &&
        out.kind != sim_reply::type::error && on_violation) {
        on_violation("(o) a reader passed a waiting writer's mark",
                     name() + " granted reader " + argv[0].substr(0, 8) + " of " + keys[0] +
                         " while a writer's mark stood there next to an unexpired reader");
    }
    if (faults_.lies_about_counter && sha == detail::acquire_script.sha1 &&
        out.kind == sim_reply::type::bulk) {
        out = sim_reply::bulk("18446744073709551614");
    }
    return out;
}

bool sim_node::writer_mark_ahead(const std::string& key) {
    const auto* e = find(key);
    if (!e || e->type != kind::hash) {
        return false;
    }
    bool shared = false;
    bool mark = false;
    bool reader = false;
    for (const auto& [field, value] : e->fields) {
        if (field == "mode") {
            shared = value == "shared";
        } else if (field == "writer_waiting") {
            mark = deadline_ahead(value);
        } else {
            reader |= deadline_ahead(value);
        }
    }
    return shared && mark && reader;
}

void sim_node::note_force_delete(const std::string& key, const entry& e) {
    // (p): lock state only. Strings of a lock always have an expiry; a lock hash says its
    // kind in `mode`.
    bool lock_state = e.type == kind::string && e.expire_us != no_expiry;
    if (e.type == kind::hash) {
        for (const auto& [field, value] : e.fields) {
            long long permits = 0;
            lock_state |= field == "mode" &&
                          (value == "shared" ||
                           (parse_int(value, permits) && permits >= 1 && permits <= 1000000));
        }
    }
    if (!lock_state && on_violation) {
        on_violation("(p) a force release deleted what is no lock",
                     name() + " deleted " + key + ", " +
                         (e.type == kind::string ? "a string without expiry (a fencing counter?)"
                                                 : "not a lock"));
    }
    // force_release.lua deletes only lock strings (the value is the holder's token) and lock
    // hashes (a field per holder, next to `mode` and a writer's pending mark).
    const auto record = [&](const std::string& token) {
        forced_[{key, token}] = world_.now();
        if (on_force_delete) {
            on_force_delete(key, token);
        }
    };
    if (e.type == kind::string) {
        record(e.value);
    } else if (e.type == kind::hash) {
        for (const auto& [field, value] : e.fields) {
            if (field != "mode" && field != "writer_waiting") {
                record(field);
            }
        }
    }
}

void sim_node::note_hold_written(const std::string& key, const std::string& token, bool was_live) {
    if (on_hold_written) {
        on_hold_written(key, token);
    }
    // Judged before this write joins written_across_reconnect_: what matters is whether the
    // hold came back here from a write the client could not place before or after a restart.
    if (!was_live && running(detail::extend_script)) {
        const auto forced = forced_.find({key, token});
        if (forced != forced_.end() && (command_sent_at < 0 || command_sent_at > forced->second)) {
            if (written_across_reconnect_.count({key, token})) {
                if (on_note) {
                    on_note(
                        "(n) residue: a write-back after a force release of a hold a resend wrote "
                        "across a reconnect (docs/safety.md)");
                }
            } else if (on_forced_recreate) {
                on_forced_recreate(key, token);
            }
        }
    }
    if (sent_before_connect) {
        written_across_reconnect_.emplace(key, token);
    }
}

std::int64_t sim_node::time_ms() const {
    return (epoch_ns + local_now()) / ms;
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
    crashed_at_ = world_.now();
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
    const auto now = local_us();
    auto victim = data_.end();
    for (auto it = data_.begin(); it != data_.end(); ++it) {
        const auto& e = it->second;
        if (e.expire_us != no_expiry && now < e.expire_us &&
            (victim == data_.end() || e.expire_us < victim->second.expire_us ||
             (e.expire_us == victim->second.expire_us && it->first < victim->first))) {
            victim = it;
        }
    }
    if (victim == data_.end()) {
        return;
    }
    SIM_TRACE(world_, name(), "evicted " + victim->first);
    data_.erase(victim);
    ++evicted_keys_;
    evicted_at_ = world_.now();
    // forced_ stays: an eviction says that keys went, not which, so a client writes a key back
    // only where it saw a restart (recreate_where), never after an eviction alone.
}

void sim_node::restart(bool as_promoted_replica) {
    up_ = true;
    read_only_replica_ = false; // REPLICAOF without CONFIG REWRITE: a primary again
    evicted_keys_ = 0;
    started_ = world_.now();
    busy_until_ = world_.now();
    char id[48];
    std::snprintf(id, sizeof id, "%016llx%016llx%08x",
                  static_cast<unsigned long long>(world_.rng()()),
                  static_cast<unsigned long long>(world_.rng()()), static_cast<unsigned>(id_));
    run_id_ = id;
    // Derived from the run_id, not drawn: every other draw of a seed stays where it was.
    replication_id_ = std::string(run_id_.rbegin(), run_id_.rend());
    replication_id2_ = std::string(40, '0');
    if (as_promoted_replica) {
        // Another server's data set: the counters are the replica's, without the raises
        // that had not reached it (durable or not on the old primary).
        data_.clear();
        replication_id2_ = "f" + run_id_.substr(1);
        // The replica ran from 10 s to about a day before it was promoted.
        started_ -= 10 * sec + static_cast<real_ns>(std::hash<std::string>{}(run_id_) %
                                                    static_cast<std::uint64_t>(86400 * sec));
    }
    if (incarnation_ > 1) {
        SIM_TRACE(
            world_, name(),
            std::string(as_promoted_replica ? "failed over to a promoted replica" : "restarted") +
                ", run_id " + run_id_.substr(0, 8));
    }
}

void sim_node::demote() {
    if (!up_ || read_only_replica_) {
        return;
    }
    read_only_replica_ = true;
    // Its new primary's replication id, which the full resync hands it: never one this
    // node had (the others are hex).
    replication_id2_ = std::string(40, '0');
    replication_id_ =
        "in-place-" + std::to_string(id_) + "-" + std::to_string(++replication_ids_taken_);
    SIM_TRACE(world_, name(),
              "DEMOTED in place (REPLICAOF), resynced: lock keys and counters lost");
    const auto now_us = local_us();
    for (const auto& [key, e] : data_) {
        if (e.expire_us != no_expiry && now_us >= e.expire_us) {
            continue;
        }
        if (e.type == kind::string) {
            dropped_in_resync_[{key, e.value}] = world_.now();
        } else if (e.type == kind::hash) {
            for (const auto& [field, value] : e.fields) {
                dropped_in_resync_[{key, field}] = world_.now();
            }
        }
    }
    data_.clear();
    // What the force release and the reconnects left here went with the data set.
    forced_.clear();
    written_across_reconnect_.clear();
}

void sim_node::promote() {
    if (!up_ || !read_only_replica_) {
        return;
    }
    read_only_replica_ = false;
    replication_id2_ = replication_id_;
    replication_id_ =
        "in-place-" + std::to_string(id_) + "-" + std::to_string(++replication_ids_taken_);
    SIM_TRACE(world_, name(), "PROMOTED in place (REPLICAOF NO ONE), run_id unchanged");
}

real_ns sim_node::dropped_at(const std::string& key, const std::string& token) const {
    const auto it = dropped_in_resync_.find({key, token});
    return it == dropped_in_resync_.end() ? INT64_MIN : it->second;
}

void sim_node::flush_scripts() {
    scripts_.clear();
    SIM_TRACE(world_, name(), "SCRIPT FLUSH");
}

bool sim_node::holds(const std::string& key, const std::string& token) const {
    const auto it = data_.find(key);
    if (!up_ || it == data_.end()) {
        return false;
    }
    const auto& e = it->second;
    if (e.expire_us != no_expiry && local_us() >= e.expire_us) {
        return false;
    }
    if (e.type == kind::string) {
        return e.value == token;
    }
    if (e.type != kind::hash) {
        return false;
    }
    const auto field = std::find_if(e.fields.begin(), e.fields.end(),
                                    [&](const auto& f) { return f.first == token; });
    return field != e.fields.end() && deadline_ahead(field->second);
}

bool sim_node::deadline_ahead(const std::string& value) const {
    long long d = 0;
    return value.size() <= 15 && !value.empty() &&
           value.find_first_not_of("0123456789") == std::string::npos && parse_int(value, d) &&
           d > time_ms();
}

std::vector<std::string> sim_node::live_lock_keys() const {
    std::vector<std::string> out;
    const auto now = local_us();
    for (const auto& [key, e] : data_) {
        if (key.ends_with(":fence") || key.starts_with("fence:")) {
            continue;
        }
        // lua/clock_mark.lua's key: kept a fleet maximum after the last run, by design.
        if (key == quarantine_options{}.node_key_prefix + "clock") {
            continue;
        }
        // The TTL ceiling outlives the locks by design (keep, twice the fleet's maximum:
        // docs/safety.md); it must expire all the same.
        if (key == "redlock:ttl-ceiling" && e.expire_us != no_expiry) {
            continue;
        }
        if (e.expire_us == no_expiry || now < e.expire_us) {
            out.push_back(key);
        }
    }
    return out;
}

} // namespace redlock::sim
