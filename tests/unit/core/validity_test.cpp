#include "core/validity.hpp"

#include <gtest/gtest.h>

namespace {

using namespace std::chrono_literals;
using redlock::lock_options;
namespace d = redlock::detail;

TEST(validity, drift_is_one_percent_of_ttl_plus_two_ms_by_default) {
    lock_options o;
    o.ttl = 10s;
    EXPECT_EQ(d::drift(o), 102ms);
    o.ttl = 100ms;
    EXPECT_EQ(d::drift(o), 3ms);
    o.ttl = 150ms;
    EXPECT_EQ(d::drift(o), 3500us);
}

TEST(validity, valid_until_is_start_plus_ttl_minus_drift) {
    lock_options o;
    o.ttl = 1s;
    const d::clock::time_point start{10s};
    EXPECT_EQ(d::valid_until(start, o), start + 1s - 12ms);
}

TEST(validity, deadline_is_the_node_timeout_when_the_ttl_is_long) {
    lock_options o;
    o.ttl = 10s;
    o.node_timeout = 50ms;
    const d::clock::time_point start{1s};
    EXPECT_EQ(d::attempt_deadline(start, o), start + 50ms);
    EXPECT_FALSE(d::deadline_is_validity_horizon(o));
}

TEST(validity, deadline_is_capped_so_a_quorum_at_the_deadline_keeps_min_validity) {
    lock_options o;
    o.ttl = 40ms; // drift 2.4 ms
    o.node_timeout = 50ms;
    o.min_validity = 5ms;
    const d::clock::time_point start{1s};
    EXPECT_EQ(d::attempt_deadline(start, o), start + 40ms - 2400us - 5ms);
    EXPECT_TRUE(d::deadline_is_validity_horizon(o));
    EXPECT_EQ(d::valid_until(start, o) - d::attempt_deadline(start, o), o.min_validity);
}

} // namespace
