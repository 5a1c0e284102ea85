// When a node's TIME, read against the client's steady clock, shows a step, and when not.
#include "core/clock_watch.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace {

using namespace std::chrono_literals;
using redlock::detail::clock_step_text;
using redlock::detail::clock_watch;
using redlock::detail::parse_node_time;
using redlock::detail::time_sample;
using steady = std::chrono::steady_clock;

constexpr double rate = 0.01; // lock_options' default clock_drift_factor

/// A sample whose round trip starts `at` on the client's steady clock and takes `rtt`, the
/// node reading `wall` in its middle.
time_sample sample(std::chrono::microseconds at, std::chrono::microseconds rtt,
                   std::chrono::microseconds wall) {
    const steady::time_point t0(at);
    return {t0, t0 + rtt, wall};
}

// The node's clock: 1.7e15 us since the epoch at the client's steady 0, plus `extra`.
std::chrono::microseconds wall_at(std::chrono::microseconds steady_mid,
                                  std::chrono::microseconds extra = 0us) {
    return 1'700'000'000'000'000us + steady_mid + extra;
}

TEST(clock_watch, a_constant_offset_is_no_step) {
    clock_watch w;
    for (int i = 0; i < 100; ++i) {
        const auto at = std::chrono::microseconds(i * 1'000'000LL);
        EXPECT_FALSE(w.observe(sample(at, 400us, wall_at(at + 200us)), rate)) << i;
    }
}

TEST(clock_watch, a_rate_within_the_drift_factor_is_no_step) {
    clock_watch w;
    // 0.9 % fast, sampled every second for ten minutes: 5.4 s apart from the first sample.
    for (int i = 0; i <= 600; ++i) {
        const auto at = std::chrono::microseconds(i * 1'000'000LL);
        const auto fast = std::chrono::microseconds(i * 9'000LL);
        EXPECT_FALSE(w.observe(sample(at, 400us, wall_at(at + 200us, fast)), rate)) << i;
    }
}

TEST(clock_watch, a_rate_beyond_the_drift_factor_adds_up_against_the_first_sample) {
    clock_watch w;
    bool seen = false;
    // 1.05 % fast: each second alone stays within the bound (10.5 ms against 10 ms plus
    // 1.4 ms of errors and margin); only the sum over time shows it.
    for (int i = 0; i <= 600 && !seen; ++i) {
        const auto at = std::chrono::microseconds(i * 1'000'000LL);
        const auto fast = std::chrono::microseconds(i * 10'500LL);
        seen = w.observe(sample(at, 400us, wall_at(at + 200us, fast)), rate).has_value();
        EXPECT_TRUE(seen || i < 100) << "not seen after " << i << " s";
    }
    EXPECT_TRUE(seen);
}

TEST(clock_watch, a_step_forward_between_two_samples_is_seen_with_its_size) {
    clock_watch w;
    EXPECT_FALSE(w.observe(sample(0us, 400us, wall_at(200us)), rate));
    EXPECT_FALSE(w.observe(sample(1s, 400us, wall_at(1s + 200us)), rate));
    const auto step = w.observe(sample(2s, 400us, wall_at(2s + 200us, 1500ms)), rate);
    ASSERT_TRUE(step);
    EXPECT_EQ(*step, 1500ms);
    EXPECT_EQ(clock_step_text(*step), "clock stepped by +1500 ms");
    // Then it starts afresh: the new offset is the reference, no second report.
    EXPECT_FALSE(w.observe(sample(3s, 400us, wall_at(3s + 200us, 1500ms)), rate));
}

TEST(clock_watch, a_step_back_is_seen_too) {
    clock_watch w;
    EXPECT_FALSE(w.observe(sample(0us, 400us, wall_at(200us)), rate));
    const auto step = w.observe(sample(1s, 400us, wall_at(1s + 200us, -700ms)), rate);
    ASSERT_TRUE(step);
    EXPECT_EQ(clock_step_text(*step), "clock stepped by -700 ms");
}

TEST(clock_watch, the_bound_is_drift_times_elapsed_plus_both_errors_plus_the_margin) {
    // Samples 1 s apart, round trips of 2 ms and 4 ms (errors 1 ms and 2 ms): the bound is
    // 10 ms + 1 ms + 2 ms + 1 ms = 14 ms.
    {
        clock_watch w;
        w.observe(sample(0us, 2ms, wall_at(1ms)), rate);
        EXPECT_FALSE(w.observe(sample(1s - 1ms, 4ms, wall_at(1s + 1ms, 14ms)), rate));
    }
    {
        clock_watch w;
        w.observe(sample(0us, 2ms, wall_at(1ms)), rate);
        EXPECT_TRUE(w.observe(sample(1s - 1ms, 4ms, wall_at(1s + 1ms, 14ms + 1us)), rate));
    }
}

TEST(clock_watch, a_slow_round_trip_hides_a_step_no_larger_than_its_uncertainty) {
    // The node may have read its clock anywhere within the round trip: a reply that took
    // 100 ms cannot tell a 40 ms step from the node reading late.
    clock_watch w;
    w.observe(sample(0us, 400us, wall_at(200us)), rate);
    EXPECT_FALSE(w.observe(sample(1s, 100ms, wall_at(1s + 50ms + 40ms)), rate));
}

TEST(clock_watch, a_step_inside_one_slow_round_trip_is_seen_at_the_next_precise_sample) {
    // A connection an hour old: drift x elapsed against its first sample allows 36 s. A step
    // of 1 s lands within a 4 s round trip (a node stalled, a VM paused and resumed), whose
    // own uncertainty hides it; the next sample is precise again and must show it, weighed
    // against the last precise one rather than the slow one alone.
    clock_watch w;
    w.observe(sample(0us, 400us, wall_at(200us)), rate);
    EXPECT_FALSE(w.observe(sample(3600s, 400us, wall_at(3600s + 200us)), rate));
    const auto slow = std::chrono::microseconds(3601s);
    EXPECT_FALSE(w.observe(sample(slow, 4s, wall_at(slow + 2s, 1s)), rate))
        << "within the slow sample's own uncertainty";
    const auto next = slow + 5s;
    const auto step = w.observe(sample(next, 400us, wall_at(next + 200us, 1s)), rate);
    ASSERT_TRUE(step);
    EXPECT_EQ(*step, 1s);
}

TEST(clock_watch, another_server_starts_afresh) {
    clock_watch w;
    w.observe(sample(0us, 400us, wall_at(200us)), rate);
    w.forget();
    EXPECT_FALSE(w.observe(sample(1s, 400us, wall_at(1s + 200us, 1h)), rate))
        << "a failover to a host whose clock is an hour off: a constant offset";
}

TEST(parse_node_time, reads_seconds_and_microseconds) {
    EXPECT_EQ(parse_node_time("1700000000", "123456"), 1'700'000'000'123'456us);
    EXPECT_FALSE(parse_node_time("1700000000", "1000000"));
    EXPECT_FALSE(parse_node_time("-1", "0"));
    EXPECT_FALSE(parse_node_time("17e8", "0"));
    EXPECT_FALSE(parse_node_time("", "0"));
    EXPECT_FALSE(parse_node_time("99999999999999999999", "0")) << "no overflow";
}

} // namespace
