#ifndef REDLOCK_TESTS_SIMULATION_SCHEDULE_HPP
#define REDLOCK_TESTS_SIMULATION_SCHEDULE_HPP

#include "history.hpp"
#include "scenario.hpp"
#include "sim_network.hpp"
#include "sim_node.hpp"
#include "sim_world.hpp"

#include "redlock/client.hpp"
#include "redlock/watchdog.hpp"

#include <boost/asio/awaitable.hpp>

#include <optional>

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <vector>

namespace redlock::sim {

struct schedule_result {
    std::uint64_t seed = 0;
    std::string summary;
    std::uint64_t grants = 0;
    std::vector<std::string> violations;
    /// Violations excused by clock steps no client could see (history::residue).
    std::vector<std::string> residue;
    std::size_t clock_steps = 0;
    std::size_t role_changes = 0;
    std::vector<std::string> notes;
    std::vector<std::string> trace;
};

/// One schedule: the seed's scenario run to the end, then checked.
schedule_result run_schedule(std::uint64_t seed, bool tracing);

/// The machinery of one schedule: world, nodes, clients over simulated links and clocks,
/// faults, the workload (workload.cpp) and the end-of-run checks.
class schedule {
public:
    schedule(std::uint64_t seed, bool tracing);
    ~schedule();
    schedule_result run();
    bool stuck() const noexcept { return stuck_; }

private:
    struct client_slot {
        std::unique_ptr<redlock::client> client;
        /// Its lanes still running their operations.
        int lanes_running = 0;
        bool done = false;
        /// Its close() has run on its strand: the shutdown is over.
        bool closed = false;
        /// close() is due as soon as a release of its completes (fault::after_release).
        bool close_after_release = false;
        bool close_called = false;
    };
    struct watch {
        const watchdog* dog;
        int holder;
        int client;
        std::uint64_t renewals = 0;
        bool lost = false;
    };

    void make_client(int c);
    /// client::close(), then the history hears when the shutdown has run.
    void close_client(int c);
    /// The path of client `c` to node `n`'s first address, made on first use.
    const std::shared_ptr<sim_path>& path_to(int c, std::size_t n);
    /// A release of client `c` completed: closes it now if a close is due then.
    void released(int c);
    void schedule_fault(const fault& f);
    void poll_watches();
    void poll(watch& w);
    std::list<watch>::iterator add_watch(const watchdog& dog, int holder, int client);
    void remove_watch(std::list<watch>::iterator it);
    std::string who(int c) const { return "c" + std::to_string(c); }
    std::int64_t local_now(int c) const;
    static std::int64_t local(std::chrono::steady_clock::time_point t);

    // workload.cpp
    /// The operations of client `c`'s lane `lane`, one after the other.
    boost::asio::awaitable<void> client_task(int c, int lane);
    struct granted {
        int holder;
        lock held;
    };
    /// Tells the history that an exclusive acquire of `op` called at `started` ended now,
    /// granted or not (x).
    void waiter_ended(int c, const op_plan& op, real_ns started, bool granted);
    /// An acquire, cancelled when `op` says so; the grant is recorded in the history.
    boost::asio::awaitable<std::optional<granted>> acquire_step(int c, const op_plan& op,
                                                                const char* what);
    boost::asio::awaitable<void> run_plain(int c, const op_plan& op);
    boost::asio::awaitable<void> run_watchdog(int c, const op_plan& op);
    boost::asio::awaitable<void> run_with_lock(int c, const op_plan& op);
    boost::asio::awaitable<void> sleep(int c, real_ns local_duration);

    std::uint64_t seed_;
    world w_;
    history h_;
    scenario sc_;
    std::mt19937_64 notify_rng_;
    notify_faults notify_;
    std::vector<std::unique_ptr<sim_node>> nodes_;
    std::vector<client_slot> clients_;
    /// Per client and node: the path of the node's first address, where faults aimed at the
    /// node act (a second address of one server, sc_.duplicate, has a path of its own).
    std::vector<std::vector<std::shared_ptr<sim_path>>> paths_;
    std::list<watch> watches_;
    std::uint64_t tokens_ = 0;
    bool stuck_ = false;
};

} // namespace redlock::sim

#endif
