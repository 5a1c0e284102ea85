#include "core/held_locks.hpp"

#include <gtest/gtest.h>

namespace redlock::detail {
namespace {

using namespace std::chrono_literals;
using clock_type = held_locks::clock;

TEST(held_locks, counts_grants_until_their_release) {
    held_locks held;
    const auto t0 = clock_type::time_point{} + 1h;
    held.granted("a", t0 + 10s);
    held.granted("b", t0 + 10s);
    EXPECT_EQ(held.count(t0), 2u);
    held.released("a");
    EXPECT_EQ(held.count(t0), 1u);
    held.released("a"); // twice: nothing more
    held.released("unknown");
    EXPECT_EQ(held.count(t0), 1u);
}

TEST(held_locks, a_lock_left_to_expire_leaves_at_the_end_of_its_validity) {
    held_locks held;
    const auto t0 = clock_type::time_point{} + 1h;
    held.granted("a", t0 + 10s);
    EXPECT_EQ(held.count(t0 + 9s), 1u);
    EXPECT_EQ(held.count(t0 + 10s), 0u);
    held.released("a"); // a late release of it counts nothing
    EXPECT_EQ(held.count(t0 + 11s), 0u);
}

TEST(held_locks, an_extend_moves_the_validity_of_own_locks_only) {
    held_locks held;
    const auto t0 = clock_type::time_point{} + 1h;
    held.granted("a", t0 + 10s);
    held.extended("a", t0 + 30s);
    held.extended("built-by-hand", t0 + 30s);
    EXPECT_EQ(held.count(t0 + 20s), 1u);
    EXPECT_EQ(held.count(t0 + 30s), 0u);
}

} // namespace
} // namespace redlock::detail
