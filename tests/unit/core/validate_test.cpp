#include "core/validate.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace {

using namespace std::chrono_literals;
namespace d = redlock::detail;

redlock::client_config five() {
    redlock::client_config c;
    for (int port = 7001; port <= 7005; ++port) {
        c.nodes.push_back("127.0.0.1:" + std::to_string(port));
    }
    return c;
}

std::string config_error(const redlock::client_config& c) {
    std::vector<redlock::node_address> parsed;
    return d::check_client_config(c, parsed);
}

TEST(validate, keys) {
    EXPECT_EQ(d::check_key("orders:sku-1"), "");
    EXPECT_NE(d::check_key("").find("empty"), std::string::npos);
    EXPECT_EQ(d::check_key(std::string(redlock::max_key_size, 'k')), "");
    EXPECT_NE(d::check_key(std::string(redlock::max_key_size + 1, 'k')).find("1025"),
              std::string::npos);
    EXPECT_EQ(d::check_key(std::string("a\0b", 3)), "") << "keys are binary-safe";
}

TEST(validate, defaults_are_valid) {
    EXPECT_EQ(d::check_lock_options(redlock::lock_options{}), "");
    EXPECT_EQ(config_error(five()), "");
}

TEST(validate, ttl_bounds) {
    redlock::lock_options o;
    o.ttl = 0ms;
    EXPECT_NE(d::check_lock_options(o).find("positive"), std::string::npos);
    o.ttl = -5ms;
    EXPECT_NE(d::check_lock_options(o).find("positive"), std::string::npos);
    o.ttl = redlock::max_ttl + 1ms;
    EXPECT_NE(d::check_lock_options(o).find("limit"), std::string::npos);
    o.ttl = redlock::max_ttl;
    EXPECT_EQ(d::check_lock_options(o), "");
    o.ttl = std::chrono::milliseconds::max();
    EXPECT_NE(d::check_lock_options(o), "") << "no overflow in the drift arithmetic";
}

TEST(validate, ttl_must_exceed_drift_plus_min_validity) {
    redlock::lock_options o;
    o.ttl = 3ms; // drift 2.03 ms + min_validity 1 ms
    EXPECT_NE(d::check_lock_options(o).find("drift"), std::string::npos);
    o.ttl = 2ms;
    EXPECT_NE(d::check_lock_options(o).find("drift"), std::string::npos);
    o.ttl = 4ms;
    EXPECT_EQ(d::check_lock_options(o), "");
}

TEST(validate, drift_factor_node_timeout_and_retry) {
    auto check = [](auto mutate) {
        redlock::lock_options o;
        mutate(o);
        return d::check_lock_options(o);
    };
    EXPECT_NE(check([](auto& o) { o.clock_drift_factor = -0.1; }), "");
    EXPECT_NE(check([](auto& o) { o.clock_drift_factor = 1.0; }), "");
    EXPECT_NE(check([](auto& o) { o.clock_drift_factor = std::nan(""); }), "");
    EXPECT_NE(
        check([](auto& o) { o.clock_drift_factor = std::numeric_limits<double>::infinity(); }), "");
    EXPECT_NE(check([](auto& o) { o.drift_allowance = -1ms; }), "");
    EXPECT_NE(check([](auto& o) { o.min_validity = -1ms; }), "");
    EXPECT_NE(check([](auto& o) { o.node_timeout = 0ms; }), "");
    EXPECT_NE(check([](auto& o) {
                  o.fencing = true;
                  o.max_counter_lead = 0;
              }),
              "");
    EXPECT_NE(check([](auto& o) {
                  o.retry.max_attempts = 0;
                  o.retry.wait_budget = 0ms;
              }).find("unbounded"),
              std::string::npos);
    EXPECT_EQ(check([](auto& o) {
                  o.retry.max_attempts = 0;
                  o.retry.wait_budget = 1s;
              }),
              "");
    EXPECT_NE(check([](auto& o) { o.retry.wait_budget = -1ms; }), "");
    EXPECT_NE(check([](auto& o) { o.retry.backoff_initial = -1ms; }), "");
    EXPECT_NE(check([](auto& o) {
                  o.retry.backoff_initial = 2s;
                  o.retry.backoff_max = 1s;
              }),
              "");
}

TEST(validate, node_lists) {
    redlock::client_config empty;
    EXPECT_NE(config_error(empty).find("no nodes"), std::string::npos);

    auto dup = five();
    dup.nodes[3] = "redis://:pw@127.0.0.1:7002/5";
    const auto why = config_error(dup);
    EXPECT_NE(why.find("same server"), std::string::npos) << why;
    EXPECT_NE(why.find("nodes[3]"), std::string::npos) << why;

    auto bad = five();
    bad.nodes[2] = "redis://u:s3cret@127.0.0.1:port";
    EXPECT_NE(config_error(bad).find("nodes[2]"), std::string::npos);
    EXPECT_EQ(config_error(bad).find("s3cret"), std::string::npos) << "no password in errors";

    for (const char* user_only : {"redis://locker:@127.0.0.1:7003", "unix:///r.sock?user=locker"}) {
        auto no_password = five();
        no_password.nodes[2] = user_only;
        EXPECT_NE(config_error(no_password).find("nodes[2]: ACL user without a password"),
                  std::string::npos)
            << user_only << ": no AUTH would run, and the default user would act instead";
    }

    auto even = five();
    even.nodes.pop_back();
    EXPECT_EQ(config_error(even), "") << "an even count is allowed (quorum N/2+1)";
}

TEST(validate, connection_settings) {
    auto c = five();
    c.connect_timeout = 0ms;
    EXPECT_NE(config_error(c), "");
    c = five();
    c.reconnect_delay_initial = 0ms;
    EXPECT_NE(config_error(c), "");
    c = five();
    c.reconnect_delay_max = 1ms;
    EXPECT_NE(config_error(c), "");
    c = five();
    c.max_in_flight_per_node = 0;
    EXPECT_NE(config_error(c), "");
    for (const std::size_t bad :
         {std::size_t{0}, redlock::smallest_reply_bound - 1, redlock::largest_reply_bound + 1}) {
        c = five();
        c.max_reply_size = bad;
        EXPECT_NE(config_error(c).find("max_reply_size"), std::string::npos) << bad;
    }
    c = five();
    c.max_reply_size = redlock::smallest_reply_bound;
    EXPECT_EQ(config_error(c), "");
}

} // namespace

namespace {

// Found by tests/fuzz/config_fuzzer.cpp: a duration in the millions of years overflowed
// when converted to the clock's nanoseconds. Every duration is now bounded like the ttl.
TEST(validate, every_duration_is_bounded_so_clock_arithmetic_cannot_overflow) {
    const auto huge = std::chrono::milliseconds(std::numeric_limits<std::int64_t>::max() / 2);
    using lock_field = std::chrono::milliseconds redlock::lock_options::*;
    for (const auto& [field, name] :
         {std::pair<lock_field, const char*>{&redlock::lock_options::node_timeout, "node_timeout"},
          {&redlock::lock_options::drift_allowance, "drift_allowance"},
          {&redlock::lock_options::min_validity, "min_validity"}}) {
        redlock::lock_options o;
        o.*field = huge;
        const auto why = d::check_lock_options(o);
        EXPECT_NE(why.find(name), std::string::npos) << why;
        EXPECT_NE(why.find("over the limit"), std::string::npos) << why;
    }
    redlock::lock_options o;
    o.retry.wait_budget = huge;
    EXPECT_NE(d::check_lock_options(o).find("retry.wait_budget"), std::string::npos);
    o = {};
    o.retry.backoff_max = huge;
    EXPECT_NE(d::check_lock_options(o).find("retry.backoff_max"), std::string::npos);
    o = {};
    o.retry.backoff_initial = -1ms;
    EXPECT_NE(d::check_lock_options(o).find("must not be negative"), std::string::npos);
    o = {};
    o.node_timeout = redlock::max_ttl;
    EXPECT_EQ(d::check_lock_options(o), "") << "the limit itself is accepted";

    auto c = five();
    c.connect_timeout = huge;
    EXPECT_NE(config_error(c).find("connect_timeout"), std::string::npos);
    c = five();
    c.fleet_max_ttl = huge;
    EXPECT_NE(config_error(c).find("fleet_max_ttl"), std::string::npos);
    c = five();
    c.fleet_max_ttl = 0ms;
    EXPECT_NE(config_error(c).find("fleet_max_ttl must be positive"), std::string::npos);
    c = five();
    c.fleet_max_ttl = redlock::max_ttl;
    EXPECT_EQ(config_error(c), "") << "the limit itself is accepted";
    c = five();
    c.reconnect_delay_max = huge;
    EXPECT_NE(config_error(c).find("reconnect_delay_max"), std::string::npos);
}

TEST(validate, a_ttl_above_the_fleet_maximum_is_refused_naming_the_setting) {
    EXPECT_EQ(redlock::client_config{}.fleet_max_ttl, 60s) << "the documented default";
    EXPECT_EQ(d::check_fleet_ttl(60s, 60s), "") << "the maximum itself is accepted";
    const auto why = d::check_fleet_ttl(60001ms, 60s);
    EXPECT_NE(why.find("60001 ms is above the fleet's maximum of 60000 ms"), std::string::npos)
        << why;
    for (const char* named : {"client_config::fleet_max_ttl", "--max-ttl", "$REDLOCK_MAX_TTL"}) {
        EXPECT_NE(why.find(named), std::string::npos) << named << ": " << why;
    }
}

TEST(validate, renewal_options) {
    EXPECT_EQ(d::check_renewal_options({}), "") << "zero means the default";
    redlock::renewal_options r;
    r.interval = -5ms;
    EXPECT_NE(d::check_renewal_options(r).find("interval must not be negative"), std::string::npos);
    r = {};
    r.retry_delay = redlock::max_ttl + 1ms;
    EXPECT_NE(d::check_renewal_options(r).find("over the limit"), std::string::npos);
}

} // namespace

namespace {

TEST(validate, lock_keys) {
    redlock::lock_options o;
    EXPECT_EQ(d::check_lock_keys({"a", "b", "c"}, o), "");
    EXPECT_NE(d::check_lock_keys({}, o).find("at least one key"), std::string::npos);
    EXPECT_NE(d::check_lock_keys({"b", "a", "b"}, o).find("\"b\" is given twice"),
              std::string::npos)
        << "duplicates are found in any order";
    EXPECT_NE(d::check_lock_keys({"a", ""}, o).find("empty"), std::string::npos);
    std::vector<std::string> many;
    for (std::size_t i = 0; i <= redlock::max_keys_per_lock; ++i) {
        many.push_back("k" + std::to_string(i));
    }
    EXPECT_NE(d::check_lock_keys(many, o).find("at most"), std::string::npos);
    many.pop_back();
    EXPECT_EQ(d::check_lock_keys(many, o), "");

    o.fencing = true;
    EXPECT_NE(d::check_lock_keys({"a", "{a}:fence"}, o).find("fencing counter of key \"a\""),
              std::string::npos);
    o.fencing = false;
    EXPECT_EQ(d::check_lock_keys({"a", "{a}:fence"}, o), "") << "no counters without fencing";

    o.mode = redlock::lock_mode::shared;
    EXPECT_EQ(d::check_lock_keys({"a"}, o), "");
    EXPECT_NE(d::check_lock_keys({"a", "b"}, o).find("take one key"), std::string::npos);
}

TEST(validate, modes_and_permits) {
    redlock::lock_options o;
    o.mode = redlock::lock_mode::permit;
    EXPECT_NE(d::check_lock_options(o).find("needs permits from 1"), std::string::npos);
    o.permits = redlock::max_permits;
    EXPECT_EQ(d::check_lock_options(o), "");
    o.permits = redlock::max_permits + 1;
    EXPECT_NE(d::check_lock_options(o).find("needs permits"), std::string::npos);
    o.mode = redlock::lock_mode::shared;
    o.permits = 3;
    EXPECT_NE(d::check_lock_options(o).find("permits is for lock_mode::permit only"),
              std::string::npos);
    o.permits = 0;
    EXPECT_EQ(d::check_lock_options(o), "");
    o.mode = static_cast<redlock::lock_mode>(7);
    EXPECT_NE(d::check_lock_options(o).find("mode must be"), std::string::npos);
}

} // namespace
