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

TEST(renewal_fsm, stop_while_waiting_is_immediate) {
    auto fsm = make(t0 + 29s);
    fsm.start(t0);
    EXPECT_EQ(fsm.on_stop().what, kind::stopped);
    EXPECT_EQ(fsm.on_timer(t0 + 10s).what, kind::none) << "no renewal after stop";
}

TEST(renewal_fsm, stop_during_an_extend_waits_for_it_and_renews_no_more) {
    auto fsm = make(t0 + 29s);
    fsm.start(t0);
    fsm.on_timer(t0 + 9s);
    EXPECT_EQ(fsm.on_stop().what, kind::none);
    auto a = fsm.on_extended({}, t0 + 38s, t0 + 9s);
    EXPECT_EQ(a.what, kind::stopped);
    EXPECT_TRUE(fsm.finished());
}

} // namespace
