#include "redlock/lock.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;

redlock::lock fenced_lock() {
    redlock::lock_options options;
    options.ttl = 7s;
    options.fencing = true;
    return redlock::lock(std::vector<std::string>{"a", "b"}, "0123456789abcdef0123456789abcdef",
                         redlock::lock::clock::now() + 7s, options, 42);
}

TEST(lock, copies_share_what_never_changes) {
    // A watchdog, an extend round and every result keep a copy of the lock: the keys, token
    // and options are one allocation for all of them, not one each.
    const auto original = fenced_lock();
    const auto copy = original; // NOLINT(performance-unnecessary-copy-initialization)
    EXPECT_EQ(&copy.keys(), &original.keys());
    EXPECT_EQ(&copy.token(), &original.token());
    EXPECT_EQ(&copy.options(), &original.options());
    EXPECT_EQ(copy.valid_until(), original.valid_until());
    EXPECT_EQ(copy.fencing_token(), 42U);
    EXPECT_LE(sizeof(redlock::lock), 2 * sizeof(void*) + sizeof(redlock::lock::clock::time_point));
}

TEST(lock, copies_outlive_the_original_moved_away) {
    auto original = fenced_lock();
    const auto copy = original;
    const auto moved = std::move(original);
    EXPECT_TRUE(copy.held());
    EXPECT_TRUE(moved.held());
    EXPECT_EQ(copy.key(), "a");
    EXPECT_EQ(moved.keys(), (std::vector<std::string>{"a", "b"}));
}

TEST(lock, an_empty_lock_answers_empty) {
    const redlock::lock empty;
    EXPECT_FALSE(empty.held());
    EXPECT_EQ(empty.key(), "");
    EXPECT_TRUE(empty.keys().empty());
    EXPECT_EQ(empty.token(), "");
    EXPECT_EQ(empty.fencing_token(), 0U);
    EXPECT_EQ(empty.options().ttl, redlock::lock_options{}.ttl);
    EXPECT_EQ(empty.valid_until(), redlock::lock::clock::time_point{});
}

TEST(lock, one_built_without_a_token_is_not_held) {
    const redlock::lock built(std::string("k"), "", redlock::lock::clock::now() + 1s, {});
    EXPECT_FALSE(built.held());
    EXPECT_EQ(built.key(), "k");
}

} // namespace
