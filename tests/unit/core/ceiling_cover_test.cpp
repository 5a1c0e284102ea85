// When a command that sets a ttl needs the node's TTL ceiling raised first, and when its
// vote counts.
#include "core/ceiling_cover.hpp"

#include <gtest/gtest.h>

namespace {

using namespace std::chrono_literals;
using redlock::detail::ceiling_cover;
using redlock::detail::ceiling_raise;
using redlock::detail::ceiling_terms;
using redlock::detail::clock;

const ceiling_terms terms{1000ms, 0.01, 2ms};
const clock::time_point t0{std::chrono::hours(1)};

TEST(ceiling_cover, the_first_command_raises_and_counts_only_once_the_raise_succeeded) {
    ceiling_cover c(terms);
    auto p = c.cover(500ms, t0, 1);
    ASSERT_TRUE(p.raise);
    EXPECT_EQ(p.raise->ttl, 500ms);
    EXPECT_EQ(p.covered_by, p.raise);
    EXPECT_FALSE(ceiling_cover::vote_counts(p.covered_by.get())) << "no answer yet";
    c.raise_answered(p.raise, true, {});
    EXPECT_TRUE(ceiling_cover::vote_counts(p.covered_by.get()));
}

TEST(ceiling_cover, steady_state_sends_no_raise) {
    ceiling_cover c(terms);
    auto p = c.cover(500ms, t0, 1);
    c.raise_answered(p.raise, true, {});
    for (auto t = t0 + 1ms; t < t0 + 900ms; t += 100ms) {
        const auto q = c.cover(500ms, t, 1);
        EXPECT_FALSE(q.raise);
        EXPECT_FALSE(q.covered_by);
        EXPECT_TRUE(ceiling_cover::vote_counts(q.covered_by.get()));
    }
}

TEST(ceiling_cover, a_confirmation_covers_commands_only_while_their_keys_expire_before_its_entry) {
    ceiling_cover c(terms);
    auto p = c.cover(500ms, t0, 1);
    c.raise_answered(p.raise, true, {});
    // keep 2000 ms minus its drift (22 ms), minus the maximum 1000 ms and its drift (12 ms).
    EXPECT_FALSE(c.cover(500ms, t0 + 965ms, 1).raise);
    EXPECT_TRUE(c.cover(500ms, t0 + 967ms, 1).raise) << "stale: raised again";
}

TEST(ceiling_cover, a_larger_ttl_raises_again_carrying_the_confirmed_one_along) {
    ceiling_cover c(terms);
    auto p = c.cover(100ms, t0, 1);
    c.raise_answered(p.raise, true, {});
    EXPECT_FALSE(c.cover(100ms, t0 + 1ms, 1).raise);
    auto q = c.cover(800ms, t0 + 2ms, 1);
    ASSERT_TRUE(q.raise);
    EXPECT_EQ(q.raise->ttl, 800ms);
    auto r = c.cover(50ms, t0 + 3ms, 1);
    EXPECT_FALSE(r.raise) << "the smaller ttl is still confirmed";
}

TEST(ceiling_cover, commands_behind_a_raise_in_flight_share_it) {
    ceiling_cover c(terms);
    auto p = c.cover(500ms, t0, 1);
    auto q = c.cover(300ms, t0 + 1ms, 1);
    EXPECT_FALSE(q.raise);
    EXPECT_EQ(q.covered_by, p.raise);
    c.raise_answered(p.raise, false, "NOPERM");
    EXPECT_FALSE(ceiling_cover::vote_counts(q.covered_by.get()));
    EXPECT_TRUE(c.cover(300ms, t0 + 2ms, 1).raise) << "a refused raise confirms nothing";
}

TEST(ceiling_cover, a_new_connection_forgets_every_confirmation) {
    ceiling_cover c(terms);
    auto p = c.cover(500ms, t0, 1);
    c.raise_answered(p.raise, true, {});
    EXPECT_TRUE(c.cover(500ms, t0 + 1ms, 2).raise) << "the server may have restarted";
}

TEST(ceiling_cover, a_raise_answered_after_its_connection_changed_confirms_nothing) {
    ceiling_cover c(terms);
    auto p = c.cover(500ms, t0, 1);
    auto q = c.cover(500ms, t0 + 1ms, 2);
    ASSERT_TRUE(q.raise);
    c.raise_answered(p.raise, true, {});
    EXPECT_TRUE(ceiling_cover::vote_counts(p.covered_by.get())) << "its own command counts";
    EXPECT_EQ(c.cover(500ms, t0 + 2ms, 2).covered_by, q.raise) << "not confirmed by the old one";
}

} // namespace
