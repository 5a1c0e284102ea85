#ifndef REDLOCK_TESTS_SIMULATION_SCENARIO_HPP
#define REDLOCK_TESTS_SIMULATION_SCENARIO_HPP

#include "sim_clock.hpp"
#include "sim_network.hpp"
#include "sim_node.hpp"
#include "sim_world.hpp"

#include "redlock/config.hpp"

#include <string>
#include <vector>

namespace redlock::sim {

/// The fault mix of a schedule. The biased ones aim at known weak spots.
enum class profile {
    calm,
    chaos,
    /// Error replies and slow commands on one node, empty or flushed script caches, tight
    /// retries on one contended key: the NOSCRIPT fallback of an acquire's cleanup.
    noscript_cleanup,
    /// Watchdogs renewing late in the validity with slow nodes: the renewal deadline.
    renewal_deadline,
};
const char* name(profile p);

struct op_plan {
    enum class kind { plain, watchdog, with_lock } what = kind::plain;
    std::string key;
    /// Taken together with `key`, all or nothing (an exclusive lock over several keys).
    std::vector<std::string> more_keys;
    lock_options lock;
    renewal_options renewal;
    /// Before the operation, and how long the lock is held (or the work runs), on the
    /// client's clock.
    real_ns gap = 0;
    real_ns hold = 0;
    /// plain: extend once half-way.
    bool extend_midway = false;
    /// Cancel the acquire this long after it started (real time); negative: never.
    real_ns cancel_after = -1;
    /// with_lock: the work stops when cancelled (else it ignores its slot).
    bool cancellable_work = true;
    /// The client's operations run one after the other in each lane, the lanes side by side
    /// (threads of one process sharing its client): lane 0 unless a workload adds lanes.
    int lane = 0;
};

struct fault {
    /// close: client::close() on `client` at `at`, whatever it is doing then.
    /// force_release: `client` runs client::async_force_release of `key` at `at` (an
    /// operator's `redlock release --force`), whoever holds it then.
    enum class kind {
        pause,
        partition,
        cut,
        crash,
        flush,
        close,
        force_release,
        /// clock_step: `node`'s wall clock steps by `step` at `at`.
        clock_step,
        /// role_change: at `at`, `node` is demoted in place (an operator's REPLICAOF, the
        /// clients' connections kept), resyncs from another primary that lacks every lock
        /// key, and after `duration` is promoted again (REPLICAOF NO ONE): the same run_id,
        /// another master_replid (sim_node::demote, sim_node::promote).
        role_change
    } what = kind::pause;
    real_ns step = 0;
    real_ns at = 0;
    real_ns duration = 0;
    int client = 0;
    int node = 0;
    bool break_now = false;
    /// close: at the client's first release completed from `at` on (or the end of its
    /// workload), while that release's slowest deletes are still on their way.
    bool after_release = false;
    std::string key;
    /// force_release: the operator names the key's fencing counter too, which
    /// force_release.lua must leave alone (its tokens keep increasing after the unlock).
    bool with_counter = false;
    /// crash: the node comes back as a promoted replica (sim_node::restart).
    bool failover = false;
};

/// Everything a seed decides before the schedule runs.
struct scenario {
    profile prof = profile::calm;
    std::vector<drift_clock> node_clocks;
    std::vector<node_faults> nodes;
    net_faults net;
    std::vector<drift_clock> client_clocks;
    std::vector<std::vector<op_plan>> ops;
    std::vector<fault> faults;
    client_config config;
    std::chrono::milliseconds max_ttl{0};
    /// The fleet maximum of every client but the first, lowered while the first one's locks
    /// of `config.fleet_max_ttl` may stand; 0: every client uses `config.fleet_max_ttl`.
    std::chrono::milliseconds lowered_max_ttl{0};
    /// A client that lists one server under two names: in `duplicate.client`'s node list,
    /// the entry of node `duplicate.replaced` is a second address of node `duplicate.node`
    /// (its votes must count once: client_impl::veto_grant). Off when client < 0.
    struct duplicate_address {
        int client = -1;
        int node = 0;
        int replaced = 0;
    } duplicate;
};

/// `forced_profile` >= 0 overrides the profile the seed would pick (for exploring one mix;
/// REDLOCK_SIM_PROFILE).
scenario make_scenario(world& w, int forced_profile = -1);
std::string describe(const scenario& s);
/// The plan in a few lines, for the top of a trace.
std::vector<std::string> describe_plan(const scenario& s);

} // namespace redlock::sim

#endif
