#include "core/tally.hpp"

#include <gtest/gtest.h>

namespace {

using redlock::node_outcome;
using redlock::detail::tally;

TEST(tally, quorum_is_a_strict_majority_for_odd_and_even_counts) {
    EXPECT_EQ(tally::quorum_of(1), 1u);
    EXPECT_EQ(tally::quorum_of(2), 2u);
    EXPECT_EQ(tally::quorum_of(3), 2u);
    EXPECT_EQ(tally::quorum_of(4), 3u);
    EXPECT_EQ(tally::quorum_of(5), 3u);
    EXPECT_EQ(tally::quorum_of(6), 4u);
    EXPECT_EQ(tally::quorum_of(7), 4u);
}

TEST(tally, reaches_quorum_without_the_remaining_nodes) {
    tally t(5);
    t.record(0, node_outcome::granted);
    t.record(3, node_outcome::granted);
    EXPECT_FALSE(t.reached());
    t.record(4, node_outcome::granted);
    EXPECT_TRUE(t.reached());
    EXPECT_EQ(t.pending(), 2u);
}

TEST(tally, a_node_votes_once) {
    tally t(3);
    EXPECT_TRUE(t.record(1, node_outcome::granted));
    EXPECT_FALSE(t.record(1, node_outcome::granted));
    EXPECT_FALSE(t.record(1, node_outcome::refused));
    EXPECT_EQ(t.granted(), 1u);
    EXPECT_EQ(t.refused(), 0u);
}

TEST(tally, impossible_as_soon_as_too_few_can_still_grant) {
    tally t(5);
    t.record(0, node_outcome::failed);
    t.record(1, node_outcome::refused);
    EXPECT_FALSE(t.impossible());
    t.record(2, node_outcome::failed);
    EXPECT_TRUE(t.impossible()) << "3 of 5 out: at most 2 can grant";
}

TEST(tally, refusals_decide_only_when_no_fault_could_have_changed_the_outcome) {
    tally held(5);
    held.record(0, node_outcome::refused);
    held.record(1, node_outcome::refused);
    held.record(2, node_outcome::refused);
    EXPECT_TRUE(held.impossible());
    EXPECT_TRUE(held.refusals_decide());

    tally mixed(5);
    mixed.record(0, node_outcome::refused);
    mixed.record(1, node_outcome::refused);
    mixed.record(2, node_outcome::failed);
    mixed.record(3, node_outcome::failed);
    EXPECT_TRUE(mixed.impossible());
    EXPECT_FALSE(mixed.refusals_decide()) << "had the failed nodes granted, 3 of 5 were possible";
}

TEST(tally, fail_pending_counts_every_silent_node_as_failed) {
    tally t(5);
    t.record(0, node_outcome::granted);
    t.fail_pending();
    EXPECT_EQ(t.failed(), 4u);
    EXPECT_EQ(t.pending(), 0u);
    EXPECT_TRUE(t.impossible());
}

TEST(tally, unknown_node_is_rejected) {
    tally t(3);
    EXPECT_THROW(t.record(3, node_outcome::granted), std::out_of_range);
}

} // namespace
