#ifndef REDLOCK_SRC_ACQUIRE_FSM_HPP
#define REDLOCK_SRC_ACQUIRE_FSM_HPP

#include "core/fence_counters.hpp"
#include "core/tally.hpp"
#include "core/validity.hpp"

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
        /// Fenced locks only, once a quorum granted: send the raise of the fencing counter to
        /// fence_token() to every node for which needs_cleanup() holds, and call
        /// on_deadline() at `at`.
        send_raise,
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
/// cleanup of failed attempts, retry with full-jitter backoff, cancellation, and for
/// fenced locks the second phase of the quorum max-register (see docs/safety.md).
///
/// Handoff: while sleeping, the fsm hears of releases on the nodes (on_released) and of its
/// subscriptions (on_subscribed, on_subscription_lost), and wakes early once the nodes that
/// did not refuse the last attempt plus those that may have been freed since reach a quorum.
/// A node counts as possibly freed when it notified a release, or when its subscription was
/// confirmed only after the attempt was sent (a release in between would have gone unheard).
/// The early wake never comes later than the backoff's wake: the backoff is the bound.
/// Events carry the current time; the caller provides the clock.
class acquire_fsm {
public:
    using random_source = std::function<std::uint64_t()>;
    /// The highest fencing token this client already holds or held for the keys.
    using floor_source = std::function<std::uint64_t()>;

    /// `options` must already be validated. For a fenced lock, `fence_floor` is asked at each
    /// raise, not once at the start: a token is always above every token this client was
    /// granted for the keys before the raise began, even if a node lost its counter, also
    /// one granted to another of its acquires while this one waited.
    acquire_fsm(std::size_t nodes, const lock_options& options, random_source random,
                floor_source fence_floor = {});

    /// `called_at`: when the caller asked (the wait budget runs from then), if earlier
    /// than `now` (the acquire waited for connections first).
    acquire_action start(clock::time_point now, clock::time_point called_at);
    acquire_action start(clock::time_point now) { return start(now, now); }
    /// Starts behind other waiters of this client for the key, already subscribed: the
    /// first attempt would only be refused while they wait, so it sleeps as if it had been,
    /// until the oldest of them is served and a release reaches it (or its backoff ends).
    /// Attempts at once when no retries are allowed, and (a reader or permit holder) when
    /// the wait budget is too short for the sleep or it cannot be woken: subscribed on fewer
    /// than a quorum. An exclusive one sleeps behind them anyway: it is not the one to hear
    /// the next release (on_moved_up wakes it once it is the oldest); with a budget too short
    /// for the sleep it sleeps what is left of the budget, then ends (contention) without an
    /// attempt unless it became the oldest meanwhile; at once if the budget is spent.
    /// `position`: how many waiters of the key that want the same keys are ahead of it.
    acquire_action start_behind_waiters(clock::time_point now, clock::time_point called_at,
                                        std::size_t position);
    /// A SET reply from `node` for attempt `attempt` (1-based). Replies to earlier attempts
    /// are ignored: their cleanup was already queued behind them on the same connection.
    /// A reply handled at or after the attempt's deadline is no vote: the deadline decides
    /// first, whatever order a stalled event loop runs them in.
    /// A refusal after the attempt was decided only tells the handoff that the node is held.
    /// For a fenced lock a grant carries the node's fencing counter. `landed`: the SET wrote
    /// our key even though `outcome` does not count it as a grant (a quarantined node): a
    /// failed attempt then waits for that node's cleanup too.
    acquire_action on_set_reply(unsigned attempt, std::size_t node, node_outcome outcome,
                                clock::time_point now, std::uint64_t counter = 0,
                                bool landed = false);
    /// `node` holds something under the key that is no lock of this kind (a string without
    /// expiry, a hash of another mode or permit count, another type): called before its
    /// failed on_set_reply. Once a quorum says so, the acquire ends with errc::lock_mismatch
    /// at once: it is a usage error that no wait would mend.
    void on_mismatch(std::size_t node);
    /// A reply to the raise of the fencing counter: granted when raised; none counts at or
    /// after the raise's deadline.
    acquire_action on_raise_reply(unsigned attempt, std::size_t node, node_outcome outcome,
                                  clock::time_point now);
    acquire_action on_cleanup_sent(clock::time_point now);
    /// A compare-and-delete reply sent during the cleanup of `attempt`.
    acquire_action on_cleanup_reply(unsigned attempt, std::size_t node, clock::time_point now);
    acquire_action on_deadline(clock::time_point now);
    /// The sleep is over: the next attempt, or the end with the last attempt's failure once
    /// the wait budget has passed (a wake delayed past it, by a wait for connections).
    acquire_action on_wake(clock::time_point now);
    acquire_action on_cancel(clock::time_point now);
    /// A release (or expiry) of the key was announced by `node`. `position`: how many local
    /// waiters of the key wait longer than this one (they retry first).
    acquire_action on_released(std::size_t node, std::size_t position, clock::time_point now);
    /// Every node announced a release at once (this client's own): one decision, so that
    /// a wake does not begin an attempt that the remaining announcements would then be
    /// taken to follow.
    acquire_action on_released_everywhere(std::size_t position, clock::time_point now);
    /// A waiter ahead of this one stopped waiting: `position` is this one's now. Releases it
    /// heard but let pass for an older waiter wake it if it is the oldest now.
    acquire_action on_moved_up(std::size_t position, clock::time_point now);
    /// A later waiter's backoff ran out while this one is the oldest: a sleeping oldest
    /// attempts now (the key may have been freed unannounced); its attempts count as usual.
    acquire_action on_nudged(clock::time_point now);
    /// The last wake was deferred to older waiters of the client (the caller nudges the
    /// oldest: release_watch::nudge).
    bool deferred() const noexcept { return state_ == state::sleeping && deferred_; }
    /// Wakes deferred so far: a deferred sleep lasts up to the backoff ceiling of retry
    /// attempt() + deferrals(), and at least a millisecond.
    unsigned deferrals() const noexcept { return deferrals_; }
    /// The attempts made for this acquire itself: attempt() less those a later waiter's
    /// nudge asked for. max_attempts and the backoff count these.
    unsigned own_attempts() const noexcept { return attempt_ - borrowed_; }
    /// Whether its max_attempts are used up: its own attempts and its deferrals (each one of
    /// its attempts, the oldest polling for it).
    bool attempts_spent() const noexcept {
        return options_.retry.max_attempts != 0 &&
               own_attempts() + deferrals_ >= options_.retry.max_attempts;
    }
    /// The subscription to `node`'s release channel of the key is confirmed: every release
    /// there from now on is announced to us.
    acquire_action on_subscribed(std::size_t node, std::size_t position, clock::time_point now);
    /// The subscriber connection to `node` broke: releases there go unheard until
    /// on_subscribed again.
    void on_subscription_lost(std::size_t node);
    /// Another waiter of this client got the key: the releases heard so far are used up, and
    /// an early wake not yet due goes back to the backoff's.
    acquire_action on_local_grant();
    /// Whether the sleep in progress ends early because of a release.
    bool waking_early() const noexcept { return state_ == state::sleeping && early_wake_; }

    unsigned attempt() const noexcept { return attempt_; }
    bool finished() const noexcept { return state_ == state::finished; }
    /// Whether SET replies of the current attempt still count.
    bool collecting_grants() const noexcept { return state_ == state::attempting; }
    /// Whether raise replies of the current attempt still count.
    bool raising() const noexcept { return state_ == state::raising; }
    /// The vote of every node in the current attempt, so far: the raises once they are sent.
    const tally& votes() const noexcept { return raising_ ? raises_ : votes_; }
    /// The fencing token being raised to, then granted; 0 for a lock without fencing.
    std::uint64_t fence_token() const noexcept { return fence_token_; }
    /// Nodes of the granting majority whose counter was below fence_floor: a node whose
    /// counter went backwards (lost without fsync) or missed raises. Empty when none.
    const std::vector<std::size_t>& counters_behind_floor() const noexcept { return behind_; }
    /// The floor the latest raise was above (0 before a raise).
    std::uint64_t fence_floor() const noexcept { return fence_floor_; }
    /// Why the last attempt's counters could not give a token (errc::fencing_counter_refused);
    /// empty otherwise.
    const std::optional<counter_rejection>& counter_refused() const noexcept { return rejection_; }
    /// Meaningful once finished without error.
    clock::time_point valid_until() const noexcept { return valid_until_; }
    /// Whether the cleanup must reach `node`: everywhere except where the SET was refused
    /// (a refused SET NX changed nothing).
    bool needs_cleanup(std::size_t node) const { return !refused_.at(node); }

private:
    enum class state { idle, attempting, raising, cleaning_up, sleeping, finished };

    acquire_action begin_attempt(clock::time_point now);
    /// What the handoff heard changed, or this waiter's place among its client's waiters:
    /// a sleeping waiter may wake early now.
    acquire_action reconsider(std::size_t position, clock::time_point now);
    acquire_action decide(clock::time_point now);
    acquire_action begin_raise(clock::time_point now);
    acquire_action decide_raise(clock::time_point now);
    acquire_action grant(clock::time_point now);
    acquire_action fail_attempt(std::error_code reason, clock::time_point now, bool await_silent);
    acquire_action after_cleanup(clock::time_point now);
    acquire_action finish(std::error_code error);
    /// While sleeping after contention: an early wake once a quorum could be free.
    acquire_action maybe_wake_early(clock::time_point now);
    /// Whether a quorum of nodes was subscribed when the failed attempt was sent, so that
    /// their releases will be announced: the backoff is then a fallback only.
    bool covered_quorum() const;

    lock_options options_;
    random_source random_;
    state state_ = state::idle;
    unsigned attempt_ = 0;
    clock::time_point call_start_{};
    clock::time_point attempt_start_{};
    /// The current attempt's deadline, then its raise's: no reply counts from then on.
    clock::time_point deadline_{};
    clock::time_point valid_until_{};
    tally votes_;
    tally raises_;
    bool raising_ = false;
    floor_source fence_floor_source_;
    std::uint64_t fence_floor_ = 0;
    std::uint64_t fence_token_ = 0;
    bool raise_capped_by_validity_ = false;
    std::vector<std::uint64_t> counters_;
    std::vector<std::size_t> behind_;
    std::optional<counter_rejection> rejection_;
    std::error_code failure_;
    std::size_t cleanup_outstanding_ = 0;
    std::vector<bool> answered_;
    std::vector<bool> granted_;
    /// Where our key is: granted, or written by a node whose grant did not count.
    std::vector<bool> landed_;
    std::vector<bool> refused_;
    std::size_t mismatched_ = 0;
    std::vector<bool> cleanup_awaited_;
    /// Handoff, per node: subscription confirmed now; confirmed when the current attempt was
    /// sent; release announced (or possibly missed) since the current attempt was sent.
    std::vector<bool> subscribed_;
    std::vector<bool> covered_;
    std::vector<bool> freed_;
    clock::time_point backoff_wake_{};
    bool early_wake_ = false;
    /// The last position among the local waiters of the key that the notifier reported.
    std::size_t position_ = 0;
    /// An exclusive waiter's backoff ran out while older waiters of its client for the same
    /// keys were still there: it attempts once it is the oldest (arrival order).
    bool deferred_ = false;
    /// Deferrals so far: each doubles the next sleep, as an attempt would.
    unsigned deferrals_ = 0;
    /// The wake in progress was a later waiter's nudge (on_nudged).
    bool nudged_ = false;
    /// Attempts made on a later waiter's nudge.
    unsigned borrowed_ = 0;
    /// The attempt in flight (or last) was made on a nudge.
    bool last_borrowed_ = false;
    /// When this one's own backoff was due to end last: a nudged attempt that fails does
    /// not push it back.
    clock::time_point own_wake_{};
};

} // namespace redlock::detail

#endif
