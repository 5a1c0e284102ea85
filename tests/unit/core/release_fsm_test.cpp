#include "core/release_fsm.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace {

using namespace std::chrono_literals;
using redlock::errc;
using redlock::node_outcome;
using redlock::detail::release_fsm;
using kind = redlock::detail::round_action::kind;
using clock_type = redlock::detail::clock;

TEST(release_fsm, completes_at_a_quorum_of_deletes_and_awaits_the_rest_in_the_background) {
    release_fsm fsm(5, 50ms);
    const clock_type::time_point now{1s};
    auto a = fsm.start(now);
    ASSERT_EQ(a.what, kind::send);
    EXPECT_EQ(a.at, now + 50ms);
    EXPECT_EQ(fsm.on_reply(0, node_outcome::granted).what, kind::wait);
    EXPECT_EQ(fsm.on_reply(1, node_outcome::granted).what, kind::wait);
    auto decided = fsm.on_reply(2, node_outcome::granted);
    ASSERT_EQ(decided.what, kind::decided) << "the slowest nodes are not waited for";
    EXPECT_FALSE(decided.error);
    EXPECT_EQ(fsm.votes().pending(), 2u);
    EXPECT_EQ(fsm.on_reply(3, node_outcome::granted).what, kind::wait);
    EXPECT_EQ(fsm.on_reply(4, node_outcome::failed).what, kind::settled);
    EXPECT_EQ(fsm.votes().granted(), 4u) << "late votes are still counted";
    EXPECT_EQ(fsm.on_deadline().what, kind::wait) << "settled: the deadline has nothing to do";
}

TEST(release_fsm, background_deletes_are_bounded_by_the_node_timeout) {
    release_fsm fsm(5, 50ms);
    fsm.start(clock_type::time_point{1s});
    for (std::size_t n = 0; n < 3; ++n) {
        fsm.on_reply(n, node_outcome::granted);
    }
    EXPECT_EQ(fsm.on_deadline().what, kind::settled);
    EXPECT_EQ(fsm.votes().failed(), 2u);
    EXPECT_EQ(fsm.on_reply(4, node_outcome::granted).what, kind::wait)
        << "a reply after the deadline counts for nothing";
}

TEST(release_fsm, every_node_answering_at_once_needs_no_background) {
    release_fsm fsm(3, 50ms);
    fsm.start(clock_type::time_point{1s});
    fsm.on_reply(0, node_outcome::refused);
    EXPECT_EQ(fsm.on_reply(1, node_outcome::granted).what, kind::wait);
    auto done = fsm.on_reply(2, node_outcome::granted);
    EXPECT_EQ(done.what, kind::done);
    EXPECT_FALSE(done.error);
}

TEST(release_fsm, lock_lost_as_soon_as_refusals_make_a_quorum_of_deletes_impossible) {
    release_fsm fsm(5, 50ms);
    fsm.start(clock_type::time_point{1s});
    fsm.on_reply(0, node_outcome::granted);
    fsm.on_reply(1, node_outcome::refused);
    fsm.on_reply(2, node_outcome::refused);
    auto decided = fsm.on_reply(3, node_outcome::refused);
    ASSERT_EQ(decided.what, kind::decided);
    EXPECT_EQ(decided.error, errc::lock_lost);
}

TEST(release_fsm, waits_while_the_silent_nodes_decide_between_lost_and_unreachable) {
    release_fsm fsm(5, 50ms);
    fsm.start(clock_type::time_point{1s});
    fsm.on_reply(0, node_outcome::granted);
    fsm.on_reply(1, node_outcome::failed);
    fsm.on_reply(2, node_outcome::failed);
    // No quorum of deletes any more; two refusals would make it lock_lost, anything else
    // quorum_unreachable.
    EXPECT_EQ(fsm.on_reply(3, node_outcome::refused).what, kind::wait);
    auto done = fsm.on_reply(4, node_outcome::refused);
    EXPECT_EQ(done.what, kind::done);
    EXPECT_EQ(done.error, errc::lock_lost);
}

TEST(release_fsm, quorum_unreachable_as_soon_as_a_quorum_can_neither_confirm_nor_answer) {
    release_fsm fsm(5, 50ms);
    fsm.start(clock_type::time_point{1s});
    fsm.on_reply(0, node_outcome::failed);
    fsm.on_reply(1, node_outcome::failed);
    auto decided = fsm.on_reply(2, node_outcome::failed);
    ASSERT_EQ(decided.what, kind::decided);
    EXPECT_EQ(decided.error, errc::quorum_unreachable);
}

TEST(release_fsm, the_deadline_decides_what_the_replies_did_not) {
    release_fsm fsm(5, 50ms);
    fsm.start(clock_type::time_point{1s});
    fsm.on_reply(0, node_outcome::granted);
    fsm.on_reply(1, node_outcome::granted);
    auto done = fsm.on_deadline();
    ASSERT_EQ(done.what, kind::done);
    EXPECT_EQ(done.error, errc::quorum_unreachable);
    EXPECT_EQ(fsm.on_deadline().what, kind::wait) << "never retried";
}

TEST(release_fsm, cancel_completes_and_still_awaits_the_deletes_sent) {
    release_fsm fsm(3, 50ms);
    fsm.start(clock_type::time_point{1s});
    auto cancelled = fsm.on_cancel();
    EXPECT_EQ(cancelled.what, kind::decided);
    EXPECT_EQ(cancelled.error, errc::cancelled);
    EXPECT_EQ(fsm.on_reply(0, node_outcome::granted).what, kind::wait);
    EXPECT_EQ(fsm.on_cancel().what, kind::wait);
    EXPECT_EQ(fsm.on_deadline().what, kind::settled);
}

TEST(release_fsm, cancel_after_the_decision_changes_nothing) {
    release_fsm fsm(3, 50ms);
    fsm.start(clock_type::time_point{1s});
    fsm.on_reply(0, node_outcome::granted);
    ASSERT_EQ(fsm.on_reply(1, node_outcome::granted).what, kind::decided);
    EXPECT_EQ(fsm.on_cancel().what, kind::wait);
    EXPECT_EQ(fsm.on_reply(2, node_outcome::granted).what, kind::settled);
}

/// Every way 3 or 5 nodes can answer, in every order: the early decision is the verdict that
/// waiting for every node would give, and the round settles exactly once.
TEST(release_fsm, deciding_early_never_changes_the_outcome) {
    const node_outcome outcomes[] = {node_outcome::granted, node_outcome::refused,
                                     node_outcome::failed};
    for (std::size_t nodes : {3u, 5u}) {
        std::size_t combos = 1;
        for (std::size_t i = 0; i < nodes; ++i) {
            combos *= 3;
        }
        for (std::size_t combo = 0; combo < combos; ++combo) {
            std::vector<node_outcome> votes;
            std::size_t granted = 0;
            std::size_t refused = 0;
            for (std::size_t i = 0, c = combo; i < nodes; ++i, c /= 3) {
                votes.push_back(outcomes[c % 3]);
                granted += votes.back() == node_outcome::granted;
                refused += votes.back() == node_outcome::refused;
            }
            const auto quorum = nodes / 2 + 1;
            const std::error_code expected = granted >= quorum ? std::error_code{}
                                             : granted + refused >= quorum
                                                 ? make_error_code(errc::lock_lost)
                                                 : make_error_code(errc::quorum_unreachable);
            std::vector<std::size_t> order(nodes);
            for (std::size_t i = 0; i < nodes; ++i) {
                order[i] = i;
            }
            do {
                release_fsm fsm(nodes, 50ms);
                fsm.start(clock_type::time_point{1s});
                int completions = 0;
                int settles = 0;
                std::error_code got;
                for (auto n : order) {
                    const auto a = fsm.on_reply(n, votes[n]);
                    if (a.what == kind::done || a.what == kind::decided) {
                        ++completions;
                        got = a.error;
                    }
                    settles += a.what == kind::done || a.what == kind::settled;
                }
                ASSERT_EQ(completions, 1) << "combo " << combo;
                ASSERT_EQ(settles, 1) << "combo " << combo;
                ASSERT_EQ(got, expected) << "combo " << combo << " of " << nodes << " nodes";
            } while (std::next_permutation(order.begin(), order.end()));
        }
    }
}

} // namespace
