#include "scenario.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

namespace redlock::sim {

const char* name(profile p) {
    switch (p) {
    case profile::calm:
        return "calm";
    case profile::chaos:
        return "chaos";
    case profile::noscript_cleanup:
        return "noscript_cleanup";
    case profile::renewal_deadline:
        return "renewal_deadline";
    }
    return "?";
}

namespace {

using std::chrono::milliseconds;

constexpr double drift_factor = 0.01;
/// Longest ttl any operation of any profile draws (make_lock): the simulated fleet's maximum
/// when a schedule configures one.
constexpr milliseconds sim_fleet_max_ttl{300};
/// Salt of the generator of the fleet's maximum and of the restart under bare majorities.
constexpr std::uint64_t fleet_salt = 0x666c91d746ULL;
/// Salt of the generator of the restart under a lock whose ttl a smaller one raised first.
constexpr std::uint64_t raise_salt = 0x726169736500079aULL;
/// Salt of the generator of whether a schedule's clients learn quarantines from TTL ceilings.
constexpr std::uint64_t learn_salt = 0x6c6561726e0007a1ULL;
/// Salt of the generator of whether the other clients of a bare-majority restart use a lowered
/// maximum: none of regression_seeds.txt recorded before it gets one (they replay the schedules
/// that found their bugs).
constexpr std::uint64_t lower_salt = 0x6c6f7765720023c0ULL;
/// Salt of the generator of the nodes' keyspace notifications.
constexpr std::uint64_t keyspace_salt = 0x6b657973706163feULL;
/// Salt of the generator of the nodes that refuse INFO.
constexpr std::uint64_t info_salt = 0x696e666f000001b4ULL;
/// Salt of the generator of the held extend replies.
constexpr std::uint64_t hold_salt = 0x686f6c6465787406ULL;
/// Salt of the generator of a client's lanes side by side.
constexpr std::uint64_t lanes_salt = 0x6c616e6573000666ULL;
/// Salt of the generator of the nodes whose fencing counters a crash loses.
constexpr std::uint64_t counters_salt = 0x636f756e74000175ULL;
/// Salt of the generator of the writable replicas listed as nodes.
constexpr std::uint64_t replica_salt = 0x7265706c696361a5ULL;
/// Salt of the generator of the crashes that end in a failover (a promoted replica).
constexpr std::uint64_t failover_salt = 0x6661696c6f7665d1ULL;
/// Salt of the generator of the in-place role changes (a demotion and a promotion under live
/// connections): none of regression_seeds.txt recorded before it gets one.
constexpr std::uint64_t role_change_salt = 0x726f6c65000000cdULL;

drift_clock make_clock(world& w) {
    // Rates within a quarter of the drift factor either way: client/node rate ratios stay
    // inside what clock_drift_factor promises to cover.
    return {w.uniform(1 * sec, 1000 * sec),
            1.0 + w.uniform_real(-drift_factor / 4, drift_factor / 4)};
}

template <typename T>
T pick(world& w, std::initializer_list<T> options) {
    return *(options.begin() + w.uniform(0, static_cast<std::int64_t>(options.size()) - 1));
}

lock_options make_lock(world& w, profile p) {
    lock_options o;
    o.clock_drift_factor = drift_factor;
    o.drift_allowance = milliseconds(2);
    o.min_validity = milliseconds(1);
    o.ttl = milliseconds(pick<int>(w, {40, 80, 150, 300}));
    o.node_timeout = milliseconds(pick<int>(w, {3, 8, 15, 30}));
    o.retry.max_attempts = static_cast<unsigned>(w.uniform(1, 4));
    o.retry.backoff_initial = milliseconds(pick<int>(w, {1, 3, 10}));
    o.retry.backoff_max = milliseconds(50);
    o.fencing = w.chance(0.3);
    if (p == profile::noscript_cleanup) {
        o.ttl = milliseconds(pick<int>(w, {150, 300}));
        o.node_timeout = milliseconds(pick<int>(w, {30, 40, 50}));
        o.retry.max_attempts = static_cast<unsigned>(w.uniform(3, 8));
        o.retry.backoff_initial = milliseconds(pick<int>(w, {1, 3, 8}));
        o.retry.backoff_max = milliseconds(20);
        o.fencing = w.chance(0.2);
    } else if (p == profile::renewal_deadline) {
        o.ttl = milliseconds(pick<int>(w, {80, 150}));
        o.node_timeout = milliseconds(pick<int>(w, {20, 30, 40}));
    }
    o.node_timeout = std::min(o.node_timeout, o.ttl / 3);
    return o;
}

op_plan make_op(world& w, profile p, int keys) {
    op_plan op;
    op.key = "k" + std::to_string(w.uniform(0, keys - 1));
    op.lock = make_lock(w, p);
    const auto ttl = std::chrono::nanoseconds(op.lock.ttl).count();
    op.gap = w.uniform(0, 30 * ms);
    const int what = static_cast<int>(w.uniform(0, 2));
    op.what = static_cast<op_plan::kind>(what);
    if (p == profile::noscript_cleanup) {
        op.what = op_plan::kind::plain;
        op.gap = w.uniform(0, 5 * ms);
        // Long enough that a contender retrying meanwhile can win the deleted node.
        op.hold = w.uniform(5 * ms, 100 * ms);
    } else if (p == profile::renewal_deadline) {
        op.what = w.chance(0.5) ? op_plan::kind::with_lock : op_plan::kind::watchdog;
    }
    switch (op.what) {
    case op_plan::kind::plain:
        if (p != profile::noscript_cleanup) {
            op.hold = w.uniform(0, ttl);
        }
        op.extend_midway = w.chance(0.3);
        break;
    case op_plan::kind::watchdog:
    case op_plan::kind::with_lock:
        // Sometimes outlives the ttl: then only renewal keeps it valid.
        op.hold = w.uniform(0, 3 * ttl);
        op.cancellable_work = w.chance(0.7);
        op.renewal.recreate_missing = w.chance(0.3);
        if (w.chance(0.3)) {
            op.renewal.interval = op.lock.ttl / static_cast<int>(w.uniform(2, 5));
        }
        if (p == profile::renewal_deadline) {
            op.renewal.interval = op.lock.ttl - op.lock.ttl / 8;
            op.renewal.retry_delay = milliseconds(w.uniform(1, 5));
        }
        break;
    }
    if (w.chance(p == profile::noscript_cleanup ? 0.05 : 0.15)) {
        op.cancel_after = w.uniform(0, 20 * ms);
    }
    return op;
}

/// A client's first operation after a restart: a 40 ms lock, all its own ttl could tell it,
/// retried long enough to meet the restarted node's quarantine end.
void contend_after_restart(op_plan& op, real_ns gap) {
    op.gap = gap;
    op.lock.ttl = milliseconds(40);
    op.lock.node_timeout = std::min(op.lock.node_timeout, op.lock.ttl / 3);
    op.lock.retry.max_attempts = 8;
    op.lock.retry.backoff_initial = milliseconds(10);
    if (op.renewal.interval > op.lock.ttl) {
        op.renewal.interval = op.lock.ttl / 2;
    }
    op.cancel_after = -1;
}

/// A role change's own workload, on the first key and without the schedule's other faults.
/// `lock_over_it`: a lock stands on a bare majority that includes the node when it is demoted
/// (client 0 cut off from a minority of the others until then), and the other clients, who
/// knew the node from before, ask for the same key once it is a primary again. The node was
/// promoted before the schedule began, so that its master_replid2 said so all along: only
/// the change of master_replid tells them that it lost the lock (mutant `aa`). Else: client
/// 0 takes a watchdog lock that writes back missing holds (recreate_missing) right after
/// the promotion, which an operator then force-releases; the client's next INFO shows the
/// change after its grant, and the renewal must not write the hold back on the node, whose
/// data set that grant already reached (mutant `ab`, and (n)).
template <typename Draw>
void role_change_workload(scenario& s, fault& change, bool lock_over_it, Draw& draw) {
    const int nodes = static_cast<int>(s.nodes.size());
    const auto clients = s.ops.size();
    s.faults.clear();
    s.duplicate.client = -1;
    // Nothing else that could keep the lock from its bare majority, or its contenders from
    // theirs, within their short node timeouts: the workload's point is the role change.
    for (auto& each : s.nodes) {
        each.error_rate = 0;
        each.slow_rate = 0;
        each.evict_rate = 0;
        each.info_refused_rate = 0;
        each.resync_rate = 0;
        each.lies_about_counter = false;
    }
    s.net.tail_rate = 0;
    auto& node = s.nodes[static_cast<std::size_t>(change.node)];
    node.evict_rate = 0;
    node.info_refused_rate = 0;
    const std::string key = "k0";
    // Connects every link at once, so that the node is known before the change.
    const auto first_contact = [&key](op_plan& op, real_ns gap) {
        op.what = op_plan::kind::plain;
        op.key = key;
        op.more_keys.clear();
        op.lock.mode = lock_mode::exclusive;
        op.lock.permits = 0;
        op.lock.ttl = milliseconds(40);
        op.lock.node_timeout = milliseconds(10);
        op.lock.retry.max_attempts = 4;
        op.gap = gap;
        op.hold = 0;
        op.extend_midway = false;
        op.cancel_after = -1;
        op.lane = 0;
    };
    for (auto& ops : s.ops) {
        ops.resize(1);
        first_contact(ops[0], draw(0, 20 * ms));
    }
    // Lost replies would break the links that knew the node (a reconnect reads INFO first).
    s.net.lost_reply_rate = 0;
    auto& c0 = s.ops[0];
    c0[0].gap = 0;
    // The workload's own operations in a second lane, their gaps counted from the start
    // rather than from the end of the first contact.
    op_plan second = c0[0];
    second.lane = 1;
    if (lock_over_it) {
        node.promoted_before_start = true;
        // The clients' first sight of a promoted node quarantines it for the maximum: the
        // lock starts once that is over.
        s.config.fleet_max_ttl = sim_fleet_max_ttl;
        s.config.eviction.refresh_interval = milliseconds(draw(10, 40));
        second.lock.ttl = sim_fleet_max_ttl;
        second.lock.node_timeout = milliseconds(30);
        second.gap = 400 * ms;
        second.hold = 250 * ms;
        change.at = 430 * ms + draw(10 * ms, 30 * ms);
        change.duration = draw(1 * ms, 20 * ms);
        for (int k = 1; k <= nodes / 2; ++k) {
            fault cut;
            cut.what = fault::kind::partition;
            cut.client = 0;
            cut.node = (change.node + k) % nodes;
            cut.at = 350 * ms;
            cut.duration = change.at - cut.at;
            // The connections break: the lock's SETs to these nodes are lost rather than
            // delivered once the cut heals, so that the other clients find them free.
            cut.break_now = true;
            s.faults.push_back(cut);
        }
        for (std::size_t c = 1; c < clients; ++c) {
            op_plan contender = s.ops[c][0];
            contender.lane = 1;
            contend_after_restart(contender,
                                  change.at + change.duration + draw(0, 60 * ms) - 20 * ms);
            contender.hold = draw(5 * ms, 30 * ms);
            s.ops[c].push_back(contender);
        }
    } else {
        change.at = draw(40 * ms, 80 * ms);
        change.duration = draw(1 * ms, 20 * ms);
        const real_ns promoted = change.at + change.duration;
        s.config.eviction.refresh_interval = milliseconds(draw(20, 60));
        second.what = op_plan::kind::watchdog;
        second.lock.ttl = milliseconds(150);
        second.lock.node_timeout = milliseconds(15);
        second.renewal.recreate_missing = true;
        second.renewal.interval = milliseconds(50);
        second.gap = promoted + draw(0, 10 * ms) - 5 * ms;
        second.hold = 400 * ms;
        fault force;
        force.what = fault::kind::force_release;
        force.client = 1;
        force.key = key;
        force.at = promoted + draw(10 * ms, 50 * ms);
        s.faults.push_back(force);
        for (std::size_t c = 1; c < clients; ++c) {
            s.ops[c][0].gap = 500 * ms + draw(0, 50 * ms);
        }
    }
    c0.push_back(second);
}

} // namespace

scenario make_scenario(world& w, int forced_profile) {
    scenario s;
    const auto roll = w.uniform(0, 99);
    s.prof = roll < 15   ? profile::calm
             : roll < 60 ? profile::chaos
             : roll < 80 ? profile::noscript_cleanup
                         : profile::renewal_deadline;
    if (forced_profile >= 0) {
        s.prof = static_cast<profile>(forced_profile);
    }
    const bool chaos = s.prof == profile::chaos;
    const int nodes = s.prof == profile::noscript_cleanup ? 3 : (w.chance(0.6) ? 3 : 5);
    const int clients =
        static_cast<int>(s.prof == profile::noscript_cleanup ? w.uniform(3, 4) : w.uniform(2, 5));
    const int keys = s.prof == profile::noscript_cleanup ? 1 : static_cast<int>(w.uniform(1, 2));

    s.net.latency_min = 20 * us;
    s.net.latency_mean = w.uniform(100 * us, chaos ? 2 * ms : 500 * us);
    s.net.tail_rate = chaos ? w.uniform_real(0, 0.05) : 0.01;
    s.net.tail_max = chaos ? 60 * ms : 10 * ms;
    s.net.lost_reply_rate = chaos ? w.uniform_real(0, 0.02) : 0;

    for (int n = 0; n < nodes; ++n) {
        s.node_clocks.push_back(make_clock(w));
        node_faults f;
        if (chaos) {
            f.error_rate = w.chance(0.5) ? w.uniform_real(0, 0.05) : 0;
            f.slow_rate = w.chance(0.5) ? w.uniform_real(0, 0.05) : 0;
            f.slow_max = 30 * ms;
        } else if (s.prof == profile::renewal_deadline) {
            f.slow_rate = w.uniform_real(0.1, 0.4);
            f.slow_max = 50 * ms;
        }
        s.nodes.push_back(f);
    }
    int flaky = -1;
    if (s.prof == profile::noscript_cleanup) {
        flaky = static_cast<int>(w.uniform(0, nodes - 1));
        auto& x = s.nodes[static_cast<std::size_t>(flaky)];
        x.error_rate = w.uniform_real(0.1, 0.3);
        // Stalls (a long script, a big DEL) that queue a cleanup and the next attempt's SET
        // behind them, yet end within a node_timeout.
        x.slow_rate = w.uniform_real(0.1, 0.3);
        x.slow_max = 25 * ms;
    }

    real_ns horizon = 0;
    for (int c = 0; c < clients; ++c) {
        s.client_clocks.push_back(make_clock(w));
        std::vector<op_plan> ops;
        const int count =
            static_cast<int>(w.uniform(1, s.prof == profile::noscript_cleanup ? 4 : 3));
        real_ns total = 0;
        for (int i = 0; i < count; ++i) {
            ops.push_back(make_op(w, s.prof, keys));
            total += ops.back().gap + ops.back().hold + 50 * ms;
            s.max_ttl = std::max(s.max_ttl, ops.back().lock.ttl);
        }
        horizon = std::max(horizon, total);
        s.ops.push_back(std::move(ops));
    }

    auto add = [&](fault::kind k, int count, real_ns max_duration) {
        for (int i = 0; i < count; ++i) {
            fault f;
            f.what = k;
            f.at = w.uniform(0, horizon);
            f.duration = w.uniform(1 * ms, max_duration);
            f.client = static_cast<int>(w.uniform(0, clients - 1));
            f.node = static_cast<int>(w.uniform(0, nodes - 1));
            f.break_now = w.chance(0.5);
            s.faults.push_back(f);
        }
    };
    const auto ttl_ns = std::chrono::nanoseconds(s.max_ttl).count();
    switch (s.prof) {
    case profile::calm:
        add(fault::kind::pause, static_cast<int>(w.uniform(0, 1)), ttl_ns);
        break;
    case profile::chaos:
        add(fault::kind::pause, static_cast<int>(w.uniform(0, 3)), 2 * ttl_ns);
        add(fault::kind::partition, static_cast<int>(w.uniform(0, 2)), 2 * ttl_ns);
        add(fault::kind::cut, static_cast<int>(w.uniform(0, 2)), 1);
        add(fault::kind::crash, static_cast<int>(w.uniform(0, 1)), 100 * ms);
        add(fault::kind::flush, static_cast<int>(w.uniform(0, 2)), 1);
        break;
    case profile::noscript_cleanup: {
        // The flaky node's script cache is flushed every few milliseconds, so that a
        // cleanup sent there usually meets an empty cache.
        const real_ns every = w.uniform(2 * ms, 15 * ms);
        for (real_ns t = w.uniform(0, every); t < horizon; t += every) {
            fault f;
            f.what = fault::kind::flush;
            f.at = t;
            f.node = flaky;
            s.faults.push_back(f);
        }
        add(fault::kind::pause, static_cast<int>(w.uniform(0, 1)), ttl_ns);
        break;
    }
    case profile::renewal_deadline:
        add(fault::kind::pause, static_cast<int>(w.uniform(0, 1)), ttl_ns);
        add(fault::kind::flush, static_cast<int>(w.uniform(0, 1)), 1);
        break;
    }

    // One schedule in eight closes one client mid-workload. Drawn from a generator of its
    // own, so that the schedules of every seed without a close stay exactly what they were;
    // the salt is one under which no seed of regression_seeds.txt recorded before closes
    // existed gets one, so that they still replay the schedules that found their bugs.
    std::mt19937_64 closer(w.seed() ^ 0x636c6f7366ULL);
    if (closer() % 8 == 0) {
        fault f;
        f.what = fault::kind::close;
        f.client = static_cast<int>(closer() % static_cast<std::uint64_t>(clients));
        f.at = static_cast<real_ns>(closer() % static_cast<std::uint64_t>(horizon + 1));
        f.after_release = closer() % 2 == 0;
        s.faults.push_back(f);
    }

    // One schedule in three runs the lock family: each key is a read-write lock (its
    // operations readers or writers, some writers over both keys at once) or a semaphore
    // of 1 to 3 permits. Drawn from a generator of its own, salted so that no seed of
    // regression_seeds.txt gets it: they still replay the schedules that found their bugs.
    std::mt19937_64 family(w.seed() ^ 0x66616d6971a9ULL);
    if (family() % 3 == 0) {
        std::vector<unsigned> permits(static_cast<std::size_t>(keys));
        for (auto& p : permits) {
            p = family() % 2 == 0 ? 0 : 1 + static_cast<unsigned>(family() % 3);
        }
        for (auto& client_ops : s.ops) {
            for (auto& op : client_ops) {
                const auto k = static_cast<std::size_t>(std::stoi(op.key.substr(1)));
                if (permits[k] != 0) {
                    op.lock.mode = lock_mode::permit;
                    op.lock.permits = permits[k];
                    continue;
                }
                const auto pick = family() % 3;
                const auto other = 1 - k;
                if (pick == 0) {
                    op.lock.mode = lock_mode::shared;
                } else if (pick == 1 && keys == 2 && permits[other] == 0 &&
                           op.what != op_plan::kind::with_lock) {
                    op.more_keys.push_back("k" + std::to_string(other));
                }
            }
        }
        // One family schedule in four has a client that disagrees on a semaphore's permit
        // count (a misconfiguration): where a quorum holds the other count, its acquire must
        // end with lock_mismatch, and the two counts never hold the key at once (a). Drawn
        // after everything above, so that the other family schedules stay what they were.
        const auto disagrees = family() % 4 == 0;
        const auto client = family() % static_cast<std::uint64_t>(clients);
        for (std::size_t k = 0; disagrees && k < permits.size(); ++k) {
            if (permits[k] == 0) {
                continue;
            }
            for (auto& op : s.ops[client]) {
                if (op.key == "k" + std::to_string(k)) {
                    op.lock.permits = permits[k] % 3 + 1;
                }
            }
        }
    }

    // One schedule in six force-releases a key of the workload from one client, as an
    // operator would: a watchdog with recreate_missing must not write it back (n). A
    // generator of its own, salted like the ones above.
    std::mt19937_64 forcer(w.seed() ^ 0x666f726365ULL);
    if (forcer() % 6 == 0) {
        fault f;
        f.what = fault::kind::force_release;
        f.client = static_cast<int>(forcer() % static_cast<std::uint64_t>(clients));
        f.at = static_cast<real_ns>(forcer() % static_cast<std::uint64_t>(horizon + 1));
        f.key = "k" + std::to_string(forcer() % static_cast<std::uint64_t>(keys));
        // Half of them name the key's fencing counter as well (drawn last, so that the
        // force releases of other seeds stay what they were): not lock state, left alone (p).
        f.with_counter = forcer() % 2 == 0;
        s.faults.push_back(f);
    }

    // One schedule in six with three nodes or more has a node that lies about its fencing
    // counter: a fenced acquire must refuse it rather than raise the honest counters to
    // 2^64-1. A generator of its own, salted like the ones above.
    std::mt19937_64 liar(w.seed() ^ 0x6c6961720bULL);
    if (nodes >= 3 && liar() % 6 == 0) {
        s.nodes[static_cast<std::size_t>(liar() % static_cast<std::uint64_t>(nodes))]
            .lies_about_counter = true;
    }

    // One schedule in eight with three nodes or more has a client that lists one server
    // twice, under a second address in place of another node: counted twice, its votes
    // would let that client grant with two real nodes out of five, beside another client's
    // majority (a). A generator of its own, salted like the ones above.
    std::mt19937_64 doubler(w.seed() ^ 0x6475706c69ULL);
    if (nodes >= 3 && doubler() % 8 == 0) {
        s.duplicate.client = static_cast<int>(doubler() % static_cast<std::uint64_t>(clients));
        s.duplicate.node = static_cast<int>(doubler() % static_cast<std::uint64_t>(nodes));
        s.duplicate.replaced =
            static_cast<int>((static_cast<std::uint64_t>(s.duplicate.node) + 1 +
                              doubler() % static_cast<std::uint64_t>(nodes - 1)) %
                             static_cast<std::uint64_t>(nodes));
    }

    // One schedule in four (every one with REDLOCK_SIM_CLOCK_STEPS=1) steps one or two
    // nodes' wall clocks, forward or back, by a little (within the detector's margin) or a
    // lot: keys expire early on a clock stepped forward, and the clients must see it
    // (history.hpp, "Clock steps"). A generator of its own, salted like the ones above (no
    // seed of regression_seeds.txt recorded before clock steps existed gets one).
    std::mt19937_64 stepper(w.seed() ^ 0x737465745fULL);
    const char* every_step = std::getenv("REDLOCK_SIM_CLOCK_STEPS");
    const bool forced_steps = every_step && std::string(every_step) == "1";
    if (stepper() % 4 == 0 || forced_steps) {
        const auto count = 1 + static_cast<int>(stepper() % 2);
        for (int i = 0; i < count; ++i) {
            fault f;
            f.what = fault::kind::clock_step;
            f.node = static_cast<int>(stepper() % static_cast<std::uint64_t>(nodes));
            f.at = static_cast<real_ns>(stepper() % static_cast<std::uint64_t>(horizon + 1));
            const real_ns sizes[] = {5 * ms, 50 * ms, 500 * ms, 3 * sec};
            f.step = 1 + static_cast<real_ns>(stepper() %
                                              static_cast<std::uint64_t>(sizes[stepper() % 4]));
            if (stepper() % 3 == 0) {
                f.step = -f.step;
            }
            s.faults.push_back(f);
        }
        // Half of them read TIME (with INFO) every 10 to 100 ms rather than every second, as
        // a user may configure: samples then often fall between a step and the grant it
        // would spoil, where the detector must act; at 1 s, most steps are residue.
        if (stepper() % 2 == 0) {
            s.config.eviction.refresh_interval =
                milliseconds(10 + static_cast<int>(stepper() % 91));
        }
        // Half the forward steps are put right later (NTP stepping the clock back, a VM's
        // clock corrected after a resume): ahead for a while, which a client that samples
        // only before and after sees no trace of, unless some client's lua/clock_mark.lua
        // ran meanwhile and recorded the step back on the node. Drawn last, so that the
        // schedules drawn before corrections existed keep everything else.
        const auto planned = s.faults.size();
        for (auto i = planned - static_cast<std::size_t>(count); i < planned; ++i) {
            if (s.faults[i].step > 0 && stepper() % 2 == 0) {
                fault back = s.faults[i];
                back.at += 1 + static_cast<real_ns>(
                                   stepper() % static_cast<std::uint64_t>(horizon - back.at + 1));
                back.step = -back.step;
                s.faults.push_back(back);
            }
        }
    }

    s.config.connect_timeout = milliseconds(20);
    s.config.reconnect_delay_initial = milliseconds(5);
    s.config.reconnect_delay_max = milliseconds(100);
    // The restart quarantine as users get it: never tuned to this schedule's ttls (which
    // differ from operation to operation, and so from client to client). Half the schedules
    // keep the library's default fleet maximum (60 s: a restarted node never votes again
    // within the schedule); the other half configure the simulated fleet's own maximum, the
    // longest ttl any profile draws, so that restarted nodes come back and vote while the
    // locks of other, longer-ttl clients may still stand.
    std::mt19937_64 fleet(w.seed() ^ fleet_salt);
    if (fleet() % 2 == 0) {
        s.config.fleet_max_ttl = sim_fleet_max_ttl;
    }
    // Half the schedules (all profiles) also restart one node under a lock that stands on a
    // bare majority, while clients with shorter locks ask for the same key: client 0 starts
    // with the longest plain lock, cut off from a minority of the other nodes until the
    // restart, so that its majority includes the restarting node; the other clients start
    // after the restart with the shortest TTL, which is all their own locks could tell them,
    // and find the restarted node and the cut-off ones free. Drawn from the same generator
    // of their own, whose salt gives none of regression_seeds.txt this restart: they replay
    // the schedules that found their bugs.
    const bool bare_restart = fleet() % 2 == 0;
    // Clients wait out the maximum, as users get it: learning restarted nodes' quarantines
    // from the other nodes' TTL ceilings (quarantine_options::learn_from_ttl_ceilings) is
    // off by default because it is not safe yet (docs/safety.md, "The TTL ceiling": seed
    // 764492854910 grants twice with it). REDLOCK_SIM_LEARN_CEILINGS=1 turns it on in half
    // the schedules and in the workload below, to explore it and to measure mutant h. A
    // generator of its own, so that every other draw stays as it was.
    const char* learn = std::getenv("REDLOCK_SIM_LEARN_CEILINGS");
    const bool explore_learning = learn && *learn == '1';
    std::mt19937_64 learner(w.seed() ^ learn_salt);
    s.config.quarantine.learn_from_ttl_ceilings = explore_learning && learner() % 2 == 0;
    if (bare_restart) {
        const auto draw = [&fleet](real_ns from, real_ns to) {
            return from + static_cast<real_ns>(fleet() % static_cast<std::uint64_t>(to - from + 1));
        };
        const int restarted = static_cast<int>(fleet() % static_cast<std::uint64_t>(nodes));
        fault crash;
        crash.what = fault::kind::crash;
        crash.node = restarted;
        crash.at = draw(20 * ms, 80 * ms);
        crash.duration = draw(1 * ms, 20 * ms);
        s.faults.push_back(crash);
        const real_ns back = crash.at + crash.duration;
        for (int k = 1; k <= nodes / 2; ++k) {
            fault cut;
            cut.what = fault::kind::partition;
            cut.client = 0;
            cut.node = (restarted + k) % nodes;
            cut.at = 0;
            cut.duration = back;
            cut.break_now = fleet() % 2 == 0;
            s.faults.push_back(cut);
        }
        auto& first = s.ops[0][0];
        first.what = op_plan::kind::plain;
        first.lock.ttl = sim_fleet_max_ttl;
        first.lock.node_timeout = milliseconds(30);
        first.lock.retry.max_attempts = 4;
        first.gap = 0;
        first.hold = draw(back + 60 * ms, 280 * ms);
        first.extend_midway = false;
        first.cancel_after = -1;
        for (int c = 1; c < clients; ++c) {
            contend_after_restart(s.ops[static_cast<std::size_t>(c)][0], back + draw(0, 20 * ms));
        }
        // Half of these lower the maximum while client 0's lock of the old one stands: the
        // other clients are configured with half the old maximum (their locks capped to it),
        // with the default settings otherwise. Only the restarted node's quarantine as long
        // as the ceiling client 0 raised, read from the other nodes, keeps them from counting
        // it while that lock stands (docs/safety.md, "The TTL ceiling").
        std::mt19937_64 lowering(w.seed() ^ lower_salt);
        if (lowering() % 2 == 0) {
            s.lowered_max_ttl = std::min(s.config.fleet_max_ttl, sim_fleet_max_ttl) / 2;
            // What the check needs, and all it claims (docs/safety.md, "The TTL ceiling"):
            // the lowered clients hear from the restarted node within their maximum (their
            // first operation starts right after the restart and retries), and their reads
            // reach the nodes that did not restart and find what client 0 raised. So no
            // fault but this workload's own: a reader cut off or failing, a reply lost,
            // another crash, a flush, a stepped clock, a paused client, a second address in
            // place of a reader or an evicting reader (below) can hide the old entries, and
            // then nothing tells these clients that a longer lock stands: that residue is
            // named in docs/safety.md.
            std::erase_if(s.faults, [&](const fault& f) {
                const bool own_crash =
                    f.what == fault::kind::crash && f.node == restarted && f.at == crash.at;
                const bool own_cut = f.what == fault::kind::partition && f.client == 0 &&
                                     f.at == 0 && f.duration == back;
                return !own_crash && !own_cut;
            });
            s.duplicate.client = -1;
            // Their first lock is client 0's: the key whose double grant the check prevents
            // (with random keys, many schedules had no contender for it; review 8).
            for (std::size_t c = 1; c < s.ops.size(); ++c) {
                auto& op = s.ops[c][0];
                op.key = s.ops[0][0].key;
                op.more_keys.clear();
                op.lock.mode = lock_mode::exclusive;
            }
            s.net.lost_reply_rate = 0;
            for (auto& node : s.nodes) {
                node.error_rate = 0;
            }
            for (std::size_t c = 1; c < s.ops.size(); ++c) {
                for (auto& op : s.ops[c]) {
                    op.lock.ttl = std::min(op.lock.ttl, s.lowered_max_ttl);
                    op.lock.node_timeout = std::min(op.lock.node_timeout, op.lock.ttl / 3);
                    if (op.renewal.interval > op.lock.ttl / 2) {
                        op.renewal.interval = op.lock.ttl / 2;
                    }
                }
            }
        }
    }
    // A quarter of the other schedules restart a node under a lock whose ttl a smaller one
    // raised on the same connections before it: client 0 takes short locks (40 ms) on every
    // node, is then cut off from a minority of the other nodes, and takes a 300 ms lock, on a
    // bare majority including the node that restarts while it stands. Each node's TTL
    // ceiling must have been raised to 300 ms there although 40 ms was already confirmed
    // ("The TTL ceiling"); the other clients, as above, start after the restart with 40 ms
    // locks on the long lock's key and learn the restarted node's quarantine from the others'
    // ceilings: a ceiling left at 40 ms would count the restarted node while the long lock
    // stands (seed 26 with mutant h). A generator of its own, salted so that no seed of
    // regression_seeds.txt recorded before it gets it.
    std::mt19937_64 raiser(w.seed() ^ raise_salt);
    const bool raise_workload = !bare_restart && raiser() % 4 == 0;
    if (raise_workload) {
        // What this workload checks is the learned quarantine (the maximum otherwise).
        s.config.quarantine.learn_from_ttl_ceilings = explore_learning;
        const auto draw = [&raiser](real_ns from, real_ns to) {
            return from +
                   static_cast<real_ns>(raiser() % static_cast<std::uint64_t>(to - from + 1));
        };
        const auto key = [&raiser, keys] {
            return "k" + std::to_string(raiser() % static_cast<std::uint64_t>(keys));
        };
        const int restarted = static_cast<int>(raiser() % static_cast<std::uint64_t>(nodes));
        auto& c0 = s.ops[0];
        op_plan& long_op = c0[0];
        op_plan short_op = long_op;
        short_op.key = key();
        short_op.more_keys.clear();
        short_op.lock.mode = lock_mode::exclusive;
        short_op.what = op_plan::kind::plain;
        short_op.lock.ttl = milliseconds(40);
        short_op.lock.node_timeout = milliseconds(10);
        short_op.lock.retry.max_attempts = 4;
        short_op.extend_midway = false;
        short_op.cancel_after = -1;
        // Twice: the links connect on first use, and a raise sent while the connection was
        // being made is forgotten once it is up (a new connection); the second short lock's
        // raise is the confirmation the long lock meets.
        op_plan connecting = short_op;
        connecting.gap = 0;
        connecting.hold = draw(0, 5 * ms);
        short_op.gap = draw(1 * ms, 5 * ms);
        short_op.hold = draw(0, 10 * ms);
        const real_ns short_end = connecting.hold + short_op.gap + short_op.hold;
        // The cut starts once the short lock is usually released, before the long one.
        const real_ns cut_at = short_end + draw(20 * ms, 30 * ms);
        long_op.key = key();
        long_op.more_keys.clear();
        long_op.lock.mode = lock_mode::exclusive;
        long_op.what = op_plan::kind::plain;
        long_op.lock.ttl = sim_fleet_max_ttl;
        long_op.lock.node_timeout = milliseconds(30);
        long_op.lock.retry.max_attempts = 4;
        long_op.gap = 30 * ms + draw(0, 10 * ms);
        long_op.extend_midway = false;
        long_op.cancel_after = -1;
        // The earliest the long lock can start (the short one's round trips come on top).
        const real_ns long_start = short_end + long_op.gap;
        fault crash;
        crash.what = fault::kind::crash;
        crash.node = restarted;
        crash.at = long_start + draw(30 * ms, 80 * ms);
        crash.duration = draw(1 * ms, 20 * ms);
        s.faults.push_back(crash);
        const real_ns back = crash.at + crash.duration;
        long_op.hold = draw(back - long_start + 60 * ms, 280 * ms);
        for (int k = 1; k <= nodes / 2; ++k) {
            fault cut;
            cut.what = fault::kind::partition;
            cut.client = 0;
            cut.node = (restarted + k) % nodes;
            cut.at = cut_at;
            cut.duration = back - cut_at;
            cut.break_now = raiser() % 2 == 0;
            s.faults.push_back(cut);
        }
        c0.insert(c0.begin(), {connecting, short_op});
        for (int c = 1; c < clients; ++c) {
            auto& op = s.ops[static_cast<std::size_t>(c)][0];
            op.key = s.ops[0][2].key;
            op.more_keys.clear();
            op.lock.mode = lock_mode::exclusive;
            contend_after_restart(op, back + draw(0, 20 * ms));
        }
    }
    // A node set to evict keys (maxmemory with volatile-ttl), in one schedule of five. Drawn
    // from a generator of its own, so that every other seed's schedule stays as it was.
    std::mt19937_64 eviction(w.seed() ^ 0x6576696374ULL);
    if (s.lowered_max_ttl.count() == 0 && eviction() % 5 == 0) {
        auto& evicting = s.nodes[eviction() % s.nodes.size()];
        evicting.evict_rate = std::uniform_real_distribution<double>(0.02, 0.3)(eviction);
    }
    // Renewals whose replies come back late: in one renewal_deadline schedule of three, the
    // nodes hold every extend's reply 5 to 40 ms, so that a renewal started with an eighth
    // of the ttl left (10 to 19 ms) often reaches its quorum after the validity it extends,
    // inside its node_timeout (20 to 40 ms): such a quorum comes too late to count (mutant
    // q adopted it). A generator of its own, whose salt gives none of regression_seeds.txt
    // held replies: they replay the schedules that found their bugs.
    std::mt19937_64 holding(w.seed() ^ hold_salt);
    if (s.prof == profile::renewal_deadline && holding() % 3 == 0) {
        s.net.hold_extend_min = 5 * ms;
        s.net.hold_extend_max = 40 * ms;
        s.net.hold_extend_seed = holding();
    }
    // Nodes with keyspace notifications for expiries (notify-keyspace-events Kx), in one
    // schedule of eight: an expired lock key is announced, which wakes the waiters as a
    // release does. A generator of its own, whose salt gives none of regression_seeds.txt
    // the notifications: they replay the schedules that found their bugs.
    std::mt19937_64 keyspace(w.seed() ^ keyspace_salt);
    if (keyspace() % 8 == 0) {
        for (auto& node : s.nodes) {
            node.keyspace_events = true;
            node.keyspace_seed = keyspace();
        }
    }
    // A node that refuses INFO (a user without +info), in one schedule of eight, for a
    // share of its INFO commands: its clients cannot see its restarts or evictions then, and
    // must not count its votes. A generator of its own, whose salt gives none of
    // regression_seeds.txt the refusals.
    std::mt19937_64 refusing(w.seed() ^ info_salt);
    if (refusing() % 8 == 0) {
        auto& node = s.nodes[refusing() % s.nodes.size()];
        node.info_refused_rate = std::uniform_real_distribution<double>(0.2, 1.0)(refusing);
        node.info_refused_seed = refusing();
    }
    // A writable replica listed as a node (replica-read-only no), in one schedule of ten:
    // it takes SETs, and loses them at its next full resync; its votes must never count.
    // Not where the maximum was lowered (that workload claims only a fault-free schedule's
    // outcome). A generator of its own, whose salt gives none of regression_seeds.txt one.
    std::mt19937_64 replicas(w.seed() ^ replica_salt);
    if (replicas() % 10 == 0 && s.lowered_max_ttl.count() == 0) {
        auto& node = s.nodes[replicas() % s.nodes.size()];
        node.resync_rate = std::uniform_real_distribution<double>(0.01, 0.2)(replicas);
        node.resync_seed = replicas();
    }
    // A client whose threads wait for the same lock side by side, in one schedule of six:
    // its first operation again in one to three more lanes, starting within 3 ms of it, so
    // that they queue behind each other in the client (local handoff, the waiters' order,
    // one fence floor for all of them). Half of them fenced. A generator of its own, whose
    // salt gives none of regression_seeds.txt the lanes.
    std::mt19937_64 lanes(w.seed() ^ lanes_salt);
    if (lanes() % 6 == 0) {
        auto& mine = s.ops[lanes() % s.ops.size()];
        const bool fenced = lanes() % 2 == 0 && mine[0].lock.mode == lock_mode::exclusive;
        mine[0].lock.fencing = mine[0].lock.fencing || fenced;
        const auto extra = 1 + static_cast<int>(lanes() % 3);
        for (int lane = 1; lane <= extra; ++lane) {
            op_plan copy = mine[0];
            copy.lane = lane;
            copy.gap += static_cast<real_ns>(lanes() % static_cast<std::uint64_t>(3 * ms));
            // Patient enough to wait behind the others.
            copy.lock.retry.max_attempts = std::max(copy.lock.retry.max_attempts, 6U);
            mine.push_back(std::move(copy));
        }
        // Drawn after the lanes, so that those above stay what they were: in half of these
        // schedules each copy waits with its own backoff and, one time in three, a wait
        // budget (an older waiter with a slow backoff must not hold a later one back
        // beyond the key's being free, and a later call with a short budget must not go
        // first: (x)).
        const bool varied = lanes() % 2 == 0;
        for (auto& op : mine) {
            if (!varied) {
                break;
            }
            op.lock.retry.backoff_initial = milliseconds(std::array{1, 3, 10, 30}[lanes() % 4]);
            op.lock.retry.backoff_max =
                std::max(op.lock.retry.backoff_max, op.lock.retry.backoff_initial);
            if (op.lane != 0 && lanes() % 3 == 0) {
                op.lock.retry.wait_budget = milliseconds(50 + lanes() % 351);
            }
        }
        // Drawn last, so that everything above stays what it was. In one schedule of four
        // with lanes (of those without backoffs of their own), every copy retries with no
        // backoff at all: the oldest retries at once after each refusal, and a younger one's
        // deferred sleeps last at least 1 ms instead of spinning (docs/design.md, "Herd
        // control and fairness"). In another one of four, the last lane does not listen for
        // releases (`wake_on_release` off: it stays out of the queue, may go first and may be
        // overtaken; (x) judges the others, two or more lanes where there were three or more).
        switch (lanes() % 4) {
        case 0:
            for (auto& op : mine) {
                if (!varied) {
                    op.lock.retry.backoff_initial = milliseconds(0);
                }
            }
            break;
        case 1:
            mine.back().lock.retry.wake_on_release = false;
            break;
        default:
            break;
        }
    }
    // Nodes that lose their fencing counters when they crash (no appendfsync always), in one
    // schedule of eight: tokens of different clients may repeat then, and each client's own
    // stay increasing (b). A generator of its own, whose salt gives none of
    // regression_seeds.txt the loss.
    std::mt19937_64 counters(w.seed() ^ counters_salt);
    if (counters() % 8 == 0) {
        for (auto& node : s.nodes) {
            node.durable_counters = false;
        }
        // Half of them lose power: every node crashes at once while client 0 holds a fenced
        // lock that another of its lanes waits for. Once the quarantine is over, the waiter
        // is granted from counters that all start again at 0: only the client's floor, read
        // at its raise and not when it began to wait, keeps its token above the holder's.
        // Not where the maximum was lowered: that workload claims only what a fault-free
        // schedule shows (above), and a crash of every node takes the ceilings that keep the
        // lowered clients from counting the nodes while client 0's longer lock stands.
        if (counters() % 2 == 0 && s.lowered_max_ttl.count() == 0) {
            s.config.fleet_max_ttl = sim_fleet_max_ttl;
            auto& c0 = s.ops[0];
            op_plan holder = c0[0];
            holder.what = op_plan::kind::plain;
            holder.key = "k0";
            holder.more_keys.clear();
            // Lanes of their own: client 0's planned operations (the long lock of the
            // restart workloads above) keep their times.
            int free_lane = 0;
            for (const auto& op : c0) {
                free_lane = std::max(free_lane, op.lane + 1);
            }
            holder.lane = free_lane;
            holder.lock.mode = lock_mode::exclusive;
            holder.lock.fencing = true;
            holder.lock.ttl = milliseconds(150);
            holder.lock.node_timeout = milliseconds(15);
            holder.lock.retry.max_attempts = 6;
            holder.gap = 0;
            holder.hold = 80 * ms;
            holder.extend_midway = false;
            holder.cancel_after = -1;
            op_plan waiter = holder;
            waiter.lane = free_lane + 1;
            waiter.gap = 1 * ms;
            waiter.lock.retry.max_attempts = 40;
            waiter.lock.retry.backoff_initial = milliseconds(10);
            waiter.lock.retry.backoff_max = milliseconds(50);
            c0.push_back(holder);
            c0.push_back(waiter);
            fault crash;
            crash.what = fault::kind::crash;
            crash.at = 50 * ms + static_cast<real_ns>(counters() % (20 * ms));
            crash.duration = 1 * ms + static_cast<real_ns>(counters() % (10 * ms));
            for (crash.node = 0; crash.node < nodes; ++crash.node) {
                s.faults.push_back(crash);
            }
        }
    }
    // Half the crashes end in a failover: the node comes back as a promoted replica that
    // lacks every lock key, with its own long uptime, which says nothing of when it became
    // the primary (a Sentinel-managed node, or an operator's REPLICAOF NO ONE). Clients that
    // first reach it after that learn it from INFO replication (master_replid2) alone. A
    // generator of its own, whose salt gives none of regression_seeds.txt a failover.
    std::mt19937_64 failovers(w.seed() ^ failover_salt);
    for (auto& f : s.faults) {
        if (f.what == fault::kind::crash) {
            f.failover = failovers() % 2 == 0;
        }
    }
    // One schedule in eight demotes a primary in place and promotes it again (an operator's
    // REPLICAOF and REPLICAOF NO ONE): the clients' connections stay, the run_id stays, and
    // the resync in between loses every lock key. Only INFO replication tells (role:slave
    // meanwhile, then another master_replid: node_connection's role taken anew), at a
    // client's next refresh; before it, a client cannot know (history.hpp, "Role changes in
    // place"). Never a node listed as a writable replica, which is no primary to begin with.
    std::mt19937_64 role_changes(w.seed() ^ role_change_salt);
    if (role_changes() % 8 == 0) {
        const auto draw = [&role_changes](real_ns from, real_ns to) {
            return from +
                   static_cast<real_ns>(role_changes() % static_cast<std::uint64_t>(to - from + 1));
        };
        fault change;
        change.what = fault::kind::role_change;
        change.node = static_cast<int>(draw(0, nodes - 1));
        change.at = draw(0, horizon);
        change.duration = draw(1 * ms, 200 * ms);
        // Half of them read INFO every 10 to 100 ms rather than every second, so that reads
        // often fall between the change and a grant that would count the node.
        const bool often = role_changes() % 2 == 0;
        const auto variant = role_changes() % 3;
        // Not in the lowered-maximum workload, which admits no fault but its own: a resync
        // drops the TTL ceiling that tells its clients how long the restarted node's
        // quarantine must last (the residue docs/safety.md names there).
        if (s.nodes[static_cast<std::size_t>(change.node)].resync_rate == 0 &&
            s.lowered_max_ttl.count() == 0) {
            if (often) {
                s.config.eviction.refresh_interval =
                    std::min(s.config.eviction.refresh_interval, milliseconds(draw(10, 100)));
            }
            if (variant != 0 && !bare_restart && !raise_workload) {
                role_change_workload(s, change, variant == 1, draw);
            }
            s.faults.push_back(change);
        }
    }
    // The veto disabled, to check that the simulation catches what it prevents.
    if (const char* accept = std::getenv("REDLOCK_SIM_ACCEPT_EVICTING"); accept && *accept == '1') {
        s.config.eviction.accept_evicting_nodes = true;
    }
    return s;
}

std::string describe(const scenario& s) {
    std::string out = std::string("profile ") + name(s.prof) + ", " +
                      std::to_string(s.nodes.size()) + " nodes, " + std::to_string(s.ops.size()) +
                      " clients, " + std::to_string(s.faults.size()) + " faults, fleet max ttl " +
                      std::to_string(s.config.fleet_max_ttl.count()) + " ms";
    if (s.lowered_max_ttl.count() > 0) {
        out += " (lowered to " + std::to_string(s.lowered_max_ttl.count()) +
               " ms for the clients after the first)";
    }
    return out;
}

namespace {

std::string ms_text(real_ns t) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f ms", static_cast<double>(t) / 1e6);
    return buf;
}

} // namespace

std::vector<std::string> describe_plan(const scenario& s) {
    std::vector<std::string> out;
    char buf[200];
    if (s.duplicate.client >= 0) {
        std::snprintf(buf, sizeof buf,
                      "c%d lists node%d twice (a second address in place of node%d)",
                      s.duplicate.client, s.duplicate.node, s.duplicate.replaced);
        out.emplace_back(buf);
    }
    for (std::size_t n = 0; n < s.nodes.size(); ++n) {
        const auto& f = s.nodes[n];
        std::snprintf(
            buf, sizeof buf, "node%zu: clock rate %.5f, error replies %.3f, stalls %.3f up to %s",
            n, s.node_clocks[n].rate, f.error_rate, f.slow_rate, ms_text(f.slow_max).c_str());
        out.push_back(std::string(buf) + (f.lies_about_counter ? ", lies about its counters" : "") +
                      (f.durable_counters ? "" : ", counters lost on a crash"));
    }
    std::snprintf(buf, sizeof buf,
                  "network: latency %s + exp(%s), tail %.3f up to %s, lost replies %.3f",
                  ms_text(s.net.latency_min).c_str(), ms_text(s.net.latency_mean).c_str(),
                  s.net.tail_rate, ms_text(s.net.tail_max).c_str(), s.net.lost_reply_rate);
    out.push_back(buf);
    static const char* const kinds[] = {"plain", "watchdog", "with_lock"};
    for (std::size_t c = 0; c < s.ops.size(); ++c) {
        std::snprintf(buf, sizeof buf, "c%zu: clock rate %.5f", c, s.client_clocks[c].rate);
        std::string line = buf;
        for (const auto& op : s.ops[c]) {
            line += std::string("; ") +
                    (op.lane == 0 ? "" : "lane " + std::to_string(op.lane) + ": ") +
                    kinds[static_cast<int>(op.what)] + " " + op.key;
            for (const auto& more : op.more_keys) {
                line += "+" + more;
            }
            if (op.lock.mode == lock_mode::shared) {
                line += " shared";
            } else if (op.lock.mode == lock_mode::permit) {
                line += " permit/" + std::to_string(op.lock.permits);
            }
            line += " ttl " + std::to_string(op.lock.ttl.count()) + " hold " + ms_text(op.hold);
        }
        out.push_back(line);
    }
    static const char* const faults[] = {"pause",         "partition",  "cut",
                                         "crash",         "flush",      "close",
                                         "force_release", "clock_step", "role_change"};
    std::string line = "faults:";
    for (const auto& f : s.faults) {
        line += std::string(" ") + faults[static_cast<int>(f.what)] + "@" + ms_text(f.at);
        if (f.what == fault::kind::pause || f.what == fault::kind::close) {
            line += "(c" + std::to_string(f.client) + (f.after_release ? ", after a release" : "") +
                    ")";
        } else if (f.what == fault::kind::force_release) {
            line += "(c" + std::to_string(f.client) + ", " + f.key + ")";
        } else if (f.what == fault::kind::clock_step) {
            line += "(n" + std::to_string(f.node) + ", " + (f.step < 0 ? "-" : "+") +
                    ms_text(std::abs(f.step)) + ")";
        } else if (f.what == fault::kind::partition || f.what == fault::kind::cut) {
            line += "(c" + std::to_string(f.client) + "-n" + std::to_string(f.node) + ")";
        } else if (f.what == fault::kind::role_change) {
            line += "(n" + std::to_string(f.node) + ", a replica for " + ms_text(f.duration) + ")";
        } else {
            line += "(n" + std::to_string(f.node) + ")";
        }
    }
    out.push_back(line);
    return out;
}

} // namespace redlock::sim
