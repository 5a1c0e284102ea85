#include <redlock/metrics.hpp>

#include <redlock/error.hpp>

#include <gtest/gtest.h>

namespace {

using namespace std::chrono_literals;
using redlock::errc;

bool has_line(const std::string& text, const std::string& line) {
    return text.find(line + "\n") != std::string::npos;
}

TEST(prometheus_metrics, counts_acquires_by_outcome_and_attempts) {
    redlock::prometheus_metrics m({"127.0.0.1:7001"});
    m.on_acquire({}, {}, 2ms, 1);
    m.on_acquire({}, {}, 300us, 1);
    m.on_acquire({}, errc::contention, 40ms, 3);
    const auto text = m.render();
    EXPECT_TRUE(has_line(text, "# TYPE redlock_acquires_total counter"));
    EXPECT_TRUE(has_line(text, "redlock_acquires_total{outcome=\"ok\"} 2"));
    EXPECT_TRUE(has_line(text, "redlock_acquires_total{outcome=\"contention\"} 1"));
    EXPECT_TRUE(has_line(text, "redlock_acquire_attempts_total 5"));
    // Cumulative buckets: 0.3 ms in le=0.0005, 2 ms in le=0.005, 40 ms in le=0.05.
    EXPECT_TRUE(has_line(text, "redlock_acquire_wait_seconds_bucket{le=\"0.0005\"} 1"));
    EXPECT_TRUE(has_line(text, "redlock_acquire_wait_seconds_bucket{le=\"0.005\"} 2"));
    EXPECT_TRUE(has_line(text, "redlock_acquire_wait_seconds_bucket{le=\"0.05\"} 3"));
    EXPECT_TRUE(has_line(text, "redlock_acquire_wait_seconds_bucket{le=\"+Inf\"} 3"));
    EXPECT_TRUE(has_line(text, "redlock_acquire_wait_seconds_count 3"));
    EXPECT_TRUE(has_line(text, "redlock_acquire_wait_seconds_sum 0.0423"));
}

TEST(prometheus_metrics, renewals_losses_releases_and_nodes) {
    redlock::prometheus_metrics m({"a:1", "b\"2"});
    m.on_renewal({});
    m.on_renewal({});
    m.on_renewal(errc::quorum_unreachable);
    m.on_lock_lost(errc::lock_lost);
    m.on_release({}, errc::lock_lost, 7s);
    m.on_node_reply(0, {}, 80us);
    m.on_node_reply(1, errc::node_timeout, 50ms);
    m.on_node_reply(1, errc::server_error, 1ms);
    m.on_node_reply(9, {}, 1ms); // unknown node: ignored, no crash
    m.on_quarantine(1, true);
    const auto text = m.render();
    EXPECT_TRUE(has_line(text, "redlock_renewals_total{outcome=\"ok\"} 2"));
    EXPECT_TRUE(has_line(text, "redlock_renewals_total{outcome=\"failed\"} 1"));
    EXPECT_TRUE(has_line(text, "redlock_locks_lost_total{reason=\"lock_lost\"} 1"));
    EXPECT_TRUE(has_line(text, "redlock_releases_total{outcome=\"lock_lost\"} 1"));
    EXPECT_TRUE(has_line(text, "redlock_lock_hold_seconds_bucket{le=\"5\"} 0"));
    EXPECT_TRUE(has_line(text, "redlock_lock_hold_seconds_bucket{le=\"10\"} 1"));
    EXPECT_TRUE(
        has_line(text, "redlock_node_latency_seconds_bucket{node=\"a:1\",le=\"0.0001\"} 1"));
    EXPECT_TRUE(has_line(text, "redlock_node_errors_total{node=\"b\\\"2\",kind=\"timeout\"} 1"));
    EXPECT_TRUE(has_line(text, "redlock_node_errors_total{node=\"b\\\"2\",kind=\"server\"} 1"));
    EXPECT_TRUE(has_line(text, "redlock_node_quarantined{node=\"a:1\"} 0"));
    EXPECT_TRUE(has_line(text, "redlock_node_quarantined{node=\"b\\\"2\"} 1"));
}

TEST(prometheus_metrics, node_labels_never_carry_credentials) {
    redlock::prometheus_metrics m({"redis://locker:pw-7f3a9c-SECRET@10.0.0.4:6379/2",
                                   "rediss://pw-7f3a9c-SECRET@[::1]:7002",
                                   "unix:///run/r.sock?user=locker&password=pw-7f3a9c-SECRET",
                                   "127.0.0.1:7004", "eu-west-a"});
    for (std::size_t node = 0; node < 5; ++node) {
        m.on_node_reply(node, errc::node_timeout, 1ms);
    }
    const auto text = m.render();
    EXPECT_EQ(text.find("pw-7f3a9c-SECRET"), std::string::npos) << text;
    EXPECT_EQ(text.find("locker"), std::string::npos) << "the user name stays out too";
    for (const char* label :
         {"10.0.0.4:6379", "[::1]:7002", "unix:///run/r.sock", "127.0.0.1:7004", "eu-west-a"}) {
        EXPECT_TRUE(has_line(text, "redlock_node_errors_total{node=\"" + std::string(label) +
                                       "\",kind=\"timeout\"} 1"))
            << label << "\n"
            << text;
    }
}

TEST(prometheus_metrics, refused_addresses_are_labelled_without_what_they_hold) {
    // Addresses the parser refuses (a '/' in the password, a bad port, an unknown query
    // field) are not shown verbatim: they may hold a password it could not find.
    const std::vector<std::string> refused{
        "redis://locker:pw-7f3a9c-SECRET/x@127.0.0.1:7001",
        "redis://:pw-7f3a9c-SECRET@127.0.0.1:99999",
        "unix:///r.sock?password=pw-7f3a9c-SECRET&color=blue",
    };
    redlock::prometheus_metrics m(refused);
    for (std::size_t node = 0; node < refused.size(); ++node) {
        m.on_node_reply(node, errc::node_timeout, 1ms);
    }
    const auto text = m.render();
    EXPECT_EQ(text.find("pw-7f3a9c-SECRET"), std::string::npos) << text;
    for (std::size_t node = 0; node < refused.size(); ++node) {
        EXPECT_TRUE(has_line(text, "redlock_node_errors_total{node=\"nodes[" +
                                       std::to_string(node) + "]\",kind=\"timeout\"} 1"))
            << text;
    }
}

TEST(prometheus_metrics, outcome_labels) {
    EXPECT_EQ(redlock::outcome_label({}), "ok");
    EXPECT_EQ(redlock::outcome_label(errc::validity_expired), "validity_expired");
    EXPECT_EQ(redlock::outcome_label(errc::node_quarantined), "quarantined");
    EXPECT_EQ(redlock::outcome_label(errc::client_closed), "client_closed");
    EXPECT_EQ(redlock::outcome_label(std::make_error_code(std::errc::io_error)), "other");
}

} // namespace

TEST(prometheus_metrics, a_lock_label_names_kinds_of_locks_and_the_gauge_shows_locks_held) {
    // The user's function names kinds of locks: every stock:* key is a checkout.
    redlock::prometheus_metrics m({"127.0.0.1:7001"}, [](const redlock::lock_info& lock) {
        return lock.keys.front().starts_with("stock:") ? "checkout" : "";
    });
    const std::vector<std::string> stock{"stock:42"};
    const std::vector<std::string> other{"report"};
    m.on_acquire({stock, redlock::lock_mode::exclusive}, {}, 1ms, 1);
    m.on_acquire({stock, redlock::lock_mode::exclusive}, errc::contention, 1ms, 2);
    m.on_acquire({other, redlock::lock_mode::exclusive}, {}, 1ms, 1);
    m.on_locks_held(2);
    const auto text = m.render();
    EXPECT_TRUE(has_line(text, "redlock_acquires_total{outcome=\"ok\",lock=\"checkout\"} 1"));
    EXPECT_TRUE(
        has_line(text, "redlock_acquires_total{outcome=\"contention\",lock=\"checkout\"} 1"));
    EXPECT_TRUE(has_line(text, "redlock_acquires_total{outcome=\"ok\"} 1")) << "no label: none";
    EXPECT_EQ(text.find("stock:42"), std::string::npos) << "keys never become labels";
    EXPECT_TRUE(has_line(text, "# TYPE redlock_locks_held gauge"));
    EXPECT_TRUE(has_line(text, "redlock_locks_held 2"));
}

TEST(span_attributes, follow_the_opentelemetry_database_conventions) {
    const std::vector<std::string> keys{"a", "b"};
    redlock::operation_span span;
    span.operation = "acquire";
    span.lock = {keys, redlock::lock_mode::exclusive};
    span.error = errc::contention;
    span.attempts = 3;
    span.nodes = 5;
    span.succeeded = 2;
    const auto attributes = redlock::span_attributes(span);
    const auto value = [&](const std::string& name) {
        for (const auto& [key, v] : attributes) {
            if (key == name) {
                return v;
            }
        }
        return std::string("(absent)");
    };
    EXPECT_EQ(value("db.system.name"), "redis");
    EXPECT_EQ(value("db.operation.name"), "acquire");
    EXPECT_EQ(value("error.type"), "contention");
    EXPECT_EQ(value("redlock.keys"), "a,b");
    EXPECT_EQ(value("redlock.mode"), "exclusive");
    EXPECT_EQ(value("redlock.attempts"), "3");
    EXPECT_EQ(value("redlock.nodes"), "5");
    EXPECT_EQ(value("redlock.nodes.succeeded"), "2");

    span.error = {};
    const auto ok = redlock::span_attributes(span);
    for (const auto& [key, v] : ok) {
        EXPECT_NE(key, "error.type") << "a success has no error.type";
    }
}
