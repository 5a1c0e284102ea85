#ifndef REDLOCK_SRC_RUNTIME_RENEWAL_TIMERS_HPP
#define REDLOCK_SRC_RUNTIME_RENEWAL_TIMERS_HPP

#include "core/time_source.hpp"
#include "core/validity.hpp"

#include <map>
#include <memory>
#include <optional>

namespace redlock::detail {

/// Whatever waits on renewal_timers.
class timed {
public:
    virtual void on_due() = 0;

protected:
    ~timed() = default;
};

/// One timer for every watchdog of a client instead of one each: a watchdog then costs an
/// entry in an ordered map, not a timer and a pending wait. Entries hold their target, as a
/// pending wait would; cancelling an entry lets go of it at once. Used on the strand only.
class renewal_timers : public std::enable_shared_from_this<renewal_timers> {
public:
    using entry = std::multimap<clock::time_point, std::shared_ptr<timed>>::iterator;

    /// `time` outlives this.
    explicit renewal_timers(time_source& time);

    /// Calls `target->on_due()` at `at` unless cancel() comes first.
    entry schedule(clock::time_point at, std::shared_ptr<timed> target);
    void cancel(entry e);
    /// Drops every entry and the timer's wait (client shutdown).
    void clear();

private:
    void arm();
    void on_timer();

    std::multimap<clock::time_point, std::shared_ptr<timed>> due_;
    time_source& time_;
    std::unique_ptr<alarm> alarm_;
    std::optional<clock::time_point> armed_for_;
};

} // namespace redlock::detail

#endif
