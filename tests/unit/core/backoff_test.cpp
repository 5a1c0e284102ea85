#include "core/backoff.hpp"

#include <gtest/gtest.h>

#include <random>

namespace {

using namespace std::chrono_literals;
using std::chrono::microseconds;
namespace d = redlock::detail;

TEST(backoff, ceiling_doubles_from_initial_and_stops_at_max) {
    EXPECT_EQ(d::backoff_ceiling(1, 20ms, 500ms), 20ms);
    EXPECT_EQ(d::backoff_ceiling(2, 20ms, 500ms), 40ms);
    EXPECT_EQ(d::backoff_ceiling(3, 20ms, 500ms), 80ms);
    EXPECT_EQ(d::backoff_ceiling(5, 20ms, 500ms), 320ms);
    EXPECT_EQ(d::backoff_ceiling(6, 20ms, 500ms), 500ms);
    EXPECT_EQ(d::backoff_ceiling(4'000'000'000u, 20ms, 500ms), 500ms) << "no overflow";
}

TEST(backoff, zero_initial_means_no_sleep) {
    EXPECT_EQ(d::backoff_ceiling(7, 0ms, 500ms), 0ms);
    EXPECT_EQ(d::full_jitter(0us, 12345), 0us);
}

TEST(backoff, full_jitter_spans_zero_to_ceiling_inclusive) {
    EXPECT_EQ(d::full_jitter(100us, 0), 0us);
    EXPECT_EQ(d::full_jitter(100us, 100), 100us);
    EXPECT_EQ(d::full_jitter(100us, 101), 0us);

    std::mt19937_64 random(7);
    microseconds low = 1s, high = 0us, sum = 0us;
    constexpr int draws = 20000;
    for (int i = 0; i < draws; ++i) {
        const auto d = d::full_jitter(10ms, random());
        ASSERT_GE(d, 0us);
        ASSERT_LE(d, 10ms);
        low = std::min(low, d);
        high = std::max(high, d);
        sum += d;
    }
    EXPECT_LT(low, 100us) << "the whole range is used, down to zero";
    EXPECT_GT(high, 9900us);
    const auto mean = sum / draws;
    EXPECT_NEAR(static_cast<double>(mean.count()), 5000.0, 150.0) << "uniform: mean is half";
}

} // namespace
