#ifndef REDLOCK_SRC_ACQUIRE_FSM_HPP
#define REDLOCK_SRC_ACQUIRE_FSM_HPP

#include "tally.hpp"
#include "validity.hpp"

#include "redlock/config.hpp"
#include "redlock/error.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <system_error>

namespace redlock::detail {

/// What the I/O layer must do next for an acquire.
struct acquire_action {
    enum class kind {
        /// Send SET NX PX to every node, and call on_deadline() at `at`.
        send_set,
        /// Nothing to do until the next event.
        wait,
        /// Send the compare-and-delete to every node for which needs_cleanup() holds (also
        /// to those that have not answered: their SET may have landed), arm on_deadline()
        /// for `at`, then call on_cleanup_sent().
        send_cleanup,
        /// Sleep until `at`, then call on_wake().
        sleep,
        /// Complete the operation with `error` (empty on success).
        done,
    };
    kind what = kind::wait;
    clock::time_point at{};
    std::error_code error;
};

/// The acquire algorithm without I/O: attempts, early quorum decision, validity,
/// cleanup of failed attempts, retry with full-jitter backoff, cancellation.
/// Events carry the current time; the caller provides the clock.
class acquire_fsm {
public:
    using random_source = std::function<std::uint64_t()>;

    /// `options` must already be validated.
    acquire_fsm(std::size_t nodes, const lock_options& options, random_source random);

    acquire_action start(clock::time_point now);
    /// A SET reply from `node` for attempt `attempt` (1-based). Replies to earlier attempts
    /// are ignored: their cleanup was already queued behind them on the same connection.
    acquire_action on_set_reply(unsigned attempt, std::size_t node, node_outcome outcome,
                                clock::time_point now);
    acquire_action on_cleanup_sent(clock::time_point now);
    /// A compare-and-delete reply sent during the cleanup of `attempt`.
    acquire_action on_cleanup_reply(unsigned attempt, std::size_t node, clock::time_point now);
    acquire_action on_deadline(clock::time_point now);
    acquire_action on_wake(clock::time_point now);
    acquire_action on_cancel(clock::time_point now);

    unsigned attempt() const noexcept { return attempt_; }
    bool finished() const noexcept { return state_ == state::finished; }
    /// The vote of every node in the current attempt, so far.
    const tally& votes() const noexcept { return votes_; }
    /// Meaningful once finished without error.
    clock::time_point valid_until() const noexcept { return valid_until_; }
    /// Whether the cleanup must reach `node`: everywhere except where the SET was refused
    /// (a refused SET NX changed nothing).
    bool needs_cleanup(std::size_t node) const { return !refused_.at(node); }

private:
    enum class state { idle, attempting, cleaning_up, sleeping, finished };

    acquire_action begin_attempt(clock::time_point now);
    acquire_action decide(clock::time_point now);
    acquire_action fail_attempt(std::error_code reason, clock::time_point now, bool await_silent);
    acquire_action after_cleanup(clock::time_point now);
    acquire_action finish(std::error_code error);

    lock_options options_;
    random_source random_;
    state state_ = state::idle;
    unsigned attempt_ = 0;
    clock::time_point call_start_{};
    clock::time_point attempt_start_{};
    clock::time_point valid_until_{};
    tally votes_;
    std::error_code failure_;
    std::size_t cleanup_outstanding_ = 0;
    std::vector<bool> answered_;
    std::vector<bool> granted_;
    std::vector<bool> refused_;
    std::vector<bool> cleanup_awaited_;
};

} // namespace redlock::detail

#endif
