#ifndef REDLOCK_SRC_RENEWAL_FSM_HPP
#define REDLOCK_SRC_RENEWAL_FSM_HPP

#include "core/validity.hpp"

#include "redlock/config.hpp"
#include "redlock/error.hpp"

#include <system_error>

namespace redlock::detail {

struct renewal_action {
    enum class kind {
        /// Nothing to do until the next event.
        none,
        /// Call on_timer() at `at`.
        wait_until,
        /// Run one extend round now, then call on_extended(); call on_timer() at `at` (the
        /// validity deadline) if the round has not ended by then.
        extend,
        /// The lock can no longer be trusted: tell the holder (`error` is lock_lost).
        lost,
        /// Renewal is over; nothing more will happen.
        stopped,
    };
    kind what = kind::none;
    clock::time_point at{};
    std::error_code error;
};

/// When to renew a held lock and when to declare it lost, without I/O. The holder is told
/// the lock is lost as soon as it cannot be trusted: an extend found our token gone on a
/// majority, or the validity deadline passed without a successful renewal, also while a
/// round is still in flight (also when the process only wakes up after it). Loss is
/// terminal: a renewal that completes after the deadline is never adopted. A stop decides
/// by the time it is asked: past the deadline, the lock was lost.
class renewal_fsm {
public:
    /// `options` with zero fields already resolved (see resolve()).
    renewal_fsm(std::chrono::milliseconds ttl, const renewal_options& options,
                clock::time_point valid_until);

    /// Zero interval becomes ttl / 3, zero retry_delay becomes interval / 5 (at least 1 ms).
    static renewal_options resolve(std::chrono::milliseconds ttl, renewal_options options);

    renewal_action start(clock::time_point now);
    renewal_action on_timer(clock::time_point now);
    /// The extend round finished: `error` empty with the new validity, or why not.
    renewal_action on_extended(std::error_code error, clock::time_point new_valid_until,
                               clock::time_point now);
    /// The holder is done with the lock at `now`.
    renewal_action on_stop(clock::time_point now);

    clock::time_point valid_until() const noexcept { return valid_until_; }
    /// The options as resolved.
    const renewal_options& options() const noexcept { return options_; }
    bool extending() const noexcept { return state_ == state::extending; }
    bool finished() const noexcept { return state_ == state::finished; }

private:
    enum class state { idle, waiting, extending, finished };

    renewal_action schedule(clock::time_point at);
    renewal_action lose();

    std::chrono::milliseconds ttl_;
    renewal_options options_;
    clock::time_point valid_until_;
    state state_ = state::idle;
    bool stop_requested_ = false;
};

} // namespace redlock::detail

#endif
