#include "core/acquire_fsm.hpp"

#include "core/backoff.hpp"
#include "core/fence_counters.hpp"

#include <algorithm>
#include <limits>
#include <utility>

namespace redlock::detail {

acquire_fsm::acquire_fsm(std::size_t nodes, const lock_options& options, random_source random,
                         floor_source fence_floor)
    : options_(options)
    , random_(std::move(random))
    , votes_(nodes)
    , raises_(nodes)
    , fence_floor_source_(std::move(fence_floor))
    , counters_(nodes, 0)
    , answered_(nodes, false)
    , granted_(nodes, false)
    , landed_(nodes, false)
    , refused_(nodes, false)
    , cleanup_awaited_(nodes, false)
    , subscribed_(nodes, false)
    , covered_(nodes, false)
    , freed_(nodes, false) {}

acquire_action acquire_fsm::start(clock::time_point now, clock::time_point called_at) {
    call_start_ = called_at;
    return begin_attempt(now);
}

acquire_action acquire_fsm::start_behind_waiters(clock::time_point now, clock::time_point called_at,
                                                 std::size_t position) {
    call_start_ = called_at;
    position_ = position;
    const auto& retry = options_.retry;
    const auto subscribed =
        static_cast<std::size_t>(std::count(subscribed_.begin(), subscribed_.end(), true));
    if (!retry.wake_on_release || retry.max_attempts == 1 ||
        (options_.mode != lock_mode::exclusive && subscribed < votes_.quorum())) {
        return begin_attempt(now);
    }
    // Refused everywhere, as far as waking goes: a quorum of real announcements is needed.
    failure_ = errc::contention;
    refused_.assign(votes_.nodes(), true);
    covered_ = subscribed_;
    freed_.assign(votes_.nodes(), false);
    // The sleep after a first refusal, drawn as covered sleeps are.
    const auto ceiling = backoff_ceiling(0, retry.backoff_initial, retry.backoff_max);
    auto wake = now + upper_half_jitter(ceiling, random_());
    if (retry.wait_budget.count() != 0 && wake >= call_start_ + retry.wait_budget) {
        if (options_.mode != lock_mode::exclusive) {
            return begin_attempt(now); // a reader or permit holder may get in beside them
        }
        // Too little of the budget left for the sleep: an attempt now could only be served
        // ahead of them (seed 934212157225: begun after a pause had spent its budget, it was
        // granted ahead of two). It waits behind them for what is left, woken if it becomes
        // the oldest meanwhile, and ends without an attempt once the budget has run out
        // (on_wake), at once if it already has.
        if (now >= call_start_ + retry.wait_budget) {
            return finish(failure_);
        }
        wake = call_start_ + retry.wait_budget;
        // As a waiter whose backoff ran out behind them: its turn comes once it is the
        // oldest (reconsider), released or not; a neighbour's grant puts it off until that
        // one's release (on_local_grant).
        deferred_ = true;
    }
    state_ = state::sleeping;
    backoff_wake_ = wake;
    own_wake_ = wake;
    early_wake_ = false;
    return {acquire_action::kind::sleep, wake, {}};
}

acquire_action acquire_fsm::begin_attempt(clock::time_point now) {
    ++attempt_;
    // The clock restarts with every attempt: the validity of a lock is measured from the
    // SETs that granted it, never from an earlier attempt (node-redlock #168 measured from
    // the first).
    attempt_start_ = now;
    votes_ = tally(votes_.nodes());
    raises_ = tally(votes_.nodes());
    raising_ = false;
    fence_token_ = 0;
    rejection_.reset();
    counters_.assign(votes_.nodes(), 0);
    answered_.assign(votes_.nodes(), false);
    granted_.assign(votes_.nodes(), false);
    landed_.assign(votes_.nodes(), false);
    refused_.assign(votes_.nodes(), false);
    mismatched_ = 0;
    // A subscription confirmed before the SETs go out was processed by the node before them
    // (the confirmation came back first): any release after a refusal is announced to us.
    covered_ = subscribed_;
    freed_.assign(votes_.nodes(), false);
    early_wake_ = false;
    state_ = state::attempting;
    deadline_ = attempt_deadline(now, options_);
    return {acquire_action::kind::send_set, deadline_, {}};
}

acquire_action acquire_fsm::on_set_reply(unsigned attempt, std::size_t node, node_outcome outcome,
                                         clock::time_point now, std::uint64_t counter,
                                         bool landed) {
    if (attempt != attempt_) {
        return {};
    }
    if (state_ != state::attempting) {
        // Decided without it, but the handoff counts this node as held until it announces a
        // release (a refused SET NX changed nothing, so the cleanup's target is unchanged).
        if ((state_ == state::cleaning_up || state_ == state::sleeping) &&
            outcome == node_outcome::refused && !answered_[node]) {
            refused_[node] = true;
        }
        return {};
    }
    if (now >= deadline_) {
        // Handled at or after the deadline (an event loop that stalled past it may run the
        // replies that waited before the timer): no vote, or a raise that landed after a
        // reader's second look could be counted (docs/safety.md). What it says of the key
        // still steers the cleanup.
        answered_[node] = true;
        landed_[node] = outcome == node_outcome::granted || landed;
        refused_[node] = outcome == node_outcome::refused;
        return on_deadline(now);
    }
    if (votes_.record(node, outcome)) {
        answered_[node] = true;
        granted_[node] = outcome == node_outcome::granted;
        landed_[node] = granted_[node] || landed;
        refused_[node] = outcome == node_outcome::refused;
        counters_[node] = counter;
    }
    return decide(now);
}

void acquire_fsm::on_mismatch(std::size_t node) {
    if (state_ == state::attempting && !votes_.has_voted(node)) {
        ++mismatched_;
    }
}

acquire_action acquire_fsm::grant(clock::time_point now) {
    const auto until = detail::valid_until(attempt_start_, options_);
    if (until - now >= options_.min_validity) {
        valid_until_ = until;
        return finish({});
    }
    return fail_attempt(errc::validity_expired, now, true);
}

acquire_action acquire_fsm::decide(clock::time_point now) {
    if (votes_.reached()) {
        return options_.fencing ? begin_raise(now) : grant(now);
    }
    if (mismatched_ >= votes_.quorum()) {
        return fail_attempt(errc::lock_mismatch, now, true);
    }
    if (votes_.impossible()) {
        // A quorum holding what is no lock of this kind ends the acquire (lock_mismatch, never
        // retried); deciding at "impossible" could end the attempt before the rest of that
        // quorum answered, and the acquire would retry against it as if it were contention.
        // So while the mismatches heard and the votes still out could make a quorum, the
        // attempt waits for them, at most until its deadline. Only after a mismatch: the
        // usual attempt is still decided as soon as a quorum is out of reach.
        if (mismatched_ > 0 && mismatched_ + votes_.pending() >= votes_.quorum()) {
            return {};
        }
        return fail_attempt(votes_.refusals_decide() ? errc::contention : errc::quorum_unreachable,
                            now, true);
    }
    return {};
}

acquire_action acquire_fsm::begin_raise(clock::time_point now) {
    // t is above every counter the granting majority returned: any earlier grant's raise
    // majority meets this one, so t is above every token granted before. No counter is ever
    // left out of that maximum; one that leads the others too far refuses the acquire.
    fence_floor_ = fence_floor_source_ ? fence_floor_source_() : 0;
    rejection_ = judge_counters(counters_, granted_, fence_floor_, options_.max_counter_lead);
    if (rejection_) {
        return fail_attempt(errc::fencing_counter_refused, now, true);
    }
    std::uint64_t highest = fence_floor_;
    behind_.clear();
    for (std::size_t node = 0; node < votes_.nodes(); ++node) {
        if (granted_[node]) {
            highest = std::max(highest, counters_[node]);
            if (counters_[node] < fence_floor_) {
                behind_.push_back(node);
            }
        }
    }
    if (highest == std::numeric_limits<std::uint64_t>::max()) {
        // Only the floor can be there now (every counter was judged): this client was given
        // the last token itself.
        rejection_ =
            counter_rejection{counter_rejection::kind::exhausted, std::nullopt, highest, highest};
        return fail_attempt(errc::fencing_counter_refused, now, true);
    }
    if (detail::valid_until(attempt_start_, options_) - now < options_.min_validity) {
        return fail_attempt(errc::validity_expired, now, true);
    }
    fence_token_ = highest + 1;
    raising_ = true;
    state_ = state::raising;
    deadline_ = raise_deadline(attempt_start_, now, options_);
    raise_capped_by_validity_ = deadline_ < now + options_.node_timeout;
    for (std::size_t node = 0; node < votes_.nodes(); ++node) {
        if (refused_[node]) {
            // Our lock is not there: the raise would only refuse.
            raises_.record(node, node_outcome::refused);
        }
    }
    return {acquire_action::kind::send_raise, deadline_, {}};
}

acquire_action acquire_fsm::on_raise_reply(unsigned attempt, std::size_t node, node_outcome outcome,
                                           clock::time_point now) {
    if (state_ != state::raising || attempt != attempt_) {
        return {};
    }
    if (now >= deadline_) {
        // As for the SET replies: nothing handled at or after the deadline counts.
        return on_deadline(now);
    }
    raises_.record(node, outcome);
    return decide_raise(now);
}

acquire_action acquire_fsm::decide_raise(clock::time_point now) {
    if (raises_.reached()) {
        return grant(now);
    }
    if (raises_.impossible()) {
        return fail_attempt(raises_.refusals_decide() ? errc::contention : errc::quorum_unreachable,
                            now, true);
    }
    return {};
}

acquire_action acquire_fsm::on_deadline(clock::time_point now) {
    if (state_ == state::raising) {
        raises_.fail_pending();
        if (raise_capped_by_validity_) {
            return fail_attempt(errc::validity_expired, now, false);
        }
        return fail_attempt(raises_.refusals_decide() ? errc::contention : errc::quorum_unreachable,
                            now, false);
    }
    if (state_ == state::attempting) {
        const bool was_possible = !votes_.impossible();
        votes_.fail_pending();
        if (was_possible && deadline_is_validity_horizon(options_)) {
            return fail_attempt(errc::validity_expired, now, false);
        }
        return fail_attempt(votes_.refusals_decide() ? errc::contention : errc::quorum_unreachable,
                            now, false);
    }
    if (state_ == state::cleaning_up) {
        // A node that answered the SET but not the cleanup in time: its DEL stays queued
        // on the connection; the key expires by its TTL at worst.
        return after_cleanup(now);
    }
    return {};
}

acquire_action acquire_fsm::fail_attempt(std::error_code reason, clock::time_point now,
                                         bool await_silent) {
    // Cancellation wins over whatever the attempt itself concluded.
    if (failure_ != errc::cancelled) {
        failure_ = reason;
    }
    state_ = state::cleaning_up;
    // Wait where our key is or may soon be: nodes whose SET wrote it (granted, or discounted
    // by the restart quarantine), and, when the failure was decided early, nodes still
    // silent, so that a failed acquire returns with its keys gone.
    // Nodes that already timed out are not waited for again (paused or partitioned: their
    // cleanup is queued behind their SET anyway), nor are nodes that failed.
    cleanup_outstanding_ = 0;
    for (std::size_t node = 0; node < votes_.nodes(); ++node) {
        const bool awaited = landed_[node] || (await_silent && !answered_[node]);
        cleanup_awaited_[node] = awaited;
        cleanup_outstanding_ += awaited ? 1 : 0;
    }
    return {acquire_action::kind::send_cleanup, now + options_.node_timeout, {}};
}

acquire_action acquire_fsm::on_cleanup_sent(clock::time_point now) {
    if (state_ == state::cleaning_up && cleanup_outstanding_ == 0) {
        return after_cleanup(now);
    }
    return {};
}

acquire_action acquire_fsm::on_cleanup_reply(unsigned attempt, std::size_t node,
                                             clock::time_point now) {
    if (state_ != state::cleaning_up || attempt != attempt_ || !cleanup_awaited_.at(node)) {
        return {};
    }
    cleanup_awaited_[node] = false;
    if (--cleanup_outstanding_ > 0) {
        return {};
    }
    return after_cleanup(now);
}

acquire_action acquire_fsm::after_cleanup(clock::time_point now) {
    // Refused counters stay refused until an operator repairs them, and a quorum holding
    // what is no lock of this kind keeps it: retrying would only ask again (and a hostile
    // node would answer the same).
    if (failure_ == errc::cancelled || failure_ == errc::fencing_counter_refused ||
        failure_ == errc::lock_mismatch) {
        return finish(failure_);
    }
    const auto& retry = options_.retry;
    // Attempts made for a later waiter (nudged) are its, not this one's.
    const auto own = own_attempts();
    if (retry.max_attempts != 0 && own >= retry.max_attempts) {
        return finish(failure_);
    }
    const auto ceiling = backoff_ceiling(own, retry.backoff_initial, retry.backoff_max);
    // Where a quorum of nodes will announce the release, the backoff is only the fallback:
    // drawn from the upper half of its range, so that waiters do not poll while the handoff
    // serves them (full jitter would wake many of them long before their turn).
    auto wake = now + (covered_quorum() ? upper_half_jitter(ceiling, random_())
                                        : full_jitter(ceiling, random_()));
    if (last_borrowed_ && own_wake_ < wake) {
        // The attempt was a later waiter's poll: this one's own backoff keeps its time, so
        // that its own attempts, and max_attempts, still come (nudges alone would put them
        // off for ever).
        wake = std::max(now, own_wake_);
    }
    own_wake_ = wake;
    if (retry.wait_budget.count() != 0 && wake >= call_start_ + retry.wait_budget) {
        return finish(failure_);
    }
    state_ = state::sleeping;
    backoff_wake_ = wake;
    early_wake_ = false;
    if (const auto early = maybe_wake_early(now); early.what == acquire_action::kind::sleep) {
        return early;
    }
    return {acquire_action::kind::sleep, wake, {}};
}

acquire_action acquire_fsm::on_released(std::size_t node, std::size_t position,
                                        clock::time_point now) {
    if (state_ == state::finished || state_ == state::idle) {
        return {};
    }
    // Also while the attempt is still out: the announcement may overtake the refusal it
    // follows (they come on different connections).
    freed_.at(node) = true;
    return reconsider(position, now);
}

acquire_action acquire_fsm::on_released_everywhere(std::size_t position, clock::time_point now) {
    if (state_ == state::finished || state_ == state::idle) {
        return {};
    }
    freed_.assign(votes_.nodes(), true);
    return reconsider(position, now);
}

acquire_action acquire_fsm::on_moved_up(std::size_t position, clock::time_point now) {
    if (state_ == state::finished || state_ == state::idle) {
        return {};
    }
    return reconsider(position, now);
}

acquire_action acquire_fsm::on_nudged(clock::time_point now) {
    if (state_ != state::sleeping || deferred_ || early_wake_) {
        return {};
    }
    early_wake_ = true;
    nudged_ = true;
    return {acquire_action::kind::sleep, now, {}};
}

acquire_action acquire_fsm::on_subscribed(std::size_t node, std::size_t position,
                                          clock::time_point now) {
    subscribed_.at(node) = true;
    return reconsider(position, now);
}

acquire_action acquire_fsm::reconsider(std::size_t position, clock::time_point now) {
    if (state_ == state::idle) {
        // Queued while waiting for connections: start() or start_behind_waiters() take the
        // position the queue has then (it may move up meanwhile, unheard here).
        return {};
    }
    position_ = position;
    if (state_ != state::sleeping) {
        return {};
    }
    if (deferred_ && position_ == 0) {
        // Its backoff ran out behind older waiters, all gone now: its turn.
        deferred_ = false;
        early_wake_ = true;
        return {acquire_action::kind::sleep, now, {}};
    }
    return maybe_wake_early(now);
}

void acquire_fsm::on_subscription_lost(std::size_t node) {
    // Only what comes later is unheard: the backoff bounds the wait for it. The node no longer
    // covers the attempt either: confirmed again, it may have missed a release in between.
    subscribed_.at(node) = false;
    covered_.at(node) = false;
}

acquire_action acquire_fsm::on_local_grant() {
    if (state_ != state::sleeping) {
        return {};
    }
    // The key is held again, by a neighbour: what was freed before is taken; from here on
    // only the nodes whose subscription is confirmed will tell us of the next release. A
    // turn deferred to that neighbour comes with its release, not at once: an attempt now
    // would only be refused (and spend one of the attempts allowed).
    deferred_ = false;
    freed_.assign(votes_.nodes(), false);
    covered_ = subscribed_;
    if (!early_wake_) {
        return {};
    }
    early_wake_ = false;
    return {acquire_action::kind::sleep, backoff_wake_, {}};
}

bool acquire_fsm::covered_quorum() const {
    if (!options_.retry.wake_on_release || failure_ != errc::contention) {
        return false;
    }
    const auto covered =
        static_cast<std::size_t>(std::count(covered_.begin(), covered_.end(), true));
    return covered >= votes_.quorum();
}

acquire_action acquire_fsm::maybe_wake_early(clock::time_point now) {
    // Not only after contention: an attempt decided by its deadline (a slow or failed node
    // among the refusals) still waits for a holder, whose release is worth hearing.
    if (early_wake_ || !options_.retry.wake_on_release || failure_ == errc::cancelled) {
        return {};
    }
    std::size_t could_be_free = 0;
    bool heard = false;
    for (std::size_t node = 0; node < votes_.nodes(); ++node) {
        // A refusal whose node was not yet listening may hide a release in between.
        const bool freed =
            refused_[node] && (freed_[node] || (!covered_[node] && subscribed_[node]));
        could_be_free += (!refused_[node] || freed) ? 1 : 0;
        heard = heard || freed;
    }
    // Evidence of a release is needed: nodes that failed (down, slow) count as possibly
    // free, and without it an outage would turn the sleep into a busy loop.
    if (!heard || could_be_free < votes_.quorum()) {
        return {};
    }
    // Of one client's waiters for a lock that admits one holder, only the oldest retries:
    // it takes the key or finds it taken again, and either way the others would only be
    // refused (a herd that, once round trips outgrow the stagger, feeds on itself). They
    // wait for the next release, or for their backoff should that one never be heard.
    if (options_.mode == lock_mode::exclusive && position_ > 0) {
        return {};
    }
    // Readers and permit holders may get in side by side: the oldest first, the others
    // one stagger later each (a neighbour's grant cancels their wake: on_local_grant); the
    // random part keeps the later ones of different clients from firing at once.
    const auto stagger =
        std::chrono::duration_cast<clock::duration>(options_.retry.handoff_stagger);
    const auto rank = std::min<std::size_t>(position_, 64);
    // The oldest goes at once: a release by this client is then pipelined right behind.
    const auto jitter = stagger.count() > 0 && rank > 0
                            ? clock::duration(static_cast<clock::rep>(
                                  random_() % static_cast<std::uint64_t>(stagger.count())))
                            : clock::duration::zero();
    const auto early = now + stagger * static_cast<clock::rep>(rank) + jitter;
    if (early >= backoff_wake_) {
        return {};
    }
    early_wake_ = true;
    return {acquire_action::kind::sleep, early, {}};
}

acquire_action acquire_fsm::on_wake(clock::time_point now) {
    if (state_ != state::sleeping) {
        return {};
    }
    // No attempt starts once the wait budget has passed: a wake delayed past it (waiting
    // for connections, or a late timer) ends the acquire with the last attempt's failure.
    const auto& retry = options_.retry;
    if (retry.wait_budget.count() != 0 && now >= call_start_ + retry.wait_budget) {
        return finish(failure_);
    }
    if (options_.mode == lock_mode::exclusive && retry.wake_on_release && position_ > 0) {
        // Older waiters of this client for the same keys are still there (asleep, or
        // attempting): they go first, in the order they were called; this one only would
        // take the key from under them. It attempts once it is the oldest (reconsider),
        // or sleeps on, within its wait budget.
        // Each deferral has the oldest poll for this one: it counts as one of this one's
        // attempts, so that max_attempts still ends it (and bounds the nudges).
        if (attempts_spent()) {
            return finish(failure_);
        }
        deferred_ = true;
        // Growing as attempts would, and never at once: with a zero backoff the deferral
        // would spin.
        ++deferrals_;
        const auto ceiling =
            backoff_ceiling(own_attempts() + deferrals_, retry.backoff_initial, retry.backoff_max);
        auto wake = now + std::max<clock::duration>(upper_half_jitter(ceiling, random_()),
                                                    std::chrono::milliseconds(1));
        if (retry.wait_budget.count() != 0) {
            wake = std::min(wake, call_start_ + retry.wait_budget);
        }
        backoff_wake_ = wake;
        early_wake_ = false;
        return {acquire_action::kind::sleep, wake, {}};
    }
    deferred_ = false;
    // Made for a later waiter of the client: neither this one's max_attempts nor its
    // backoff's growth counts it.
    last_borrowed_ = nudged_;
    if (nudged_) {
        nudged_ = false;
        ++borrowed_;
    }
    return begin_attempt(now);
}

acquire_action acquire_fsm::on_cancel(clock::time_point now) {
    switch (state_) {
    case state::idle:
    case state::sleeping:
        failure_ = errc::cancelled;
        return finish(failure_);
    case state::attempting:
        // Cancelling cleans up like a failure (any SET may have landed), but promptly: it
        // does not wait for silent nodes, whose cleanup is queued behind their SET.
        failure_ = errc::cancelled;
        votes_.fail_pending();
        return fail_attempt(errc::cancelled, now, false);
    case state::raising:
        failure_ = errc::cancelled;
        raises_.fail_pending();
        return fail_attempt(errc::cancelled, now, false);
    case state::cleaning_up:
        failure_ = errc::cancelled;
        return {};
    case state::finished:
        return {};
    }
    return {};
}

acquire_action acquire_fsm::finish(std::error_code error) {
    state_ = state::finished;
    return {acquire_action::kind::done, {}, error};
}

} // namespace redlock::detail
