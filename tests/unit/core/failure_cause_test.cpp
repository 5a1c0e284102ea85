#include "core/failure_cause.hpp"

#include "redlock/error.hpp"

#include <gtest/gtest.h>

namespace {

using redlock::errc;
using redlock::node_outcome;
using redlock::node_vote;
using redlock::detail::failure_cause;

node_vote vote(node_outcome outcome, errc error = {}) {
    node_vote v;
    v.outcome = outcome;
    if (error != errc{}) {
        v.error = error;
    }
    return v;
}

const node_vote granted = vote(node_outcome::granted);
const node_vote refused = vote(node_outcome::refused);
const node_vote pending = vote(node_outcome::pending);
const node_vote quarantined = vote(node_outcome::failed, errc::node_quarantined);
const node_vote timed_out = vote(node_outcome::failed, errc::node_timeout);

TEST(failure_cause, quarantined_nodes_that_would_have_made_the_majority_are_the_cause) {
    EXPECT_EQ(failure_cause(errc::quorum_unreachable,
                            {granted, granted, quarantined, timed_out, timed_out}),
              errc::nodes_quarantined);
    EXPECT_EQ(failure_cause(errc::quorum_unreachable,
                            {quarantined, quarantined, quarantined, pending, pending}),
              errc::nodes_quarantined);
}

TEST(failure_cause, nodes_still_pending_when_the_round_was_decided_could_have_granted) {
    // Two refusals and one quarantined vote ruled the quorum out early; had the quarantined
    // node granted, the two pending ones could still have made three.
    EXPECT_EQ(
        failure_cause(errc::quorum_unreachable, {refused, refused, quarantined, pending, pending}),
        errc::nodes_quarantined);
}

TEST(failure_cause, quarantine_that_could_not_have_changed_the_outcome_is_not_the_cause) {
    EXPECT_EQ(failure_cause(errc::quorum_unreachable,
                            {quarantined, timed_out, timed_out, timed_out, granted}),
              errc::quorum_unreachable);
    EXPECT_EQ(failure_cause(errc::quorum_unreachable,
                            {granted, granted, timed_out, timed_out, timed_out}),
              errc::quorum_unreachable);
}

TEST(failure_cause, other_decisions_are_reported_as_decided) {
    const std::vector<node_vote> votes = {quarantined, quarantined, quarantined, refused, refused};
    for (errc decided :
         {errc::contention, errc::validity_expired, errc::lock_lost, errc::cancelled}) {
        EXPECT_EQ(failure_cause(decided, votes), decided);
    }
    EXPECT_FALSE(failure_cause({}, votes));
}

} // namespace
