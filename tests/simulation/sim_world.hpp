#ifndef REDLOCK_TESTS_SIMULATION_SIM_WORLD_HPP
#define REDLOCK_TESTS_SIMULATION_SIM_WORLD_HPP

#include <boost/asio/io_context.hpp>

#include <cstdint>
#include <functional>
#include <queue>
#include <random>
#include <string>
#include <vector>

namespace redlock::sim {

/// Simulated real time, in nanoseconds since the start of the schedule.
using real_ns = std::int64_t;

inline constexpr real_ns us = 1000;
inline constexpr real_ns ms = 1000 * us;
inline constexpr real_ns sec = 1000 * ms;

/// The one thread, the one PRNG and simulated real time of a schedule: an io_context that is
/// only polled (never run by a thread) plus an event queue ordered by (time, sequence). The
/// loop drains the io_context, then pops the earliest event, advances time to it, runs it.
///
/// Events belong to a client (owner >= 0) or to nobody (the network, the nodes). A paused
/// client's events are held back until it resumes, then run at the resume instant in their
/// original order: nothing of a paused process runs.
class world {
public:
    explicit world(std::uint64_t seed, bool tracing);

    real_ns now() const noexcept { return now_; }
    std::mt19937_64& rng() noexcept { return rng_; }
    std::uint64_t seed() const noexcept { return seed_; }
    boost::asio::io_context& io() noexcept { return io_; }

    /// Uniform in [lo, hi].
    std::int64_t uniform(std::int64_t lo, std::int64_t hi);
    double uniform_real(double lo, double hi);
    bool chance(double p);

    void at(real_ns when, int owner, std::function<void()> fn);
    void after(real_ns delay, int owner, std::function<void()> fn) {
        at(now_ + delay, owner, std::move(fn));
    }

    void add_clients(int n) {
        paused_.resize(n, false);
        held_.resize(n);
    }
    bool paused(int client) const { return paused_[client]; }
    void pause(int client);
    void resume(int client);

    /// Runs events until `done()` holds after a drained io_context, or none are left, or
    /// real time passes `limit`. Returns false when it stopped on the limit.
    bool run(const std::function<bool()>& done, real_ns limit);
    /// Called after every event, once the io_context is drained.
    std::function<void()> after_event;

    bool tracing() const noexcept { return tracing_; }
    /// One trace line: time, who, what. Only call when tracing() (see SIM_TRACE).
    void trace(const std::string& who, const std::string& what);
    std::vector<std::string>& trace_lines() { return trace_; }

private:
    /// The queue holds the order only; the functions wait in slots_ (free ones listed in
    /// free_), so the heap moves 24 bytes per step instead of a std::function.
    struct event {
        real_ns when;
        std::uint64_t seq;
        int owner;
        std::uint32_t slot;
    };
    struct later {
        bool operator()(const event& a, const event& b) const {
            return a.when != b.when ? a.when > b.when : a.seq > b.seq;
        }
    };
    void drain();

    real_ns now_ = 0;
    std::uint64_t seed_;
    std::uint64_t seq_ = 0;
    std::mt19937_64 rng_;
    boost::asio::io_context io_;
    std::priority_queue<event, std::vector<event>, later> queue_;
    std::vector<std::function<void()>> slots_;
    std::vector<std::uint32_t> free_;
    std::vector<bool> paused_;
    std::vector<std::vector<event>> held_;
    bool tracing_;
    std::vector<std::string> trace_;
};

std::string fmt_time(real_ns t);

} // namespace redlock::sim

#define SIM_TRACE(w, who, what)                                                                    \
    do {                                                                                           \
        if ((w).tracing()) {                                                                       \
            (w).trace((who), (what));                                                              \
        }                                                                                          \
    } while (0)

#endif
