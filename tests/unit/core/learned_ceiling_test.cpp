// What a node's TTL ceiling says, and how long a restarted node is quarantined for.
#include "core/learned_ceiling.hpp"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

namespace {

using namespace std::chrono_literals;
using redlock::detail::ceiling_reading;
using redlock::detail::parse_ceiling;
using redlock::detail::quarantine_ttl;
using kind = ceiling_reading::kind;

ceiling_reading parse(std::vector<std::string_view> items) {
    return parse_ceiling(items);
}

ceiling_reading known(std::chrono::milliseconds ttl) {
    return {kind::known, ttl, {}};
}

TEST(parse_ceiling, the_largest_live_entry) {
    const auto r = parse({"1000", "500", "3000", "2000", "900", "800", "999"});
    EXPECT_EQ(r.what, kind::known);
    EXPECT_EQ(r.ttl, 500ms) << "2000 passed at 900 on the node's clock";
}

TEST(parse_ceiling, no_entry_or_only_passed_ones_are_unknown_never_zero) {
    EXPECT_EQ(parse({"1000"}).what, kind::missing);
    EXPECT_EQ(parse({"1000", "500", "900"}).what, kind::missing);
}

TEST(parse_ceiling, odd_entries_make_the_node_unknown_with_a_note) {
    const auto r = parse({"1000", "abc", "3000", "500", "3000"});
    EXPECT_EQ(r.what, kind::odd);
    EXPECT_NE(r.note.find("abc"), std::string::npos);
    EXPECT_EQ(parse({"1000", "500", "soon"}).what, kind::odd);
    EXPECT_EQ(parse({"1000", "0", "3000"}).what, kind::odd);
    EXPECT_EQ(parse({"1000", "1234567890123456", "3000"}).what, kind::odd) << "16 digits";
    EXPECT_EQ(parse({"x"}).what, kind::odd);
    EXPECT_EQ(parse({}).what, kind::odd);
    EXPECT_EQ(parse({"1000", "500"}).what, kind::odd) << "a field without its value";
}

// A ttl no client may set (above max_ttl, 2^31 - 1 ms): another program's entry or a
// corruption. Taken as a figure, 9,999,999,999,999 ms overflowed the quarantine's end, which
// then ended at once (found by review, with the defaults, on real nodes).
TEST(parse_ceiling, an_entry_above_the_longest_ttl_any_client_may_set_is_odd) {
    EXPECT_EQ(parse({"1000", "2147483647", "3000"}).what, kind::known) << "max_ttl itself";
    const auto r = parse({"1000", "2147483648", "3000"});
    EXPECT_EQ(r.what, kind::odd);
    EXPECT_NE(r.note.find("max_ttl"), std::string::npos) << r.note;
    EXPECT_EQ(parse({"1000", "9999999999999", "999999999999999"}).what, kind::odd);
    // Beside a valid entry it hides nothing (review 8): skipped.
    const auto beside = parse({"1000", "9999999999999", "999999999999999", "4000", "3000"});
    EXPECT_EQ(beside.what, kind::known);
    EXPECT_EQ(beside.ttl, 4000ms);
}

TEST(quarantine_ttl, a_full_quorum_of_known_ceilings_gives_their_largest) {
    std::vector<std::optional<ceiling_reading>> r(5);
    r[1] = known(300ms);
    r[2] = known(800ms);
    r[3] = known(100ms);
    const auto f = quarantine_ttl(r, 5, 60000ms);
    EXPECT_TRUE(f.learned);
    EXPECT_EQ(f.ttl, 800ms);
}

TEST(quarantine_ttl, fewer_than_a_quorum_falls_back_to_the_maximum) {
    std::vector<std::optional<ceiling_reading>> r(5);
    r[1] = known(300ms);
    r[2] = known(800ms);
    r[3] = ceiling_reading{kind::missing, 0ms, {}};
    r[4] = ceiling_reading{kind::odd, 0ms, "x"};
    const auto f = quarantine_ttl(r, 5, 60000ms);
    EXPECT_FALSE(f.learned);
    EXPECT_EQ(f.ttl, 60000ms);
    EXPECT_NE(f.basis.find("maximum"), std::string::npos);
}

TEST(quarantine_ttl, a_ceiling_above_the_maximum_is_refused_as_tighter_and_used) {
    std::vector<std::optional<ceiling_reading>> r(5);
    r[1] = known(3000ms);
    const auto f = quarantine_ttl(r, 5, 1000ms);
    EXPECT_FALSE(f.learned);
    EXPECT_TRUE(f.above_maximum);
    EXPECT_EQ(f.ttl, 3000ms) << "a lock that long may stand";
    EXPECT_NE(f.basis.find("above fleet_max_ttl"), std::string::npos);
}

} // namespace
