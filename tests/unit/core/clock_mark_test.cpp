// What lua/clock_mark.lua's reply means to a client: the arguments it sends, the reply it
// accepts, and where on its steady clock it places a step back the node recorded.
#include "core/clock_mark.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace {

using namespace std::chrono_literals;
using redlock::detail::clock_mark_reply;
using redlock::detail::clock_mark_watch;
using redlock::detail::make_clock_mark_arguments;
using redlock::detail::parse_clock_mark;
using redlock::detail::recorded_step_text;
using steady = std::chrono::steady_clock;

constexpr double rate = 0.01; // lock_options' default clock_drift_factor

TEST(clock_mark, parses_the_four_fields) {
    const auto r = parse_clock_mark("1700000000", "250000", "1699999999000000", "1500000");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->node_time, 1'700'000'000'250'000us);
    EXPECT_EQ(r->step_at, 1'699'999'999'000'000us);
    EXPECT_EQ(r->step_by, 1'500'000us);
    const auto none = parse_clock_mark("1700000000", "0", "0", "0");
    ASSERT_TRUE(none);
    EXPECT_EQ(none->step_at, 0us);
}

TEST(clock_mark, refuses_what_is_not_four_numbers) {
    EXPECT_FALSE(parse_clock_mark("1700000000", "0", "", "0"));
    EXPECT_FALSE(parse_clock_mark("1700000000", "0", "-5", "0"));
    EXPECT_FALSE(parse_clock_mark("1700000000", "0", "1.5e+15", "0"));
    EXPECT_FALSE(parse_clock_mark("1700000000", "1000000", "0", "0"));
    // Past the year 2500: a hostile node must not overflow the placement's arithmetic.
    EXPECT_FALSE(parse_clock_mark("1700000000", "0", "99999999999999999", "0"));
    EXPECT_FALSE(parse_clock_mark("1700000000", "0", "0", "99999999999999999"));
}

TEST(clock_mark, arguments_are_the_resolution_and_the_quarantine_with_drift) {
    // The defaults: a 60 s fleet maximum and a 1 % drift.
    const auto args = make_clock_mark_arguments(60000ms, rate);
    EXPECT_EQ(args.tolerance_us, "1000");
    // (60 s + 1 s) x 1.01^2 = 62.2261 s, rounded up.
    EXPECT_EQ(args.keep_ms, "62227");
    EXPECT_GE(std::stoll(args.keep_ms), 60000 + 600 + 2) << "outlives the quarantine";
    // No rate: still the fleet maximum and a second.
    EXPECT_EQ(make_clock_mark_arguments(300ms, 0).keep_ms, "1300");
    // Never beyond what the script accepts.
    EXPECT_EQ(make_clock_mark_arguments(std::chrono::milliseconds::max(), rate).keep_ms,
              "999999999999");
}

TEST(clock_mark, no_recorded_step_is_no_step) {
    clock_mark_watch w;
    EXPECT_FALSE(w.observe({1'700'000'000'000'000us, 0us, 0us}, steady::time_point(5s), rate));
}

TEST(clock_mark, a_recorded_step_is_placed_no_earlier_than_it_can_have_happened) {
    clock_mark_watch w;
    // Recorded 10 s ago by the node's clock; at most 10 s / 1.01 ago by the client's.
    const clock_mark_reply r{1'700'000'010'000'000us, 1'700'000'000'000'000us, 1'500'000us};
    const steady::time_point received(100s);
    const auto step = w.observe(r, received, rate);
    ASSERT_TRUE(step);
    EXPECT_EQ(step->by, 1'500'000us);
    EXPECT_EQ(step->at, received - 9'900'990us);
    EXPECT_GT(step->at, received - 10s) << "later than the node's own reckoning: conservative";
}

TEST(clock_mark, a_step_is_reported_once_and_a_new_one_again) {
    clock_mark_watch w;
    const clock_mark_reply r{1'700'000'010'000'000us, 1'700'000'000'000'000us, 1'500'000us};
    ASSERT_TRUE(w.observe(r, steady::time_point(100s), rate));
    // The same record in later replies: its placement would creep later with the drift
    // division, lengthening the quarantine for nothing.
    auto later = r;
    later.node_time += 1s;
    EXPECT_FALSE(w.observe(later, steady::time_point(101s), rate));
    auto another = later;
    another.step_at = 1'700'000'011'000'000us;
    another.node_time = another.step_at;
    const auto second = w.observe(another, steady::time_point(101s), rate);
    ASSERT_TRUE(second);
    EXPECT_EQ(second->at, steady::time_point(101s));
    // Another server at the address: its record is reported afresh.
    w.forget();
    EXPECT_TRUE(w.observe(another, steady::time_point(102s), rate));
}

TEST(clock_mark, a_record_ahead_of_the_time_is_placed_at_the_reply) {
    // The clock fell once more, within the tolerance, after the record: no negative elapsed.
    clock_mark_watch w;
    const clock_mark_reply r{1'700'000'000'000'000us, 1'700'000'000'000'500us, 2'000'000us};
    const auto step = w.observe(r, steady::time_point(7s), rate);
    ASSERT_TRUE(step);
    EXPECT_EQ(step->at, steady::time_point(7s));
}

TEST(clock_mark, text) {
    EXPECT_EQ(recorded_step_text(1'499'600us),
              "clock stepped back by 1500 ms (recorded on the node)");
}

} // namespace
