#ifndef REDLOCK_TESTS_SIMULATION_SIM_CLOCK_HPP
#define REDLOCK_TESTS_SIMULATION_SIM_CLOCK_HPP

#include "sim_world.hpp"

#include "core/time_source.hpp"

#include <boost/asio/any_io_executor.hpp>

namespace redlock::sim {

/// A drifting clock: local = offset + rate * real, in nanoseconds.
struct drift_clock {
    std::int64_t offset = 0;
    double rate = 1.0;

    std::int64_t local(real_ns real) const {
        return offset + static_cast<std::int64_t>(rate * static_cast<double>(real));
    }
    /// The first real instant (not before `not_before`) at which local reaches `t`.
    real_ns real_at(std::int64_t t, real_ns not_before) const;
};

/// A client's time_source: its drifting clock and alarms that are world events owned by the
/// client (so a paused client's alarms wait for it to resume). A wake-up runs on the
/// client's strand and never calls the function of a later arming.
class sim_time_source final : public detail::time_source {
public:
    sim_time_source(world& w, int client, drift_clock clock, boost::asio::any_io_executor strand)
        : world_(w)
        , client_(client)
        , clock_(clock)
        , strand_(std::move(strand)) {}

    detail::clock::time_point now() const override;
    std::unique_ptr<detail::alarm> make_alarm() override;

private:
    world& world_;
    int client_;
    drift_clock clock_;
    boost::asio::any_io_executor strand_;
};

} // namespace redlock::sim

#endif
