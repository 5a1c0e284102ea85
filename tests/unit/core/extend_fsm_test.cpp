#include "core/extend_fsm.hpp"

#include <gtest/gtest.h>

namespace {

using namespace std::chrono_literals;
using redlock::errc;
using redlock::node_outcome;
using redlock::detail::extend_fsm;
using kind = redlock::detail::round_action::kind;
using clock_type = redlock::detail::clock;

redlock::lock_options options() {
    redlock::lock_options o;
    o.ttl = 10s;
    o.node_timeout = 50ms;
    return o;
}

TEST(extend_fsm, never_extends_a_lock_past_its_validity) {
    extend_fsm fsm(5, options());
    const clock_type::time_point now{100s};
    auto a = fsm.start(now, now);
    ASSERT_EQ(a.what, kind::done);
    EXPECT_EQ(a.error, errc::lock_lost);
}

TEST(extend_fsm, new_validity_counts_from_the_extend_start) {
    extend_fsm fsm(5, options());
    const clock_type::time_point start{100s};
    auto a = fsm.start(start, start + 1s);
    ASSERT_EQ(a.what, kind::send);
    EXPECT_EQ(a.at, start + 50ms);
    fsm.on_reply(0, node_outcome::granted, start + 1ms);
    fsm.on_reply(1, node_outcome::granted, start + 1ms);
    auto done = fsm.on_reply(2, node_outcome::granted, start + 3ms);
    ASSERT_EQ(done.what, kind::done);
    EXPECT_FALSE(done.error);
    EXPECT_EQ(fsm.valid_until(), start + 10s - 102ms);
}

// Regression (issue 12, defect 2): a round could end, and be adopted, after the validity
// it extended had run out.
TEST(extend_fsm, a_round_ends_at_the_validity_it_extends) {
    extend_fsm fsm(5, options());
    const clock_type::time_point start{100s};
    auto a = fsm.start(start, start + 20ms);
    ASSERT_EQ(a.what, kind::send);
    EXPECT_EQ(a.at, start + 20ms) << "capped below the 50 ms node_timeout";
    fsm.on_reply(0, node_outcome::granted, start + 1ms);
    auto late = fsm.on_deadline(start + 20ms);
    ASSERT_EQ(late.what, kind::done);
    EXPECT_EQ(late.error, errc::validity_expired);
}

TEST(extend_fsm, a_reply_handled_at_or_after_the_deadline_is_no_vote) {
    extend_fsm fsm(5, options());
    const clock_type::time_point start{100s};
    const auto a = fsm.start(start, start + 1s);
    fsm.on_reply(0, node_outcome::granted, start + 1ms);
    fsm.on_reply(1, node_outcome::granted, start + 1ms);
    // A stalled loop runs the waiting third OK before the timer.
    const auto late = fsm.on_reply(2, node_outcome::granted, a.at);
    ASSERT_EQ(late.what, kind::done);
    EXPECT_EQ(late.error, errc::quorum_unreachable);
    EXPECT_EQ(fsm.votes().granted(), 2u);
}

TEST(extend_fsm, a_quorum_reached_after_the_old_validity_is_refused) {
    extend_fsm fsm(5, options());
    const clock_type::time_point start{100s};
    fsm.start(start, start + 20ms);
    fsm.on_reply(0, node_outcome::granted, start + 1ms);
    fsm.on_reply(1, node_outcome::granted, start + 1ms);
    auto a = fsm.on_reply(2, node_outcome::granted, start + 20ms);
    ASSERT_EQ(a.what, kind::done);
    EXPECT_EQ(a.error, errc::validity_expired);
}

TEST(extend_fsm, a_majority_without_our_token_means_the_lock_was_lost) {
    extend_fsm fsm(5, options());
    const clock_type::time_point now{100s};
    fsm.start(now, now + 1s);
    fsm.on_reply(0, node_outcome::refused, now);
    fsm.on_reply(1, node_outcome::refused, now);
    auto done = fsm.on_reply(2, node_outcome::refused, now);
    ASSERT_EQ(done.what, kind::done);
    EXPECT_EQ(done.error, errc::lock_lost);
}

TEST(extend_fsm, unreachable_nodes_are_not_mistaken_for_a_lost_lock) {
    extend_fsm fsm(5, options());
    const clock_type::time_point now{100s};
    fsm.start(now, now + 1s);
    fsm.on_reply(0, node_outcome::granted, now);
    fsm.on_reply(1, node_outcome::failed, now);
    fsm.on_reply(2, node_outcome::failed, now);
    auto done = fsm.on_reply(3, node_outcome::failed, now);
    ASSERT_EQ(done.what, kind::done);
    EXPECT_EQ(done.error, errc::quorum_unreachable);
}

TEST(extend_fsm, deadline_and_cancel) {
    {
        extend_fsm fsm(3, options());
        const clock_type::time_point now{100s};
        fsm.start(now, now + 1s);
        fsm.on_reply(0, node_outcome::granted, now);
        auto done = fsm.on_deadline(now + 50ms);
        EXPECT_EQ(done.error, errc::quorum_unreachable);
    }
    {
        extend_fsm fsm(3, options());
        const clock_type::time_point now{100s};
        fsm.start(now, now + 1s);
        auto done = fsm.on_cancel();
        ASSERT_EQ(done.what, kind::done);
        EXPECT_EQ(done.error, errc::cancelled);
        EXPECT_EQ(fsm.on_reply(0, node_outcome::granted, now).what, kind::wait);
    }
}

} // namespace
