#ifndef REDLOCK_SRC_CORE_TIME_SOURCE_HPP
#define REDLOCK_SRC_CORE_TIME_SOURCE_HPP

#include "core/validity.hpp"

#include <functional>
#include <memory>

namespace redlock::detail {

/// A one-shot wake-up. Arming again replaces the earlier arming: a wake-up of an earlier
/// arming that was already due (even already queued to run) never calls the new function.
class alarm {
public:
    virtual ~alarm() = default;
    /// Calls `fn` at `at` (on the client's strand) unless re-armed or cancelled first.
    virtual void arm(clock::time_point at, std::function<void()> fn) = 0;
    /// Forgets the arming and lets go of its function at once.
    virtual void cancel() = 0;
};

/// The clock and the timers of a client: steady_clock and Asio timers in production, a
/// simulated clock in the deterministic simulation. Used on the client's strand only.
class time_source {
public:
    virtual ~time_source() = default;
    virtual clock::time_point now() const = 0;
    virtual std::unique_ptr<alarm> make_alarm() = 0;
};

} // namespace redlock::detail

#endif
