#include "core/release_fsm.hpp"

#include <gtest/gtest.h>

namespace {

using namespace std::chrono_literals;
using redlock::errc;
using redlock::node_outcome;
using redlock::detail::release_fsm;
using kind = redlock::detail::round_action::kind;
using clock_type = redlock::detail::clock;

TEST(release_fsm, waits_for_every_node_so_that_no_copy_is_left) {
    release_fsm fsm(5, 50ms);
    const clock_type::time_point now{1s};
    auto a = fsm.start(now);
    ASSERT_EQ(a.what, kind::send);
    EXPECT_EQ(a.at, now + 50ms);
    for (std::size_t n = 0; n < 4; ++n) {
        EXPECT_EQ(fsm.on_reply(n, node_outcome::granted).what, kind::wait);
    }
    auto done = fsm.on_reply(4, node_outcome::granted);
    ASSERT_EQ(done.what, kind::done);
    EXPECT_FALSE(done.error);
    EXPECT_EQ(fsm.votes().granted(), 5u);
}

TEST(release_fsm, token_on_too_few_nodes_reports_lock_lost) {
    release_fsm fsm(5, 50ms);
    fsm.start(clock_type::time_point{1s});
    fsm.on_reply(0, node_outcome::granted);
    fsm.on_reply(1, node_outcome::granted);
    fsm.on_reply(2, node_outcome::refused);
    fsm.on_reply(3, node_outcome::refused);
    auto done = fsm.on_reply(4, node_outcome::refused);
    EXPECT_EQ(done.error, errc::lock_lost);
}

TEST(release_fsm, single_round_bounded_by_the_timeout) {
    release_fsm fsm(5, 50ms);
    fsm.start(clock_type::time_point{1s});
    fsm.on_reply(0, node_outcome::granted);
    fsm.on_reply(1, node_outcome::granted);
    auto done = fsm.on_deadline();
    ASSERT_EQ(done.what, kind::done);
    EXPECT_EQ(done.error, errc::quorum_unreachable);
    EXPECT_EQ(fsm.on_deadline().what, kind::wait) << "never retried";
}

TEST(release_fsm, quorum_of_deletes_with_one_node_silent_is_success) {
    release_fsm fsm(5, 50ms);
    fsm.start(clock_type::time_point{1s});
    for (std::size_t n = 0; n < 3; ++n) {
        fsm.on_reply(n, node_outcome::granted);
    }
    fsm.on_reply(3, node_outcome::failed);
    auto done = fsm.on_deadline();
    EXPECT_FALSE(done.error);
    EXPECT_EQ(fsm.votes().granted(), 3u);
}

TEST(release_fsm, cancel) {
    release_fsm fsm(3, 50ms);
    fsm.start(clock_type::time_point{1s});
    EXPECT_EQ(fsm.on_cancel().error, errc::cancelled);
}

} // namespace
