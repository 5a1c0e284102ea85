#include "core/acquire_fsm.hpp"

#include <gtest/gtest.h>

namespace {

using namespace std::chrono_literals;
using redlock::lock_options;
using redlock::node_outcome;
using redlock::detail::acquire_action;
using redlock::detail::acquire_fsm;
using kind = acquire_action::kind;
using clock_type = redlock::detail::clock;

struct harness {
    clock_type::time_point now{100s};
    // Full jitter draws the largest sleep of 100 ms (early wakes have room before it), and
    // the stagger's random part is 0.
    std::uint64_t random = 100000;
    lock_options options;

    harness() {
        options.retry.max_attempts = 0;
        options.retry.backoff_initial = 100ms;
        options.retry.backoff_max = 100ms;
        options.retry.handoff_stagger = 500us;
    }
    acquire_fsm make() {
        return acquire_fsm(5, options, [this] { return random; });
    }
};

/// Attempt `attempt` refused by every node; returns the sleep that follows.
acquire_action refused_everywhere(acquire_fsm& fsm, unsigned attempt, clock_type::time_point now) {
    for (std::size_t n = 0; n < 2; ++n) {
        fsm.on_set_reply(attempt, n, node_outcome::refused, now);
    }
    EXPECT_EQ(fsm.on_set_reply(attempt, 2, node_outcome::refused, now).what, kind::send_cleanup);
    // Decided at the third refusal; the last two come in while their cleanups are awaited.
    fsm.on_set_reply(attempt, 3, node_outcome::refused, now);
    fsm.on_set_reply(attempt, 4, node_outcome::refused, now);
    fsm.on_cleanup_sent(now);
    fsm.on_cleanup_reply(attempt, 3, now);
    return fsm.on_cleanup_reply(attempt, 4, now);
}

void subscribe_everywhere(acquire_fsm& fsm, clock_type::time_point now) {
    for (std::size_t n = 0; n < 5; ++n) {
        fsm.on_subscribed(n, 0, now);
    }
}

/// An exclusive waiter of `h` with wait budget `budget`, subscribed everywhere.
acquire_fsm subscribed_with_budget(harness& h, std::chrono::milliseconds budget) {
    h.options.retry.wait_budget = budget;
    auto fsm = h.make();
    subscribe_everywhere(fsm, h.now);
    return fsm;
}

/// Subscribed everywhere, then the first attempt refused everywhere: the sleep.
acquire_action waiting(acquire_fsm& fsm, clock_type::time_point now) {
    subscribe_everywhere(fsm, now);
    fsm.start(now);
    return refused_everywhere(fsm, 1, now);
}

TEST(acquire_fsm_handoff, wakes_once_a_quorum_of_refusing_nodes_announced_a_release) {
    harness h;
    auto fsm = h.make();
    const auto sleep = waiting(fsm, h.now);
    ASSERT_EQ(sleep.what, kind::sleep);
    // Covered by subscriptions: the backoff is a fallback, drawn from its upper half.
    EXPECT_GE(sleep.at, h.now + 50ms);
    EXPECT_LE(sleep.at, h.now + 100ms);
    h.now += 10ms;
    EXPECT_EQ(fsm.on_released(0, 0, h.now).what, kind::wait);
    EXPECT_EQ(fsm.on_released(1, 0, h.now).what, kind::wait);
    const auto early = fsm.on_released(2, 0, h.now);
    ASSERT_EQ(early.what, kind::sleep);
    // Oldest waiter: only the random part of one stagger.
    EXPECT_GE(early.at, h.now);
    EXPECT_LT(early.at, h.now + 500us);
    EXPECT_TRUE(fsm.waking_early());
    // Further announcements do not move it.
    EXPECT_EQ(fsm.on_released(3, 0, h.now).what, kind::wait);
    EXPECT_EQ(fsm.on_wake(early.at).what, kind::send_set);
    EXPECT_EQ(fsm.attempt(), 2u);
}

TEST(acquire_fsm_handoff, nodes_that_did_not_refuse_count_as_possibly_free) {
    harness h;
    auto fsm = h.make();
    subscribe_everywhere(fsm, h.now);
    fsm.start(h.now);
    for (std::size_t n = 0; n < 3; ++n) {
        fsm.on_set_reply(1, n, node_outcome::refused, h.now);
    }
    // Nodes 3, 4 silent (contention is decided by 3 refusals): both count as free.
    fsm.on_cleanup_sent(h.now);
    fsm.on_cleanup_reply(1, 3, h.now);
    ASSERT_EQ(fsm.on_cleanup_reply(1, 4, h.now).what, kind::sleep);
    // The failed nodes alone do not wake it: no release was heard.
    EXPECT_FALSE(fsm.waking_early());
    EXPECT_EQ(fsm.on_released(0, 0, h.now).what, kind::sleep);
}

TEST(acquire_fsm_handoff, an_attempt_decided_by_its_deadline_also_wakes_on_release) {
    harness h;
    auto fsm = h.make();
    subscribe_everywhere(fsm, h.now);
    fsm.start(h.now);
    fsm.on_set_reply(1, 0, node_outcome::refused, h.now);
    fsm.on_set_reply(1, 1, node_outcome::refused, h.now);
    // Two refusals and a failure, nodes 2 and 4 silent: quorum_unreachable, not contention.
    ASSERT_EQ(fsm.on_set_reply(1, 3, node_outcome::failed, h.now).what, kind::send_cleanup);
    fsm.on_cleanup_sent(h.now);
    fsm.on_cleanup_reply(1, 2, h.now);
    ASSERT_EQ(fsm.on_cleanup_reply(1, 4, h.now).what, kind::sleep);
    // Nodes 2, 3, 4 did not refuse; one announced release from a refusing node is evidence.
    EXPECT_EQ(fsm.on_released(0, 0, h.now + 10ms).what, kind::sleep);
}

TEST(acquire_fsm_handoff, only_the_oldest_waiter_for_an_exclusive_lock_wakes_early) {
    harness h;
    auto fsm = h.make();
    const auto sleep = waiting(fsm, h.now);
    for (std::size_t n = 0; n < 5; ++n) {
        EXPECT_EQ(fsm.on_released(n, 1, h.now).what, kind::wait);
    }
    EXPECT_FALSE(fsm.waking_early());
    // Once the waiters ahead are gone, the next release wakes it at once.
    const auto early = fsm.on_released(0, 0, h.now + 1ms);
    ASSERT_EQ(early.what, kind::sleep);
    EXPECT_EQ(early.at, h.now + 1ms);
    EXPECT_LT(early.at, sleep.at);
}

TEST(acquire_fsm_handoff, a_release_let_pass_for_an_older_waiter_wakes_it_once_that_one_left) {
    harness h;
    auto fsm = h.make();
    const auto sleep = waiting(fsm, h.now);
    for (std::size_t n = 0; n < 5; ++n) {
        EXPECT_EQ(fsm.on_released(n, 1, h.now).what, kind::wait);
    }
    // The oldest, woken by that release, gives up without the key (cancelled, out of
    // attempts): the key is free and no further release will say so.
    const auto early = fsm.on_moved_up(0, h.now + 1ms);
    ASSERT_EQ(early.what, kind::sleep);
    EXPECT_EQ(early.at, h.now + 1ms);
    EXPECT_LT(early.at, sleep.at);
}

TEST(acquire_fsm_handoff, moving_up_after_a_local_grant_waits_for_the_next_release) {
    harness h;
    auto fsm = h.make();
    waiting(fsm, h.now);
    EXPECT_EQ(fsm.on_released_everywhere(1, h.now).what, kind::wait);
    // The oldest got the key: the release is used up.
    EXPECT_EQ(fsm.on_local_grant().what, kind::wait);
    EXPECT_EQ(fsm.on_moved_up(0, h.now + 1ms).what, kind::wait);
    EXPECT_FALSE(fsm.waking_early());
}

TEST(acquire_fsm_handoff, a_release_by_this_client_wakes_the_oldest_at_once) {
    harness h;
    auto fsm = h.make();
    waiting(fsm, h.now);
    const auto early = fsm.on_released_everywhere(0, h.now);
    ASSERT_EQ(early.what, kind::sleep);
    EXPECT_EQ(early.at, h.now);
    // Woken, its attempt is not taken to follow the announcements it woke on.
    ASSERT_EQ(fsm.on_wake(h.now).what, kind::send_set);
    EXPECT_EQ(refused_everywhere(fsm, 2, h.now).what, kind::sleep);
    EXPECT_FALSE(fsm.waking_early());
}

TEST(acquire_fsm_handoff, behind_local_waiters_it_sleeps_until_a_release_reaches_it) {
    harness h;
    h.random = 0; // the lowest draw: the upper half of the first backoff starts at 50 ms
    auto fsm = h.make();
    subscribe_everywhere(fsm, h.now);
    const auto sleep = fsm.start_behind_waiters(h.now, h.now, 1);
    ASSERT_EQ(sleep.what, kind::sleep);
    EXPECT_EQ(sleep.at, h.now + 50ms);
    EXPECT_EQ(fsm.attempt(), 0u) << "no attempt made";
    // Others ahead: the release is theirs, and the oldest gets the key.
    EXPECT_EQ(fsm.on_released_everywhere(1, h.now).what, kind::wait);
    EXPECT_EQ(fsm.on_local_grant().what, kind::wait);
    // Its turn: the announcements of a quorum wake it.
    EXPECT_EQ(fsm.on_released(0, 0, h.now + 1ms).what, kind::wait);
    EXPECT_EQ(fsm.on_released(1, 0, h.now + 1ms).what, kind::wait);
    const auto early = fsm.on_released(2, 0, h.now + 1ms);
    ASSERT_EQ(early.what, kind::sleep);
    EXPECT_EQ(early.at, h.now + 1ms);
    EXPECT_EQ(fsm.on_wake(early.at).what, kind::send_set);
    EXPECT_EQ(fsm.attempt(), 1u);
}

TEST(acquire_fsm_handoff, behind_local_waiters_it_attempts_at_once_when_it_could_not_be_woken) {
    {
        harness h;
        h.options.mode = redlock::lock_mode::shared;
        auto fsm = h.make();
        fsm.on_subscribed(0, 1, h.now);
        fsm.on_subscribed(1, 1, h.now);
        EXPECT_EQ(fsm.start_behind_waiters(h.now, h.now, 1).what, kind::send_set)
            << "a reader subscribed on two of five";
    }
    {
        harness h;
        h.options.retry.max_attempts = 1;
        auto fsm = h.make();
        subscribe_everywhere(fsm, h.now);
        EXPECT_EQ(fsm.start_behind_waiters(h.now, h.now, 1).what, kind::send_set)
            << "no retry allowed";
    }
    {
        harness h;
        h.options.mode = redlock::lock_mode::shared;
        h.options.retry.wait_budget = 10ms;
        auto fsm = h.make();
        subscribe_everywhere(fsm, h.now);
        EXPECT_EQ(fsm.start_behind_waiters(h.now, h.now, 1).what, kind::send_set)
            << "a reader's budget too short for the sleep";
    }
    {
        harness h;
        h.options.retry.wake_on_release = false;
        auto fsm = h.make();
        subscribe_everywhere(fsm, h.now);
        EXPECT_EQ(fsm.start_behind_waiters(h.now, h.now, 1).what, kind::send_set) << "handoff off";
    }
}

// An exclusive waiter behind older ones of its client whose budget is too short for one
// sleep (a short budget, or one spent waiting for connections or in a pause) could only be
// served ahead of them by an attempt: it sleeps what is left of its budget behind them, and
// ends without an attempt, at once if nothing is left (seed 934212157225: attempting at once,
// it was granted ahead of two older waiters).
TEST(acquire_fsm_handoff,
     behind_local_waiters_an_exclusive_budget_too_short_to_wait_ends_unattempted) {
    {
        harness h;
        auto fsm = subscribed_with_budget(h, 150ms);
        const auto ended = fsm.start_behind_waiters(h.now, h.now - 200ms, 1);
        EXPECT_EQ(ended.what, kind::done) << "budget spent before it began";
        EXPECT_EQ(ended.error, redlock::errc::contention) << ended.error.message();
        EXPECT_EQ(fsm.attempt(), 0u) << "no SET was sent";
        EXPECT_FALSE(fsm.attempts_spent());
    }
    {
        harness h;
        auto fsm = subscribed_with_budget(h, 10ms);
        const auto sleep = fsm.start_behind_waiters(h.now, h.now, 1);
        ASSERT_EQ(sleep.what, kind::sleep) << "the first sleep would be 50-100 ms";
        EXPECT_EQ(sleep.at, h.now + 10ms) << "what is left of the budget";
        const auto ended = fsm.on_wake(sleep.at);
        EXPECT_EQ(ended.what, kind::done);
        EXPECT_EQ(ended.error, redlock::errc::contention);
        EXPECT_EQ(fsm.attempt(), 0u);
    }
    {
        harness h;
        auto fsm = subscribed_with_budget(h, 10ms);
        const auto sleep = fsm.start_behind_waiters(h.now, h.now, 1);
        ASSERT_EQ(sleep.what, kind::sleep);
        // A release, let pass for the older one; then the older one leaves without the key:
        // its turn, within its budget.
        for (std::size_t node = 0; node < 3; ++node) {
            EXPECT_EQ(fsm.on_released(node, 1, h.now + 1ms).what, kind::wait) << node;
        }
        const auto woken = fsm.on_moved_up(0, h.now + 2ms);
        ASSERT_EQ(woken.what, kind::sleep);
        EXPECT_LE(woken.at, h.now + 2ms);
        EXPECT_EQ(fsm.on_wake(h.now + 2ms).what, kind::send_set) << "the oldest now: it attempts";
    }
    {
        harness h;
        auto fsm = subscribed_with_budget(h, 10ms);
        ASSERT_EQ(fsm.start_behind_waiters(h.now, h.now, 1).what, kind::sleep);
        // The older one left without the key, no release heard (a silent expiry, say): its
        // turn all the same, within its budget.
        const auto woken = fsm.on_moved_up(0, h.now + 2ms);
        ASSERT_EQ(woken.what, kind::sleep);
        EXPECT_EQ(woken.at, h.now + 2ms);
        EXPECT_EQ(fsm.on_wake(woken.at).what, kind::send_set);
    }
    {
        harness h;
        auto fsm = subscribed_with_budget(h, 10ms);
        ASSERT_EQ(fsm.start_behind_waiters(h.now, h.now, 1).what, kind::sleep);
        // The older one was granted: this one waits for its release, within its budget.
        fsm.on_local_grant();
        EXPECT_EQ(fsm.on_moved_up(0, h.now + 2ms).what, kind::wait);
        const auto ended = fsm.on_wake(h.now + 10ms);
        EXPECT_EQ(ended.what, kind::done);
        EXPECT_EQ(ended.error, redlock::errc::contention);
    }
    {
        harness h;
        auto fsm = subscribed_with_budget(h, 2s);
        EXPECT_EQ(fsm.start_behind_waiters(h.now, h.now, 1).what, kind::sleep)
            << "room for a sleep: it waits behind them";
    }
}

/// From `at`, `n` wakes of a waiter deferred to older ones: how long each deferred sleep is.
std::vector<clock_type::duration> deferred_sleeps(acquire_fsm& fsm, clock_type::time_point at,
                                                  int n) {
    std::vector<clock_type::duration> sleeps;
    for (int i = 0; i < n; ++i) {
        const auto deferred = fsm.on_wake(at);
        EXPECT_EQ(deferred.what, kind::sleep) << i;
        EXPECT_TRUE(fsm.deferred()) << i;
        sleeps.push_back(deferred.at - at);
        at = deferred.at;
    }
    return sleeps;
}

// Arrival order: an exclusive waiter behind older ones of its client sleeps, subscribed
// or not (the oldest hears the releases), and when its backoff runs out before they are
// gone it does not attempt: it would only take the key from under them.
TEST(acquire_fsm_handoff, behind_older_waiters_a_backoff_that_runs_out_defers_to_them) {
    harness h;
    h.random = 0;
    auto fsm = h.make();
    const auto sleep = fsm.start_behind_waiters(h.now, h.now, 2);
    ASSERT_EQ(sleep.what, kind::sleep) << "not subscribed anywhere, and still behind them";
    const auto deferred = fsm.on_wake(sleep.at);
    ASSERT_EQ(deferred.what, kind::sleep) << "two older waiters are still there";
    EXPECT_GT(deferred.at, sleep.at);
    EXPECT_EQ(fsm.attempt(), 0u);
    // One older waiter left: still one ahead.
    EXPECT_EQ(fsm.on_moved_up(1, sleep.at + 1ms).what, kind::wait);
    // The last one left: its turn at once, its backoff having run out already.
    const auto turn = fsm.on_moved_up(0, sleep.at + 2ms);
    ASSERT_EQ(turn.what, kind::sleep);
    EXPECT_EQ(turn.at, sleep.at + 2ms);
    EXPECT_TRUE(fsm.waking_early());
    EXPECT_EQ(fsm.on_wake(turn.at).what, kind::send_set);
    EXPECT_EQ(fsm.attempt(), 1u);
}

// Deferred, a waiter's sleeps grow as its attempts' would, and never end at once: with a
// zero backoff it would spin on the client's strand.
TEST(acquire_fsm_handoff, deferrals_grow_and_never_spin) {
    harness h;
    h.random = 0;
    h.options.retry.backoff_initial = 0ms;
    h.options.retry.backoff_max = 0ms;
    auto fsm = h.make();
    const auto sleep = fsm.start_behind_waiters(h.now, h.now, 1);
    ASSERT_EQ(sleep.what, kind::sleep);
    EXPECT_EQ(deferred_sleeps(fsm, sleep.at, 3), (std::vector<clock_type::duration>{1ms, 1ms, 1ms}))
        << "a zero backoff deferred still waits a millisecond";
    EXPECT_EQ(fsm.attempt(), 0u);
}

TEST(acquire_fsm_handoff, a_deferred_waiters_sleeps_double_and_are_at_least_a_millisecond) {
    harness h;
    h.random = 0;
    h.options.retry.backoff_initial = 10ms;
    h.options.retry.backoff_max = 1s;
    auto fsm = h.make();
    const auto sleep = fsm.start_behind_waiters(h.now, h.now, 1);
    ASSERT_EQ(sleep.what, kind::sleep);
    EXPECT_EQ(deferred_sleeps(fsm, sleep.at, 4),
              (std::vector<clock_type::duration>{5ms, 10ms, 20ms, 40ms}))
        << "the upper half of a ceiling that doubles, as for retries (initial x 2^(k-1))";
    EXPECT_EQ(fsm.attempt(), 0u);
}

// The oldest waiter polls for the ones behind it: nudged (a later one's backoff ran out), a
// sleeping oldest attempts at once, an attempt that counts against neither its max_attempts
// nor its backoff's growth; one that is itself deferred, or already waking, does not.
TEST(acquire_fsm_handoff, a_nudged_oldest_waiter_attempts_at_once) {
    harness h;
    auto fsm = h.make();
    fsm.start(h.now);
    ASSERT_EQ(refused_everywhere(fsm, 1, h.now).what, kind::sleep);
    const auto nudged = fsm.on_nudged(h.now + 1ms);
    ASSERT_EQ(nudged.what, kind::sleep);
    EXPECT_EQ(nudged.at, h.now + 1ms);
    EXPECT_TRUE(fsm.waking_early());
    EXPECT_EQ(fsm.on_nudged(h.now + 1ms).what, kind::wait) << "waking already";
    EXPECT_EQ(fsm.on_wake(nudged.at).what, kind::send_set);
    EXPECT_EQ(fsm.attempt(), 2u);
    EXPECT_EQ(fsm.own_attempts(), 1u)
        << "made for the later waiter: not one of this one's max_attempts";
    EXPECT_EQ(fsm.on_nudged(h.now + 2ms).what, kind::wait) << "attempting: nothing to do";
}

// Nudges are bounded: each deferral counts as one of the younger waiter's attempts, and a
// nudged attempt that fails leaves the oldest's own backoff where it was, so that its own
// attempts, and its max_attempts, still come (a helper's review: the two kept each other
// waiting for as long as another client held the key).
TEST(acquire_fsm_handoff, each_deferral_spends_one_of_the_younger_waiters_attempts) {
    harness h;
    h.options.retry.max_attempts = 3;
    auto fsm = h.make();
    auto at = fsm.start_behind_waiters(h.now, h.now, 1).at;
    for (int i = 0; i < 3; ++i) {
        const auto deferred = fsm.on_wake(at);
        ASSERT_EQ(deferred.what, kind::sleep) << i;
        at = deferred.at;
    }
    const auto done = fsm.on_wake(at);
    ASSERT_EQ(done.what, kind::done) << "three polls made for it: its attempts are spent";
    EXPECT_EQ(done.error, redlock::errc::contention);
    EXPECT_EQ(fsm.attempt(), 0u);
}

TEST(acquire_fsm_handoff, a_failed_nudged_attempt_keeps_the_oldests_own_backoff) {
    harness h; // full jitter draws the whole 100 ms
    auto fsm = h.make();
    fsm.start(h.now);
    const auto own = refused_everywhere(fsm, 1, h.now);
    ASSERT_EQ(own.what, kind::sleep);
    ASSERT_EQ(own.at, h.now + 100ms);
    const auto nudged = fsm.on_nudged(h.now + 10ms);
    ASSERT_EQ(fsm.on_wake(nudged.at).what, kind::send_set);
    const auto after = refused_everywhere(fsm, 2, h.now + 10ms);
    ASSERT_EQ(after.what, kind::sleep);
    EXPECT_EQ(after.at, h.now + 100ms) << "not pushed back to 110 ms";
    EXPECT_EQ(fsm.own_attempts(), 1u);
}

TEST(acquire_fsm_handoff, deferring_to_older_waiters_keeps_the_wait_budget) {
    harness h;
    h.random = 0;
    h.options.retry.wait_budget = 90ms;
    auto fsm = h.make();
    const auto sleep = fsm.start_behind_waiters(h.now, h.now, 1);
    ASSERT_EQ(sleep.what, kind::sleep);
    const auto deferred = fsm.on_wake(sleep.at);
    ASSERT_EQ(deferred.what, kind::sleep);
    EXPECT_EQ(deferred.at, h.now + 90ms) << "never past the budget (the backoff says 100 ms)";
    const auto done = fsm.on_wake(deferred.at);
    ASSERT_EQ(done.what, kind::done);
    EXPECT_EQ(done.error, redlock::errc::contention);
    EXPECT_EQ(fsm.attempt(), 0u);
}

TEST(acquire_fsm_handoff, a_reader_behind_older_waiters_attempts_when_its_backoff_runs_out) {
    harness h;
    h.options.mode = redlock::lock_mode::shared;
    auto fsm = h.make();
    subscribe_everywhere(fsm, h.now);
    const auto sleep = fsm.start_behind_waiters(h.now, h.now, 1);
    ASSERT_EQ(sleep.what, kind::sleep);
    EXPECT_EQ(fsm.on_wake(sleep.at).what, kind::send_set) << "readers may get in side by side";
}

TEST(acquire_fsm_handoff, later_readers_are_staggered) {
    harness h;
    h.options.mode = redlock::lock_mode::shared;
    auto fsm = h.make();
    waiting(fsm, h.now);
    fsm.on_released(0, 3, h.now);
    fsm.on_released(1, 3, h.now);
    const auto early = fsm.on_released(2, 3, h.now);
    ASSERT_EQ(early.what, kind::sleep);
    EXPECT_GE(early.at, h.now + 1500us);
    EXPECT_LT(early.at, h.now + 2000us);
}

TEST(acquire_fsm_handoff, a_local_grant_puts_the_early_wake_back_to_the_backoff) {
    harness h;
    h.options.mode = redlock::lock_mode::shared;
    auto fsm = h.make();
    const auto sleep = waiting(fsm, h.now);
    for (std::size_t n = 0; n < 3; ++n) {
        fsm.on_released(n, 2, h.now);
    }
    ASSERT_TRUE(fsm.waking_early());
    const auto back = fsm.on_local_grant();
    ASSERT_EQ(back.what, kind::sleep);
    EXPECT_EQ(back.at, sleep.at);
    EXPECT_FALSE(fsm.waking_early());
    // The releases heard before are used up: a quorum of new ones is needed.
    EXPECT_EQ(fsm.on_released(0, 0, h.now).what, kind::wait);
    EXPECT_EQ(fsm.on_released(1, 0, h.now).what, kind::wait);
    EXPECT_EQ(fsm.on_released(2, 0, h.now).what, kind::sleep);
}

TEST(acquire_fsm_handoff, a_subscription_confirmed_after_the_attempt_counts_as_a_release) {
    // The release may have come between the refusal and the subscription: unheard.
    harness h;
    auto fsm = h.make();
    fsm.start(h.now);
    const auto sleep = refused_everywhere(fsm, 1, h.now);
    ASSERT_EQ(sleep.what, kind::sleep);
    EXPECT_EQ(fsm.on_subscribed(0, 0, h.now).what, kind::wait);
    EXPECT_EQ(fsm.on_subscribed(1, 0, h.now).what, kind::wait);
    EXPECT_EQ(fsm.on_subscribed(2, 0, h.now).what, kind::sleep);
    // The next attempt is covered: its refusals need real announcements.
    fsm.on_wake(h.now + 1ms);
    fsm.on_subscribed(3, 0, h.now); // confirmed during the attempt: still uncovered
    refused_everywhere(fsm, 2, h.now + 1ms);
    EXPECT_FALSE(fsm.waking_early());
    EXPECT_EQ(fsm.on_released(0, 0, h.now).what, kind::wait);
    // Node 3 was not covered when attempt 2 went out and is subscribed now: 0, 3 and 1.
    EXPECT_EQ(fsm.on_released(1, 0, h.now).what, kind::sleep);
}

TEST(acquire_fsm_handoff, an_announcement_overtaking_the_refusal_is_kept) {
    harness h;
    auto fsm = h.make();
    subscribe_everywhere(fsm, h.now);
    fsm.start(h.now);
    for (std::size_t n = 0; n < 3; ++n) {
        fsm.on_released(n, 0, h.now);
    }
    const auto sleep = refused_everywhere(fsm, 1, h.now);
    ASSERT_EQ(sleep.what, kind::sleep);
    EXPECT_LT(sleep.at, h.now + 500us);
    EXPECT_TRUE(fsm.waking_early());
}

TEST(acquire_fsm_handoff, a_lost_subscription_leaves_the_backoff_in_charge) {
    harness h;
    auto fsm = h.make();
    const auto sleep = waiting(fsm, h.now);
    fsm.on_subscription_lost(0);
    fsm.on_subscription_lost(1);
    fsm.on_subscription_lost(2);
    EXPECT_EQ(fsm.on_released(3, 0, h.now).what, kind::wait);
    EXPECT_EQ(fsm.on_released(4, 0, h.now).what, kind::wait);
    EXPECT_FALSE(fsm.waking_early());
    EXPECT_EQ(fsm.on_wake(sleep.at).what, kind::send_set);
}

TEST(acquire_fsm_handoff, a_subscription_confirmed_again_after_a_loss_counts_as_a_release) {
    // Lost during the sleep and confirmed again before it ends (another waiter of the key
    // subscribed anew): a release in the gap went unheard, as before a first confirmation.
    harness h;
    auto fsm = h.make();
    const auto sleep = waiting(fsm, h.now);
    ASSERT_EQ(sleep.what, kind::sleep);
    for (std::size_t n = 0; n < 3; ++n) {
        fsm.on_subscription_lost(n);
    }
    EXPECT_EQ(fsm.on_subscribed(0, 0, h.now).what, kind::wait);
    EXPECT_EQ(fsm.on_subscribed(1, 0, h.now).what, kind::wait);
    EXPECT_EQ(fsm.on_subscribed(2, 0, h.now).what, kind::sleep);
    EXPECT_TRUE(fsm.waking_early());
}

TEST(acquire_fsm_handoff, never_later_than_the_backoff) {
    harness h;
    // Readers: the later ones are staggered (an exclusive waiter behind others defers to
    // them: behind_older_waiters_a_backoff_that_runs_out_defers_to_them).
    h.options.mode = redlock::lock_mode::shared;
    h.options.retry.backoff_initial = 1ms;
    h.options.retry.backoff_max = 1ms;
    auto fsm = h.make();
    const auto sleep = waiting(fsm, h.now);
    for (std::size_t n = 0; n < 3; ++n) {
        // Position 10: ten staggers would be past the backoff's wake.
        EXPECT_EQ(fsm.on_released(n, 10, h.now).what, kind::wait);
    }
    EXPECT_EQ(fsm.on_wake(sleep.at).what, kind::send_set);
}

TEST(acquire_fsm_handoff, without_subscriptions_the_backoff_keeps_its_full_jitter) {
    harness h;
    h.random = 30000; // 30 ms of the 100 ms ceiling
    auto fsm = h.make();
    fsm.start(h.now);
    const auto sleep = refused_everywhere(fsm, 1, h.now);
    EXPECT_EQ(sleep.at, h.now + 30ms);
}

TEST(acquire_fsm_handoff, off_when_not_wanted) {
    harness h;
    h.options.retry.wake_on_release = false;
    auto fsm = h.make();
    waiting(fsm, h.now);
    for (std::size_t n = 0; n < 5; ++n) {
        EXPECT_EQ(fsm.on_released(n, 0, h.now).what, kind::wait);
    }
}

TEST(acquire_fsm_handoff, announcements_after_the_end_change_nothing) {
    harness h;
    auto fsm = h.make();
    fsm.start(h.now);
    for (std::size_t n = 0; n < 3; ++n) {
        fsm.on_set_reply(1, n, node_outcome::granted, h.now);
    }
    ASSERT_TRUE(fsm.finished());
    EXPECT_EQ(fsm.on_released(0, 0, h.now).what, kind::wait);
    EXPECT_EQ(fsm.on_subscribed(0, 0, h.now).what, kind::wait);
    EXPECT_EQ(fsm.on_local_grant().what, kind::wait);
}

} // namespace
