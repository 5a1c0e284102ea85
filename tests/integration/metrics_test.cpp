#include "support/fixture.hpp"

#include <future>
#include <thread>

namespace redlock::test {
namespace {

using namespace std::chrono_literals;

bool has_line(const std::string& text, const std::string& line) {
    return text.find(line + "\n") != std::string::npos;
}

/// The value of the sample `series` (name and labels), or -1.
long long sample(const std::string& text, const std::string& series) {
    const auto at = text.find(series + " ");
    return at == std::string::npos ? -1 : std::stoll(text.substr(at + series.size() + 1));
}

TEST_F(nodes_test, metrics_after_a_known_sequence_of_operations) {
    auto c = config();
    auto metrics = std::make_shared<prometheus_metrics>(c.nodes);
    c.metrics = metrics;
    blocking_client client(c);
    std::error_code ec;

    auto held = client.acquire("metered", options(), ec);
    ASSERT_FALSE(ec);
    client.acquire("metered", options(), ec);
    EXPECT_EQ(ec, errc::contention);
    client.release(held.lock, ec);
    EXPECT_FALSE(ec);
    client.release(held.lock, ec);
    EXPECT_EQ(ec, errc::lock_lost);

    topology::stop(5);
    auto degraded = client.acquire("metered-2", options(), ec);
    ASSERT_FALSE(ec);
    client.release(degraded.lock, ec);

    {
        auto renewed = client.acquire("renewed", options(300ms), ec);
        ASSERT_FALSE(ec);
        watchdog dog(client.async_client(), renewed.lock);
        std::this_thread::sleep_for(450ms);
        std::promise<void> stopped;
        dog.async_stop([&] { stopped.set_value(); });
        stopped.get_future().wait();
        client.release(dog.current(), ec);
    }

    const auto text = metrics->render();
    EXPECT_TRUE(has_line(text, "redlock_acquires_total{outcome=\"ok\"} 3")) << text;
    EXPECT_TRUE(has_line(text, "redlock_acquires_total{outcome=\"contention\"} 1"));
    EXPECT_TRUE(has_line(text, "redlock_acquire_attempts_total 4"));
    EXPECT_TRUE(has_line(text, "redlock_releases_total{outcome=\"ok\"} 3"));
    EXPECT_TRUE(has_line(text, "redlock_releases_total{outcome=\"lock_lost\"} 1"));
    EXPECT_TRUE(has_line(text, "redlock_lock_hold_seconds_count 4"));
    EXPECT_NE(text.find("redlock_renewals_total{outcome=\"ok\"} "), std::string::npos);
    // Releases wait for every node, so each of the three after the stop saw node 5 fail.
    EXPECT_GE(
        sample(text, "redlock_node_errors_total{node=\"" + c.nodes[4] + "\",kind=\"connection\"}"),
        3);
    EXPECT_GE(sample(text, "redlock_renewals_total{outcome=\"ok\"}"), 2);
    // Acquires and renewals decide at quorum and may finish without node 1's answer; the four
    // releases hear every node.
    EXPECT_GE(sample(text, "redlock_node_latency_seconds_count{node=\"" + c.nodes[0] + "\"}"), 4);
    EXPECT_EQ(text.find("node=\"" + c.nodes[0] + "\",kind="), std::string::npos)
        << "a healthy node has no error series";
}

} // namespace
} // namespace redlock::test
