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
const node_vote server_error = vote(node_outcome::failed, errc::server_error);

TEST(failure_cause, quarantined_nodes_that_would_have_made_the_majority_are_the_cause) {
    EXPECT_EQ(failure_cause(errc::quorum_unreachable,
                            {granted, granted, quarantined, timed_out, timed_out}),
              errc::nodes_quarantined);
    EXPECT_EQ(failure_cause(errc::quorum_unreachable,
                            {quarantined, quarantined, quarantined, pending, pending}),
              errc::nodes_quarantined);
}

TEST(failure_cause, nodes_that_never_answered_count_for_neither_side) {
    // Late replies are recorded before the result is reported; what stays pending never
    // answered, and nobody knows what it would have said.
    EXPECT_EQ(
        failure_cause(errc::quorum_unreachable, {refused, refused, quarantined, pending, pending}),
        errc::quorum_unreachable);
    EXPECT_EQ(failure_cause(errc::quorum_unreachable,
                            {quarantined, server_error, server_error, pending, pending}),
              errc::quorum_unreachable);
    EXPECT_EQ(failure_cause(errc::quorum_unreachable,
                            {refused, refused, quarantined, quarantined, quarantined}),
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

namespace {

TEST(failure_cause, a_node_holding_another_kind_of_lock_makes_it_a_usage_error) {
    const auto mismatch = vote(node_outcome::failed, errc::lock_mismatch);
    EXPECT_EQ(failure_cause(make_error_code(errc::quorum_unreachable),
                            {mismatch, mismatch, mismatch, timed_out, granted}),
              errc::lock_mismatch);
    EXPECT_EQ(failure_cause(make_error_code(errc::contention),
                            {refused, refused, refused, mismatch, granted}),
              errc::contention)
        << "a refused majority is contention whatever the rest says";
    EXPECT_EQ(failure_cause(make_error_code(errc::quorum_unreachable),
                            {mismatch, timed_out, timed_out, server_error, granted}),
              errc::quorum_unreachable)
        << "one node's mismatch is its own view";
}

} // namespace
