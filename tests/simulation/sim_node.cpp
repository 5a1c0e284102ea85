#include "sim_node.hpp"

#include "transport/scripts.hpp"

#include <charconv>
#include <cstdio>

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

const detail::script* script_by_sha(std::string_view sha) {
    for (const auto* s :
         {&detail::release_script, &detail::extend_script, &detail::fence_acquire_script,
          &detail::fence_raise_script, &detail::fenced_call_script}) {
        if (s->sha1 == sha) {
            return s;
        }
    }
    return nullptr;
}

const detail::script* script_by_text(std::string_view text) {
    for (const auto* s :
         {&detail::release_script, &detail::extend_script, &detail::fence_acquire_script,
          &detail::fence_raise_script, &detail::fenced_call_script}) {
        if (s->text == text) {
            return s;
        }
    }
    return nullptr;
}

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
    return true;
}

std::string sim_node::execute(const std::vector<std::string>& args, const std::string& who) {
    ++commands_;
    if (args.empty()) {
        return error("ERR empty command");
    }
    const auto verb = upper(args[0]);
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
        return e ? bulk(e->value) : nil;
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
        return bulk("# Server\r\nredis_version:7.0.11\r\nrun_id:" + run_id_ +
                    "\r\nuptime_in_seconds:" + std::to_string(uptime) + "\r\n");
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
        if (keys.size() != 1 || argv.size() < 1) {
            return bad();
        }
        if (get(keys[0]) == argv[0]) {
            const auto refused = release_noscript_.find(argv[0]);
            if (via_eval && on_note && refused != release_noscript_.end() &&
                data_[keys[0]].written > refused->second) {
                on_note("defect 1 pattern on " + name() +
                        ": a compare-and-delete refused with "
                        "NOSCRIPT, resent as EVAL, deleted " +
                        keys[0] +
                        " written by a later "
                        "command with the same token " +
                        argv[0].substr(0, 8));
            }
            data_.erase(keys[0]);
            const std::string channel = "redlock:released:" + keys[0];
            if (const auto it = channels_.find(channel); it != channels_.end()) {
                const auto sinks = it->second; // a sink may unsubscribe
                for (const auto& [id, sink] : sinks) {
                    sink(channel);
                }
            }
            return integer(1);
        }
        return integer(0);
    }
    if (sha == detail::extend_script.sha1) {
        if (keys.size() != 1 || argv.size() < 2) {
            return bad();
        }
        long long ttl = 0;
        if (!parse_int(argv[1], ttl) || ttl <= 0) {
            return error("ERR Error running script: invalid expire time");
        }
        if (get(keys[0]) == argv[0]) {
            data_[keys[0]].expire_at = local_now() + ttl * ms;
            return integer(1);
        }
        if (argv.size() >= 3 && argv[2] == "1" && set_nx_px(keys[0], argv[0], ttl, true)) {
            return integer(1);
        }
        return integer(0);
    }
    if (sha == detail::fence_acquire_script.sha1) {
        if (keys.size() != 2 || argv.size() < 2) {
            return bad();
        }
        long long ttl = 0;
        if (!parse_int(argv[1], ttl) || ttl <= 0) {
            return error("ERR Error running script: invalid expire time");
        }
        const auto counter = get(keys[1]).value_or("0");
        if (set_nx_px(keys[0], argv[0], ttl, true)) {
            return bulk(counter);
        }
        return nil;
    }
    if (sha == detail::fence_raise_script.sha1) {
        if (keys.size() != 2 || argv.size() < 2) {
            return bad();
        }
        if (get(keys[0]) != argv[0]) {
            return integer(0);
        }
        const auto current = get(keys[1]).value_or("0");
        if (decimal_less(current, argv[1])) {
            data_[keys[1]] = entry{argv[1], -1, commands_};
            return integer(1);
        }
        return integer(0);
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
    auto cuts = on_crash;
    for (auto& [id, cut] : cuts) {
        cut();
    }
}

void sim_node::restart() {
    up_ = true;
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
