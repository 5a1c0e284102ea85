// The judgement of a granting majority's fencing counters before the raise: a counter that
// leads the others too far, or leaves no token, refuses the acquire; honest differences pass.
#include "core/fence_counters.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace {

using redlock::detail::counter_rejection;
using redlock::detail::judge_counters;

constexpr auto top = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint64_t lead = 1'000'000;

TEST(judge_counters, the_issues_lie_of_2_64_minus_2_against_an_honest_counter_is_refused) {
    const auto r = judge_counters({top - 1, 41, 0}, {true, true, false}, 0, lead);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->what, counter_rejection::kind::leads);
    EXPECT_EQ(r->node, 0u) << "the leading node is named";
    EXPECT_EQ(r->counter, top - 1);
    EXPECT_EQ(r->others, 41u);
}

TEST(judge_counters, honest_differences_up_to_the_bound_pass) {
    // A node that missed raises while partitioned, or lost its counter: it is behind, and
    // the leader leads it by what it missed.
    EXPECT_FALSE(judge_counters({500, 480, 0}, {true, true, true}, 0, lead));
    EXPECT_FALSE(judge_counters({lead, 0, 0}, {true, true, false}, 0, lead))
        << "exactly max_counter_lead ahead is allowed";
    EXPECT_TRUE(judge_counters({lead + 1, 0, 0}, {true, true, false}, 0, lead));
    EXPECT_FALSE(judge_counters({7, 7, 7}, {true, true, true}, 0, lead)) << "no lead at all";
}

TEST(judge_counters, only_granting_nodes_are_witnesses) {
    // The refusing node's counter slot holds nothing it said.
    EXPECT_FALSE(judge_counters({5'000'000, 4'999'000, top - 1}, {true, true, false}, 0, lead));
    const auto r = judge_counters({5'000'000, 1, 4'999'999}, {true, true, false}, 0, lead);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->node, 0u);
    EXPECT_EQ(r->others, 1u);
}

TEST(judge_counters, the_clients_own_floor_vouches_for_an_honest_leader) {
    // The other granting node lost its counter, but this client held token 5'000'000 itself.
    EXPECT_FALSE(judge_counters({5'000'000, 0, 0}, {true, true, false}, 5'000'000, lead));
    EXPECT_TRUE(judge_counters({5'000'000, 0, 0}, {true, true, false}, 0, lead));
}

TEST(judge_counters, a_lone_granting_node_has_no_peer_to_be_judged_against) {
    EXPECT_FALSE(judge_counters({5'000'000}, {true}, 0, lead)) << "a one-node client";
}

TEST(judge_counters, counters_already_at_the_top_leave_no_token) {
    // Pushed there before this check existed: every honest node agrees on 2^64-1.
    const auto r = judge_counters({0, top, top}, {false, true, true}, 0, lead);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->what, counter_rejection::kind::exhausted);
    EXPECT_EQ(r->node, 1u);
    EXPECT_FALSE(judge_counters({top - 1, top - 1}, {true, true}, 0, lead))
        << "one token is still left";
}

TEST(judge_counters, nobody_granted_nothing_to_judge) {
    EXPECT_FALSE(judge_counters({top, top}, {false, false}, 0, lead));
}

} // namespace
