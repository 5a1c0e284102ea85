#include "core/acquire_fsm.hpp"

#include <gtest/gtest.h>

namespace {

using namespace std::chrono_literals;
using redlock::errc;
using redlock::lock_options;
using redlock::node_outcome;
using redlock::detail::acquire_action;
using redlock::detail::acquire_fsm;
using kind = acquire_action::kind;
using clock_type = redlock::detail::clock;

/// A fake clock and a fixed random source: every decision is reproducible.
struct harness {
    clock_type::time_point now{100s};
    std::uint64_t random = 0;
    lock_options options;
    std::size_t nodes = 5;

    harness() {
        options.ttl = 10s;
        options.node_timeout = 50ms;
        options.retry.max_attempts = 3;
        options.retry.backoff_initial = 20ms;
        options.retry.backoff_max = 500ms;
    }
    acquire_fsm make() {
        return acquire_fsm(nodes, options, [this] { return random; });
    }
    void advance(clock_type::duration d) { now += d; }
};

/// Nodes 0-2 answer "held by another", which decides; nodes 3 and 4 were silent, so they
/// get a cleanup, which they answer. Returns what the fsm asks for after that.
acquire_action lose_to_another_holder(acquire_fsm& fsm, unsigned attempt,
                                      clock_type::time_point now) {
    for (std::size_t n = 0; n < 3; ++n) {
        fsm.on_set_reply(attempt, n, node_outcome::refused, now);
    }
    EXPECT_EQ(fsm.on_cleanup_sent(now).what, kind::wait);
    EXPECT_EQ(fsm.on_cleanup_reply(attempt, 3, now).what, kind::wait);
    return fsm.on_cleanup_reply(attempt, 4, now);
}

TEST(acquire_fsm, first_action_sends_set_with_the_per_node_deadline) {
    harness h;
    auto fsm = h.make();
    auto a = fsm.start(h.now);
    EXPECT_EQ(a.what, kind::send_set);
    EXPECT_EQ(a.at, h.now + 50ms);
    EXPECT_EQ(fsm.attempt(), 1u);
}

TEST(acquire_fsm, succeeds_at_quorum_without_waiting_for_the_others) {
    harness h;
    auto fsm = h.make();
    const auto start = h.now;
    fsm.start(h.now);
    h.advance(1ms);
    EXPECT_EQ(fsm.on_set_reply(1, 0, node_outcome::granted, h.now).what, kind::wait);
    EXPECT_EQ(fsm.on_set_reply(1, 1, node_outcome::granted, h.now).what, kind::wait);
    auto a = fsm.on_set_reply(1, 2, node_outcome::granted, h.now);
    ASSERT_EQ(a.what, kind::done);
    EXPECT_FALSE(a.error);
    EXPECT_TRUE(fsm.finished());
    // validity = ttl - elapsed - drift; valid_until = start + ttl - drift.
    EXPECT_EQ(fsm.valid_until(), start + 10s - 102ms);
    EXPECT_EQ(fsm.votes().pending(), 2u);
}

TEST(acquire_fsm, a_quorum_holding_no_lock_ends_the_wait_at_once) {
    // A string without expiry (or another kind of lock) on a quorum: a usage error that no
    // retry mends, so neither a sleep nor a second attempt.
    harness h;
    h.options.retry.max_attempts = 0;
    h.options.retry.wait_budget = 60s;
    auto fsm = h.make();
    fsm.start(h.now);
    for (std::size_t n = 0; n < 2; ++n) {
        fsm.on_mismatch(n);
        EXPECT_EQ(fsm.on_set_reply(1, n, node_outcome::failed, h.now).what, kind::wait);
    }
    fsm.on_mismatch(2);
    EXPECT_EQ(fsm.on_set_reply(1, 2, node_outcome::failed, h.now).what, kind::send_cleanup);
    EXPECT_EQ(fsm.on_cleanup_sent(h.now).what, kind::wait);
    fsm.on_cleanup_reply(1, 3, h.now);
    const auto a = fsm.on_cleanup_reply(1, 4, h.now);
    ASSERT_EQ(a.what, kind::done);
    EXPECT_EQ(a.error, errc::lock_mismatch);
    EXPECT_EQ(fsm.attempt(), 1u);
}

TEST(acquire_fsm, a_minority_holding_no_lock_is_retried) {
    harness h;
    auto fsm = h.make();
    fsm.start(h.now);
    fsm.on_mismatch(0);
    fsm.on_set_reply(1, 0, node_outcome::failed, h.now);
    fsm.on_set_reply(1, 1, node_outcome::refused, h.now);
    // Out of reach, but the two votes still out could make a quorum of mismatches with
    // node 0's: the attempt waits for them.
    EXPECT_EQ(fsm.on_set_reply(1, 2, node_outcome::refused, h.now).what, kind::wait);
    EXPECT_EQ(fsm.on_set_reply(1, 3, node_outcome::refused, h.now).what, kind::send_cleanup);
    fsm.on_cleanup_sent(h.now);
    EXPECT_EQ(fsm.on_cleanup_reply(1, 4, h.now).what, kind::sleep) << "node 4 was still out";
}

TEST(acquire_fsm, a_quorum_of_mismatches_behind_a_refusal_still_ends_the_wait) {
    // Nodes 0 and 1 hold no lock of this kind, node 2 refuses: a quorum is out of reach, and
    // deciding there would retry as contention while nodes 3 and 4 hold the same mismatch.
    harness h;
    h.options.retry.max_attempts = 0;
    h.options.retry.wait_budget = 60s;
    auto fsm = h.make();
    fsm.start(h.now);
    for (std::size_t n = 0; n < 2; ++n) {
        fsm.on_mismatch(n);
        EXPECT_EQ(fsm.on_set_reply(1, n, node_outcome::failed, h.now).what, kind::wait);
    }
    EXPECT_EQ(fsm.on_set_reply(1, 2, node_outcome::refused, h.now).what, kind::wait);
    fsm.on_mismatch(3);
    EXPECT_EQ(fsm.on_set_reply(1, 3, node_outcome::failed, h.now).what, kind::send_cleanup);
    fsm.on_cleanup_sent(h.now);
    const auto a = fsm.on_cleanup_reply(1, 4, h.now);
    ASSERT_EQ(a.what, kind::done);
    EXPECT_EQ(a.error, errc::lock_mismatch);
    EXPECT_EQ(fsm.attempt(), 1u);
}

TEST(acquire_fsm, after_a_mismatch_the_wait_ends_at_the_attempt_deadline) {
    harness h;
    h.options.retry.max_attempts = 1;
    auto fsm = h.make();
    fsm.start(h.now);
    fsm.on_mismatch(0);
    fsm.on_set_reply(1, 0, node_outcome::failed, h.now);
    fsm.on_set_reply(1, 1, node_outcome::refused, h.now);
    EXPECT_EQ(fsm.on_set_reply(1, 2, node_outcome::refused, h.now).what, kind::wait);
    // Nodes 3 and 4 never answer: the deadline decides, as without a mismatch.
    EXPECT_EQ(fsm.on_deadline(h.now + 1s).what, kind::send_cleanup);
}

TEST(acquire_fsm, late_replies_after_success_change_nothing) {
    harness h;
    auto fsm = h.make();
    fsm.start(h.now);
    for (std::size_t n = 0; n < 3; ++n) {
        fsm.on_set_reply(1, n, node_outcome::granted, h.now);
    }
    ASSERT_TRUE(fsm.finished());
    EXPECT_EQ(fsm.on_set_reply(1, 3, node_outcome::granted, h.now).what, kind::wait);
    EXPECT_EQ(fsm.on_deadline(h.now + 1s).what, kind::wait);
    EXPECT_EQ(fsm.on_cancel(h.now).what, kind::wait);
}

TEST(acquire_fsm, fails_as_soon_as_quorum_is_impossible_and_cleans_up) {
    harness h;
    h.options.retry.max_attempts = 1;
    auto fsm = h.make();
    fsm.start(h.now);
    fsm.on_set_reply(1, 0, node_outcome::granted, h.now);
    fsm.on_set_reply(1, 1, node_outcome::refused, h.now);
    fsm.on_set_reply(1, 2, node_outcome::refused, h.now);
    auto a = fsm.on_set_reply(1, 3, node_outcome::refused, h.now);
    ASSERT_EQ(a.what, kind::send_cleanup) << "node 4 is still silent, yet the outcome is known";
    EXPECT_EQ(a.at, h.now + h.options.node_timeout);
    EXPECT_TRUE(fsm.needs_cleanup(0)) << "granted: our key is there";
    EXPECT_FALSE(fsm.needs_cleanup(1)) << "refused SET NX changed nothing";
    EXPECT_TRUE(fsm.needs_cleanup(4)) << "silent: its SET may still land";
    EXPECT_EQ(fsm.on_cleanup_sent(h.now).what, kind::wait);
    EXPECT_EQ(fsm.on_cleanup_reply(1, 0, h.now).what, kind::wait)
        << "node 4 was silent: its SET and cleanup are in flight, and the failure is only "
           "reported once no key is left where nodes answer";
    EXPECT_EQ(fsm.on_cleanup_reply(1, 1, h.now).what, kind::wait) << "refused: not awaited";
    auto done = fsm.on_cleanup_reply(1, 4, h.now);
    ASSERT_EQ(done.what, kind::done);
    EXPECT_EQ(done.error, errc::contention);
}

TEST(acquire_fsm, nodes_down_means_quorum_unreachable_not_contention) {
    harness h;
    h.options.retry.max_attempts = 1;
    auto fsm = h.make();
    fsm.start(h.now);
    fsm.on_set_reply(1, 0, node_outcome::failed, h.now);
    fsm.on_set_reply(1, 1, node_outcome::failed, h.now);
    auto a = fsm.on_set_reply(1, 2, node_outcome::failed, h.now);
    ASSERT_EQ(a.what, kind::send_cleanup);
    EXPECT_EQ(fsm.on_cleanup_sent(h.now).what, kind::wait) << "nodes 3 and 4 may grant yet";
    EXPECT_EQ(fsm.on_cleanup_reply(1, 3, h.now).what, kind::wait);
    auto done = fsm.on_cleanup_reply(1, 4, h.now);
    ASSERT_EQ(done.what, kind::done);
    EXPECT_EQ(done.error, errc::quorum_unreachable);
}

TEST(acquire_fsm, slow_quorum_at_the_node_deadline_is_quorum_unreachable) {
    harness h;
    h.options.retry.max_attempts = 1;
    auto fsm = h.make();
    fsm.start(h.now);
    fsm.on_set_reply(1, 0, node_outcome::granted, h.now);
    fsm.on_set_reply(1, 1, node_outcome::granted, h.now);
    h.advance(50ms);
    auto a = fsm.on_deadline(h.now);
    ASSERT_EQ(a.what, kind::send_cleanup);
    EXPECT_TRUE(fsm.needs_cleanup(2)) << "timed-out nodes get the cleanup too";
    fsm.on_cleanup_sent(h.now);
    fsm.on_cleanup_reply(1, 0, h.now);
    auto done = fsm.on_cleanup_reply(1, 1, h.now);
    ASSERT_EQ(done.what, kind::done);
    EXPECT_EQ(done.error, errc::quorum_unreachable);
}

// Found by review (issue 22): a vote was counted whenever its reply was handled before the
// deadline's timer, and an event loop that stalled past the deadline may run the replies that
// waited first. A ceiling raise behind such a vote can land after a reader's second look.
TEST(acquire_fsm, a_grant_handled_at_or_after_the_deadline_is_no_vote) {
    harness h;
    h.options.retry.max_attempts = 1;
    auto fsm = h.make();
    const auto first = fsm.start(h.now);
    fsm.on_set_reply(1, 0, node_outcome::granted, h.now + 49ms);
    fsm.on_set_reply(1, 1, node_outcome::granted, h.now + 49ms);
    // The third grant waited while the loop stalled; it runs before the timer.
    const auto a = fsm.on_set_reply(1, 2, node_outcome::granted, first.at);
    ASSERT_EQ(a.what, kind::send_cleanup) << "the deadline decided first";
    EXPECT_EQ(fsm.votes().granted(), 2u);
    EXPECT_TRUE(fsm.needs_cleanup(2));
    EXPECT_EQ(fsm.on_cleanup_sent(first.at).what, kind::wait);
    fsm.on_cleanup_reply(1, 0, first.at);
    fsm.on_cleanup_reply(1, 1, first.at);
    const auto done = fsm.on_cleanup_reply(1, 2, first.at);
    // (The operation runs a due timer before any reply, so this path is the fsm's own guard;
    // it keeps the late grant's landing for the cleanup.)
    ASSERT_EQ(done.what, kind::done) << "the late grant's key was awaited too: it landed";
    EXPECT_EQ(done.error, errc::quorum_unreachable);
}

TEST(acquire_fsm, a_grant_handled_just_before_the_deadline_counts) {
    harness h;
    auto fsm = h.make();
    const auto first = fsm.start(h.now);
    fsm.on_set_reply(1, 0, node_outcome::granted, h.now);
    fsm.on_set_reply(1, 1, node_outcome::granted, h.now);
    const auto a = fsm.on_set_reply(1, 2, node_outcome::granted, first.at - 1us);
    ASSERT_EQ(a.what, kind::done);
    EXPECT_FALSE(a.error);
}

TEST(acquire_fsm, timed_out_nodes_are_not_awaited_during_cleanup) {
    harness h;
    h.options.retry.max_attempts = 1;
    auto fsm = h.make();
    fsm.start(h.now);
    fsm.on_set_reply(1, 0, node_outcome::granted, h.now);
    h.advance(50ms);
    fsm.on_deadline(h.now);
    EXPECT_EQ(fsm.on_cleanup_sent(h.now).what, kind::wait);
    EXPECT_EQ(fsm.on_cleanup_reply(1, 3, h.now).what, kind::wait) << "node 3 was never awaited";
    EXPECT_EQ(fsm.on_cleanup_reply(1, 0, h.now).what, kind::done);
}

// Regression (issue 12, defect 11): a grant the restart quarantine did not count was treated
// as no key at all, so a failed acquire returned without waiting for that node's cleanup
// (and a client torn down then left the key for its whole TTL).
TEST(acquire_fsm, a_discounted_grant_is_cleaned_up_and_awaited) {
    harness h;
    auto fsm = h.make();
    fsm.start(h.now);
    fsm.on_set_reply(1, 0, node_outcome::failed, h.now, 0, true); // quarantined, key written
    fsm.on_set_reply(1, 1, node_outcome::refused, h.now);
    auto a = fsm.on_set_reply(1, 2, node_outcome::refused, h.now);
    ASSERT_EQ(a.what, kind::send_cleanup);
    EXPECT_TRUE(fsm.needs_cleanup(0));
    EXPECT_EQ(fsm.on_cleanup_sent(h.now).what, kind::wait);
    EXPECT_EQ(fsm.on_cleanup_reply(1, 3, h.now).what, kind::wait) << "silent node 3";
    EXPECT_EQ(fsm.on_cleanup_reply(1, 4, h.now).what, kind::wait) << "silent node 4";
    EXPECT_EQ(fsm.on_cleanup_reply(1, 0, h.now).what, kind::sleep)
        << "the discounted node's cleanup was awaited before the retry";
}

TEST(acquire_fsm, cleanup_deadline_ends_the_wait_for_a_silent_cleanup) {
    harness h;
    h.options.retry.max_attempts = 1;
    auto fsm = h.make();
    fsm.start(h.now);
    fsm.on_set_reply(1, 0, node_outcome::granted, h.now);
    for (std::size_t n = 1; n < 4; ++n) {
        fsm.on_set_reply(1, n, node_outcome::refused, h.now);
    }
    fsm.on_cleanup_sent(h.now);
    fsm.on_cleanup_reply(1, 4, h.now);
    h.advance(50ms);
    auto done = fsm.on_deadline(h.now);
    ASSERT_EQ(done.what, kind::done);
    EXPECT_EQ(done.error, errc::contention);
}

TEST(acquire_fsm, quorum_reached_after_the_validity_is_gone_is_validity_expired) {
    harness h;
    h.options.retry.max_attempts = 1;
    h.options.ttl = 100ms;
    h.options.node_timeout = 1s;
    auto fsm = h.make();
    auto first = fsm.start(h.now);
    // The deadline is the validity horizon, not the node timeout: 100 - 3 - 1 ms.
    EXPECT_EQ(first.at, h.now + 96ms);
    fsm.on_set_reply(1, 0, node_outcome::granted, h.now);
    fsm.on_set_reply(1, 1, node_outcome::granted, h.now);
    // The process was paused: the third OK is read long after the TTL.
    h.advance(500ms);
    auto a = fsm.on_set_reply(1, 2, node_outcome::granted, h.now);
    ASSERT_EQ(a.what, kind::send_cleanup) << "never hand out a lock that is already stale";
    fsm.on_cleanup_sent(h.now);
    // Past the deadline, as if the timer had run: the silent nodes are not awaited.
    fsm.on_cleanup_reply(1, 0, h.now);
    fsm.on_cleanup_reply(1, 1, h.now);
    auto done = fsm.on_cleanup_reply(1, 2, h.now);
    ASSERT_EQ(done.what, kind::done);
    EXPECT_EQ(done.error, errc::validity_expired);
}

TEST(acquire_fsm, running_into_the_validity_horizon_is_validity_expired) {
    harness h;
    h.options.retry.max_attempts = 1;
    h.options.ttl = 20ms;
    h.options.node_timeout = 1s;
    auto fsm = h.make();
    auto a = fsm.start(h.now);
    fsm.on_set_reply(1, 0, node_outcome::granted, h.now);
    h.now = a.at;
    auto cleanup = fsm.on_deadline(h.now);
    ASSERT_EQ(cleanup.what, kind::send_cleanup);
    fsm.on_cleanup_sent(h.now);
    auto done = fsm.on_cleanup_reply(1, 0, h.now);
    EXPECT_EQ(done.error, errc::validity_expired);
}

TEST(acquire_fsm, retries_with_full_jitter_backoff_and_restarts_the_clock) {
    harness h;
    h.random = 15'000; // 15 ms inside the first ceiling (20 ms)
    auto fsm = h.make();
    fsm.start(h.now);
    auto sleep = lose_to_another_holder(fsm, 1, h.now);
    ASSERT_EQ(sleep.what, kind::sleep);
    EXPECT_EQ(sleep.at, h.now + 15ms);

    h.now = sleep.at;
    const auto second_start = h.now;
    auto again = fsm.on_wake(h.now);
    ASSERT_EQ(again.what, kind::send_set);
    EXPECT_EQ(fsm.attempt(), 2u);
    EXPECT_EQ(fsm.votes().pending(), 5u) << "a fresh round";

    // A late refusal from attempt 1 must not count in attempt 2.
    EXPECT_EQ(fsm.on_set_reply(1, 4, node_outcome::refused, h.now).what, kind::wait);
    EXPECT_EQ(fsm.votes().refused(), 0u);

    h.advance(2ms);
    for (std::size_t n = 0; n < 3; ++n) {
        fsm.on_set_reply(2, n, node_outcome::granted, h.now);
    }
    ASSERT_TRUE(fsm.finished());
    EXPECT_EQ(fsm.valid_until(), second_start + 10s - 102ms)
        << "validity counts from the winning attempt, not from the first";
}

TEST(acquire_fsm, jitter_never_exceeds_the_doubling_ceiling) {
    harness h;
    h.options.retry.max_attempts = 4;
    h.random = ~std::uint64_t{0};
    auto fsm = h.make();
    fsm.start(h.now);
    for (unsigned attempt = 1; attempt <= 3; ++attempt) {
        auto sleep = lose_to_another_holder(fsm, attempt, h.now);
        ASSERT_EQ(sleep.what, kind::sleep);
        const auto ceiling = 20ms * (1 << (attempt - 1));
        EXPECT_LE(sleep.at - h.now, ceiling);
        h.now = sleep.at;
        fsm.on_wake(h.now);
    }
}

TEST(acquire_fsm, stops_after_max_attempts_with_the_last_reason) {
    harness h;
    h.options.retry.max_attempts = 2;
    auto fsm = h.make();
    fsm.start(h.now);
    auto sleep = lose_to_another_holder(fsm, 1, h.now);
    ASSERT_EQ(sleep.what, kind::sleep);
    fsm.on_wake(sleep.at);
    for (std::size_t n = 0; n < 3; ++n) {
        fsm.on_set_reply(2, n, node_outcome::failed, sleep.at);
    }
    fsm.on_cleanup_sent(sleep.at);
    fsm.on_cleanup_reply(2, 3, sleep.at);
    auto done = fsm.on_cleanup_reply(2, 4, sleep.at);
    ASSERT_EQ(done.what, kind::done);
    EXPECT_EQ(done.error, errc::quorum_unreachable);
    EXPECT_EQ(fsm.attempt(), 2u);
}

TEST(acquire_fsm, no_attempt_starts_after_the_wait_budget) {
    harness h;
    h.options.retry.max_attempts = 0; // only the budget bounds it
    h.options.retry.wait_budget = 30ms;
    h.random = 19'000;
    auto fsm = h.make();
    const auto call = h.now;
    fsm.start(h.now);
    unsigned attempts = 1;
    for (;;) {
        auto next = lose_to_another_holder(fsm, attempts, h.now);
        if (next.what == kind::done) {
            EXPECT_EQ(next.error, errc::contention);
            break;
        }
        ASSERT_EQ(next.what, kind::sleep);
        EXPECT_LT(next.at, call + 30ms);
        h.now = next.at;
        fsm.on_wake(h.now);
        ++attempts;
        ASSERT_LT(attempts, 100u);
    }
    EXPECT_EQ(attempts, 2u) << "19 ms, then 19 ms more would start past 30 ms";
}

// Found by review: an acquire that woke and then waited for its connections could start
// an attempt at or past the end of its wait budget.
TEST(acquire_fsm, a_wake_past_the_wait_budget_ends_with_the_last_failure) {
    harness h;
    h.options.retry.max_attempts = 0;
    h.options.retry.wait_budget = 1s;
    auto fsm = h.make();
    fsm.start(h.now);
    const auto sleep = lose_to_another_holder(fsm, 1, h.now);
    ASSERT_EQ(sleep.what, kind::sleep);
    h.now += 1s; // the wake came, then the wait for links took the rest of the budget
    const auto a = fsm.on_wake(h.now);
    ASSERT_EQ(a.what, kind::done);
    EXPECT_EQ(a.error, errc::contention);
    EXPECT_EQ(fsm.attempt(), 1u);
}

TEST(acquire_fsm, cancel_while_attempting_cleans_up_then_reports_cancelled) {
    harness h;
    auto fsm = h.make();
    fsm.start(h.now);
    fsm.on_set_reply(1, 0, node_outcome::granted, h.now);
    fsm.on_set_reply(1, 1, node_outcome::granted, h.now);
    auto a = fsm.on_cancel(h.now);
    ASSERT_EQ(a.what, kind::send_cleanup);
    EXPECT_TRUE(fsm.needs_cleanup(4));
    EXPECT_EQ(fsm.on_cleanup_sent(h.now).what, kind::wait);
    fsm.on_cleanup_reply(1, 0, h.now);
    auto done = fsm.on_cleanup_reply(1, 1, h.now);
    ASSERT_EQ(done.what, kind::done);
    EXPECT_EQ(done.error, errc::cancelled) << "not retried, even with attempts left";
}

TEST(acquire_fsm, cancel_wins_over_a_failure_already_being_cleaned_up) {
    harness h;
    auto fsm = h.make();
    fsm.start(h.now);
    fsm.on_set_reply(1, 0, node_outcome::granted, h.now);
    for (std::size_t n = 1; n < 4; ++n) {
        fsm.on_set_reply(1, n, node_outcome::refused, h.now);
    }
    fsm.on_cleanup_sent(h.now);
    EXPECT_EQ(fsm.on_cancel(h.now).what, kind::wait);
    fsm.on_cleanup_reply(1, 0, h.now);
    auto done = fsm.on_cleanup_reply(1, 4, h.now);
    EXPECT_EQ(done.error, errc::cancelled);
}

TEST(acquire_fsm, cancel_while_sleeping_completes_at_once) {
    harness h;
    auto fsm = h.make();
    fsm.start(h.now);
    ASSERT_EQ(lose_to_another_holder(fsm, 1, h.now).what, kind::sleep);
    auto done = fsm.on_cancel(h.now);
    ASSERT_EQ(done.what, kind::done);
    EXPECT_EQ(done.error, errc::cancelled);
    EXPECT_EQ(fsm.on_wake(h.now + 1s).what, kind::wait);
}

TEST(acquire_fsm, single_node_and_even_counts) {
    harness h;
    h.nodes = 1;
    auto one = h.make();
    one.start(h.now);
    EXPECT_EQ(one.on_set_reply(1, 0, node_outcome::granted, h.now).what, kind::done);

    h.nodes = 4;
    h.options.retry.max_attempts = 1;
    auto four = h.make();
    four.start(h.now);
    four.on_set_reply(1, 0, node_outcome::granted, h.now);
    EXPECT_EQ(four.on_set_reply(1, 1, node_outcome::granted, h.now).what, kind::wait)
        << "2 of 4 is no majority";
    EXPECT_EQ(four.on_set_reply(1, 2, node_outcome::granted, h.now).what, kind::done);
}

} // namespace
