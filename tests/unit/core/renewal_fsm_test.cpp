#include "core/renewal_fsm.hpp"

#include <gtest/gtest.h>

namespace {

using namespace std::chrono_literals;
using redlock::errc;
using redlock::renewal_options;
using redlock::detail::renewal_fsm;
using kind = redlock::detail::renewal_action::kind;
using clock_type = redlock::detail::clock;

constexpr auto ttl = 30s;
const clock_type::time_point t0{1000s};

renewal_fsm make(clock_type::time_point valid_until, renewal_options o = {}) {
    return renewal_fsm(ttl, renewal_fsm::resolve(ttl, o), valid_until);
}

TEST(renewal_fsm, defaults_renew_every_third_of_the_ttl) {
    const auto o = renewal_fsm::resolve(ttl, {});
    EXPECT_EQ(o.interval, 10s);
    EXPECT_EQ(o.retry_delay, 2s);
    EXPECT_EQ(renewal_fsm::resolve(2ms, {}).interval, 1ms) << "never zero";
}

TEST(renewal_fsm, first_renewal_is_scheduled_from_the_remaining_validity) {
    // Acquired at t0: valid until t0 + 30 s - 302 ms. Due when 20 s of validity are left.
    const auto until = t0 + ttl - 302ms;
    auto fsm = make(until);
    auto a = fsm.start(t0);
    ASSERT_EQ(a.what, kind::wait_until);
    EXPECT_EQ(a.at, until - 20s);

    // Handed over late, with 5 s left: renew at once (the schedule is already past).
    auto late = make(t0 + 5s);
    EXPECT_EQ(late.start(t0).at, t0 + 5s - 20s);
}

TEST(renewal_fsm, a_successful_renewal_moves_the_deadline_and_the_schedule) {
    auto fsm = make(t0 + 29s);
    fsm.start(t0);
    auto go = fsm.on_timer(t0 + 9s);
    ASSERT_EQ(go.what, kind::extend);
    EXPECT_TRUE(fsm.extending());
    auto next = fsm.on_extended({}, t0 + 9s + 29s, t0 + 9s + 1ms);
    ASSERT_EQ(next.what, kind::wait_until);
    EXPECT_EQ(fsm.valid_until(), t0 + 38s);
    EXPECT_EQ(next.at, t0 + 38s - 20s);
}

TEST(renewal_fsm, failed_renewals_retry_until_the_deadline_then_report_loss) {
    auto fsm = make(t0 + 29s);
    fsm.start(t0);
    auto now = t0 + 9s;
    fsm.on_timer(now);
    int retries = 0;
    for (;;) {
        auto a = fsm.on_extended(errc::quorum_unreachable, {}, now);
        if (a.what == kind::lost) {
            EXPECT_EQ(a.error, errc::lock_lost);
            break;
        }
        ASSERT_EQ(a.what, kind::wait_until);
        EXPECT_LE(a.at, t0 + 29s) << "never scheduled past the deadline";
        now = a.at;
        auto b = fsm.on_timer(now);
        if (b.what == kind::lost) {
            break;
        }
        ASSERT_EQ(b.what, kind::extend);
        ++retries;
        ASSERT_LT(retries, 100);
    }
    EXPECT_GE(retries, 9) << "every 2 s from 9 s to 29 s";
    EXPECT_GE(now, t0 + 29s - 2s);
    EXPECT_TRUE(fsm.finished());
}

TEST(renewal_fsm, our_token_gone_on_a_majority_is_loss_at_once) {
    auto fsm = make(t0 + 29s);
    fsm.start(t0);
    fsm.on_timer(t0 + 9s);
    auto a = fsm.on_extended(errc::lock_lost, {}, t0 + 9s);
    ASSERT_EQ(a.what, kind::lost);
    EXPECT_EQ(a.error, errc::lock_lost);
}

TEST(renewal_fsm, waking_up_after_the_deadline_is_loss_never_an_extend) {
    auto fsm = make(t0 + 29s);
    fsm.start(t0);
    // The process was stopped for a minute; the first thing it sees is its timer.
    auto a = fsm.on_timer(t0 + 60s);
    EXPECT_EQ(a.what, kind::lost);

    auto stale = make(t0 + 1s);
    EXPECT_EQ(stale.start(t0 + 2s).what, kind::lost);
}

TEST(renewal_fsm, a_success_that_arrives_after_the_deadline_does_not_count) {
    auto fsm = make(t0 + 29s);
    fsm.start(t0);
    fsm.on_timer(t0 + 28s);
    // The extend round itself refuses a lock past validity; here its answer came too late.
    auto a = fsm.on_extended(errc::lock_lost, {}, t0 + 30s);
    EXPECT_EQ(a.what, kind::lost);
}

// Regression (issue 12, defect 2): with a round in flight nothing watched the deadline, so
// the holder heard of the loss only when the round ended (node_timeout later), and a
// success arriving after the deadline was adopted.
TEST(renewal_fsm, the_deadline_is_watched_while_a_round_is_in_flight) {
    const auto until = t0 + 29s;
    auto fsm = make(until);
    fsm.start(t0);
    auto go = fsm.on_timer(t0 + 28s);
    ASSERT_EQ(go.what, kind::extend);
    EXPECT_EQ(go.at, until) << "the runner arms the deadline with the round";
    auto at_deadline = fsm.on_timer(until);
    EXPECT_EQ(at_deadline.what, kind::lost);
    EXPECT_EQ(at_deadline.error, errc::lock_lost);
    EXPECT_TRUE(fsm.finished());
    EXPECT_EQ(fsm.on_extended({}, until + 29s, until + 50ms).what, kind::none)
        << "loss is terminal: the round's late success is not adopted";
    EXPECT_EQ(fsm.valid_until(), until);
}

TEST(renewal_fsm, a_late_success_is_never_adopted) {
    const auto until = t0 + 29s;
    auto fsm = make(until);
    fsm.start(t0);
    fsm.on_timer(t0 + 28s);
    auto a = fsm.on_extended({}, t0 + 28s + 29s, until + 1ms);
    EXPECT_EQ(a.what, kind::lost);
    EXPECT_EQ(fsm.valid_until(), until);
}

TEST(renewal_fsm, an_early_deadline_wake_up_during_a_round_changes_nothing) {
    auto fsm = make(t0 + 29s);
    fsm.start(t0);
    fsm.on_timer(t0 + 9s);
    EXPECT_EQ(fsm.on_timer(t0 + 10s).what, kind::none);
    EXPECT_TRUE(fsm.extending());
}

// Regression (issue 12, defect 3): a stop asked for after the deadline ended as "stopped",
// and with_lock reported success for work that outlived its lock.
TEST(renewal_fsm, a_stop_after_the_deadline_is_loss) {
    const auto until = t0 + 29s;
    auto waiting = make(until);
    waiting.start(t0);
    auto a = waiting.on_stop(until + 30ms);
    EXPECT_EQ(a.what, kind::lost);
    EXPECT_EQ(a.error, errc::lock_lost);

    auto extending = make(until);
    extending.start(t0);
    extending.on_timer(t0 + 28s);
    EXPECT_EQ(extending.on_stop(until + 30ms).what, kind::lost);
}

TEST(renewal_fsm, a_stop_in_time_stays_a_stop_whatever_the_round_says_later) {
    const auto until = t0 + 29s;
    auto fsm = make(until);
    fsm.start(t0);
    fsm.on_timer(t0 + 28s);
    EXPECT_EQ(fsm.on_stop(until - 1ms).what, kind::none);
    EXPECT_EQ(fsm.on_timer(until).what, kind::none) << "the holder was done in time";
    EXPECT_EQ(fsm.on_extended(errc::quorum_unreachable, {}, until + 1ms).what, kind::stopped);
}

TEST(renewal_fsm, stop_while_waiting_is_immediate) {
    auto fsm = make(t0 + 29s);
    fsm.start(t0);
    EXPECT_EQ(fsm.on_stop(t0 + 5s).what, kind::stopped);
    EXPECT_EQ(fsm.on_timer(t0 + 10s).what, kind::none) << "no renewal after stop";
}

TEST(renewal_fsm, stop_during_an_extend_waits_for_it_and_renews_no_more) {
    auto fsm = make(t0 + 29s);
    fsm.start(t0);
    fsm.on_timer(t0 + 9s);
    EXPECT_EQ(fsm.on_stop(t0 + 9s).what, kind::none);
    auto a = fsm.on_extended({}, t0 + 38s, t0 + 9s);
    EXPECT_EQ(a.what, kind::stopped);
    EXPECT_TRUE(fsm.finished());
}

} // namespace
