// The simulated node's models of the scripts against a real Redis 7 node: the same random
// sequences of script calls and plain commands go to both, and every reply, every release
// message and, at the end, every key must agree. Time runs on a grid: ticks 100 ms apart,
// every ttl ends in 50 ms, so no deadline falls near a moment the two compare at (a real
// tick whose commands run late is discarded and replayed, not judged). Deadlines and PTTLs
// are compared in ticks from the start of the sequence.
#include "sim_node.hpp"
#include "support/script_node.hpp"
#include "transport/commands.hpp"

#include <redlock/fencing.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <random>
#include <thread>

namespace redlock::sim {
namespace {

using test::resp_value;
using test::script_node;
using steady = std::chrono::steady_clock;

constexpr auto tick = std::chrono::milliseconds(100);
/// A real tick's commands must be done by then, or the sequence is replayed.
constexpr auto tick_slack = std::chrono::milliseconds(40);

struct op {
    std::vector<std::string> args;
    enum class shape { plain, pttl, hgetall } kind = shape::plain;
};

/// A sequence: per tick, the operations run at its start.
using sequence = std::vector<std::vector<op>>;

std::vector<std::string> script_call(const detail::script& s, const std::vector<std::string>& keys,
                                     const std::vector<std::string>& argv) {
    std::vector<std::string> args{"EVAL", std::string(s.text), std::to_string(keys.size())};
    args.insert(args.end(), keys.begin(), keys.end());
    args.insert(args.end(), argv.begin(), argv.end());
    return args;
}

sequence make_sequence(std::uint64_t seed, const std::string& prefix) {
    std::mt19937_64 rng(seed);
    auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
    const std::vector<std::string> locks{prefix + "a", prefix + "b", prefix + "c"};
    std::vector<std::string> tokens;
    // A semaphore's holder's token ends in its slot: two of them share slot 0, so that a slot
    // taken refuses while a permit is free; one names a slot past 2 permits (an error).
    const std::vector<std::string> slots{"/0", "/1", "/0", "/2"};
    for (std::size_t i = 0; i < 4; ++i) {
        tokens.push_back(std::string(32, "0123"[i]) + slots[i]);
    }
    const std::vector<std::string> ttls{"150", "250", "450"};
    const std::vector<std::string> kinds{"", "shared", "2", "3"};
    // Each sequence mostly uses one kind of holder on one key, so that permits run out and
    // writers' marks meet readers; the rest mixes kinds to meet the mismatches.
    const auto theme = kinds[1 + pick(3)];
    auto holder_kind = [&] { return pick(10) < 8 ? theme : kinds[1 + pick(3)]; };
    auto holder_lock = [&] { return pick(10) < 7 ? locks[0] : locks[pick(3)]; };
    auto some_locks = [&] {
        auto keys = locks;
        std::shuffle(keys.begin(), keys.end(), rng);
        keys.resize(1 + pick(3));
        return keys;
    };
    auto counters = [](const std::vector<std::string>& keys) {
        std::vector<std::string> out;
        for (const auto& k : keys) {
            out.push_back(fencing_counter_key(k));
        }
        return out;
    };
    auto any_key = [&] {
        const auto& k = locks[pick(3)];
        return pick(5) == 0 ? fencing_counter_key(k) : k;
    };
    // Now and then an argument the scripts must refuse with their own error.
    auto ttl = [&] { return pick(40) == 0 ? std::string("0") : ttls[pick(3)]; };

    sequence seq(12);
    for (auto& ops : seq) {
        const auto count = pick(9);
        for (std::size_t i = 0; i < count; ++i) {
            const auto& token = tokens[pick(tokens.size())];
            const auto& lock = locks[pick(3)];
            switch (pick(19)) {
            case 0:
                ops.push_back({{"SET", lock, token, "NX", "PX", ttls[pick(3)]}});
                break;
            case 1:
                ops.push_back({{"GET", any_key()}});
                break;
            case 2:
                ops.push_back({{"PTTL", any_key()}, op::shape::pttl});
                break;
            case 3:
                ops.push_back({{"TYPE", any_key()}});
                break;
            case 4:
                ops.push_back({{"HGETALL", lock}, op::shape::hgetall});
                break;
            case 5:
                // A foreign type now and then; DEL takes it away again.
                ops.push_back(pick(3) == 0   ? op{{"RPUSH", lock, "x"}}
                              : pick(2) == 0 ? op{{"HSET", lock, "field", "1"}}
                                             : op{{"DEL", lock}});
                break;
            case 6:
            case 16:
            case 17:
                // With an announcement (a client's release) or without (a cleanup's).
                ops.push_back({pick(2) == 0
                                   ? script_call(detail::release_script, some_locks(), {token})
                                   : script_call(detail::release_script, some_locks(),
                                                 {token, detail::announcement_text(seed)})});
                break;
            case 7:
            case 8: {
                std::vector<std::string> argv{token, ttl(), pick(2) ? "1" : "0"};
                const auto kind = pick(2) ? holder_kind() : std::string();
                if (!kind.empty() || pick(2)) {
                    argv.push_back(kind);
                }
                const auto keys =
                    kind.empty() ? some_locks() : std::vector<std::string>{holder_lock()};
                ops.push_back({script_call(detail::extend_script, keys, argv)});
                break;
            }
            case 9: {
                auto keys = some_locks();
                const auto n = std::to_string(keys.size());
                if (pick(2)) {
                    const auto c = counters(keys);
                    keys.insert(keys.end(), c.begin(), c.end());
                }
                ops.push_back({script_call(detail::acquire_script, keys, {token, ttl(), n})});
                break;
            }
            case 10:
            case 11:
            case 12: {
                std::vector<std::string> keys{holder_lock()};
                if (pick(3) == 0) {
                    keys.push_back(fencing_counter_key(keys[0]));
                }
                const auto kind = pick(30) == 0 ? std::string("0") : holder_kind();
                ops.push_back(
                    {script_call(detail::holders_acquire_script, keys, {token, ttl(), kind})});
                break;
            }
            case 13: {
                auto keys = some_locks();
                const auto c = counters(keys);
                keys.insert(keys.end(), c.begin(), c.end());
                ops.push_back({script_call(detail::fence_raise_script, keys,
                                           {token, std::to_string(1 + pick(12))})});
                break;
            }
            case 14:
            case 15:
                ops.push_back(
                    {script_call(detail::writer_waiting_script, {holder_lock()}, {ttl()})});
                break;
            default:
                ops.push_back({script_call(detail::force_release_script, some_locks(), {})});
                break;
            }
        }
    }
    return seq;
}

/// What the two must agree on: the reply, with deadlines and PTTLs in ticks since `start_ms`.
std::string normal(const resp_value& v, op::shape shape, long long start_ms) {
    if (shape == op::shape::pttl && v.type == REDIS_REPLY_INTEGER && v.integer >= 0) {
        return "pttl ticks " + std::to_string(v.integer / 100);
    }
    if (shape == op::shape::hgetall && v.type == REDIS_REPLY_ARRAY) {
        std::map<std::string, std::string> fields;
        for (std::size_t i = 0; i + 1 < v.elements.size(); i += 2) {
            const auto& field = v.elements[i].text;
            const auto& value = v.elements[i + 1].text;
            // A holder (a token's field) or the writer's mark: a deadline on the node's clock.
            const bool deadline = (field.size() >= 32 || field == "writer_waiting") &&
                                  !value.empty() && value.size() <= 18 &&
                                  value.find_first_not_of("0123456789") == std::string::npos;
            fields[field] =
                deadline ? "tick " + std::to_string((std::stoll(value) - start_ms) / 100) : value;
        }
        std::string out = "{";
        for (const auto& [f, value] : fields) {
            out += (f.size() > 32 ? f.substr(0, 8) + f.substr(32) : f.substr(0, 8)) + ": " + value +
                   ", ";
        }
        return out + "}";
    }
    return v.show();
}

resp_value parse(const std::string& resp) {
    redisReader* reader = redisReaderCreate();
    redisReaderFeed(reader, resp.data(), resp.size());
    void* raw = nullptr;
    if (redisReaderGetReply(reader, &raw) != REDIS_OK || !raw) {
        redisReaderFree(reader);
        throw std::runtime_error("the simulated node's reply does not parse: " + resp);
    }
    auto v = test::to_value(static_cast<redisReply*>(raw));
    freeReplyObject(raw);
    redisReaderFree(reader);
    return v;
}

std::string describe(const std::vector<std::string>& args) {
    std::string out;
    for (const auto& a : args) {
        const bool script = a.size() > 60;
        out += (out.empty() ? "" : " ") + (script ? std::string("<script>") : a);
    }
    return out;
}

/// Runs one sequence on both; the first disagreement, "" when none, or nullopt when the real
/// node's timing left the grid (then the sequence proves nothing and is replayed). Counts
/// the operations compared into `compared`.
std::optional<std::string> compare(std::uint64_t seed, int attempt, long long& compared) {
    const std::string prefix =
        "conformance:" + std::to_string(seed) + ":" + std::to_string(attempt) + ":";
    const auto seq = make_sequence(seed, prefix);

    script_node real(1);
    script_node listener(1);
    listener.psubscribe("redlock:released:" + prefix + "*");
    world w(seed, false);
    sim_node simulated(w, 0, drift_clock{0, 1.0}, {});
    std::vector<std::string> sim_published;
    simulated.on_publish = [&](const std::string& channel, const std::string& payload) {
        sim_published.push_back(channel + " " + payload);
    };

    const auto time = real.call({"TIME"});
    const long long real_start =
        std::stoll(time.elements.at(0).text) * 1000 + std::stoll(time.elements.at(1).text) / 1000;
    const auto started = steady::now();
    const long long sim_start = simulated.time_ms();
    const real_ns sim_origin = w.now();

    std::string trace;
    std::optional<std::string> outcome = "";
    auto judge = [&](const op& o, const resp_value& real_reply,
                     const std::vector<std::string>& real_messages, std::size_t t) {
        const auto r = normal(real_reply, o.kind, real_start);
        const auto s = normal(parse(simulated.execute(o.args, "conformance")), o.kind, sim_start);
        if (steady::now() > started + t * tick + tick_slack) {
            outcome.reset();
            return false;
        }
        trace += "  tick " + std::to_string(t) + ": " + describe(o.args) + " -> " + r + "\n";
        if (r != s) {
            outcome =
                "seed " + std::to_string(seed) + ": real " + r + ", simulated " + s + "\n" + trace;
            return false;
        }
        if (real_messages != sim_published) {
            outcome = "seed " + std::to_string(seed) + ": real published " +
                      std::to_string(real_messages.size()) + ", simulated " +
                      std::to_string(sim_published.size()) + "\n" + trace;
            return false;
        }
        sim_published.clear();
        ++compared;
        return true;
    };
    auto check = [&](const op& o, std::size_t t) {
        const auto reply = real.call(o.args);
        return judge(o, reply, listener.messages(), t);
    };

    // The whole state of the sequence's keys, compared at every tick and after every
    // operation: a model that differs only in what it leaves behind is caught at once.
    std::vector<op> state;
    for (const auto name : {"a", "b", "c"}) {
        const auto key = prefix + name;
        state.push_back({{"GET", key}});
        state.push_back({{"PTTL", key}, op::shape::pttl});
        state.push_back({{"HGETALL", key}, op::shape::hgetall});
        state.push_back({{"GET", fencing_counter_key(key)}});
    }
    std::vector<std::vector<std::string>> state_commands;
    for (const auto& o : state) {
        state_commands.push_back(o.args);
    }
    auto same_state = [&](std::size_t t) {
        const auto length = trace.size();
        const auto replies = real.pipeline(state_commands); // one round trip: inside the tick
        for (std::size_t i = 0; i < state.size(); ++i) {
            if (!judge(state[i], replies[i], {}, t)) {
                return false;
            }
        }
        trace.resize(length);
        return true;
    };
    bool going = true;
    for (std::size_t t = 0; t < seq.size() && going; ++t) {
        std::this_thread::sleep_until(started + t * tick);
        w.at(sim_origin + static_cast<real_ns>(t) * 100 * ms, -1, [] {});
        w.run(nullptr, sim_origin + static_cast<real_ns>(t) * 100 * ms);
        going = same_state(t);
        for (std::size_t i = 0; i < seq[t].size() && going; ++i) {
            going = check(seq[t][i], t) && same_state(t);
        }
    }
    for (const auto& k : real.call({"KEYS", "*" + prefix + "*"}).elements) {
        real.call({"DEL", k.text});
    }
    return outcome;
}

TEST(sim_conformance, the_simulated_scripts_answer_as_redis_does) {
    const char* count = std::getenv("REDLOCK_CONFORMANCE_SEQUENCES");
    const int sequences = count && *count ? std::atoi(count) : 25;
    const char* from = std::getenv("REDLOCK_CONFORMANCE_FIRST");
    const std::uint64_t first = from && *from ? std::stoull(from) : std::random_device{}();
    int judged = 0;
    int replayed = 0;
    long long compared = 0;
    for (int i = 0; i < sequences; ++i) {
        const auto seed = first + static_cast<std::uint64_t>(i);
        for (int attempt = 0; attempt < 3; ++attempt) {
            const auto outcome = compare(seed, attempt, compared);
            if (!outcome) {
                ++replayed; // the machine was too slow for the grid
                continue;
            }
            ASSERT_EQ(*outcome, "") << "replay with REDLOCK_CONFORMANCE_FIRST=" << seed;
            ++judged;
            break;
        }
    }
    std::cout << judged << " sequences judged from seed " << first << ", " << replayed
              << " replayed off the grid, " << compared << " replies compared\n";
    EXPECT_GE(judged, sequences / 2) << "too few sequences ran on the grid to judge";
}

} // namespace
} // namespace redlock::sim
