#include "support/fixture.hpp"

#include <future>
#include <mutex>
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

/// Records what a client tells its observer about locks and operations.
class recording_observer final : public metrics_observer {
public:
    struct acquired {
        std::vector<std::string> keys;
        lock_mode mode;
        std::error_code error;
    };
    struct span {
        std::string operation;
        std::vector<std::pair<std::string, std::string>> attributes;
        std::chrono::nanoseconds duration;
        std::chrono::system_clock::time_point start;
    };

    void on_acquire(const lock_info& lock, std::error_code error, std::chrono::nanoseconds,
                    unsigned) override {
        std::lock_guard guard(mutex_);
        acquires_.push_back({{lock.keys.begin(), lock.keys.end()}, lock.mode, error});
    }
    void on_locks_held(std::size_t held) override {
        std::lock_guard guard(mutex_);
        held_.push_back(held);
    }
    void on_operation(const operation_span& s) override {
        std::lock_guard guard(mutex_);
        spans_.push_back({std::string(s.operation), span_attributes(s), s.duration, s.start});
    }

    std::vector<acquired> acquires() {
        std::lock_guard guard(mutex_);
        return acquires_;
    }
    std::vector<std::size_t> held() {
        std::lock_guard guard(mutex_);
        return held_;
    }
    std::vector<span> spans() {
        std::lock_guard guard(mutex_);
        return spans_;
    }

private:
    std::mutex mutex_;
    std::vector<acquired> acquires_;
    std::vector<std::size_t> held_;
    std::vector<span> spans_;
};

std::string attribute(const recording_observer::span& s, const std::string& name) {
    for (const auto& [key, value] : s.attributes) {
        if (key == name) {
            return value;
        }
    }
    return "(absent)";
}

TEST_F(nodes_test, the_observer_learns_the_lock_the_locks_held_and_each_span) {
    auto c = config();
    auto observer = std::make_shared<recording_observer>();
    c.metrics = observer;
    blocking_client client(c);
    std::error_code ec;
    auto short_lived = options(300ms);

    const auto before = std::chrono::system_clock::now();
    auto first = client.acquire({"stock:2", "stock:1"}, short_lived, ec);
    ASSERT_FALSE(ec) << first.message;
    auto second = client.acquire("other", options(), ec);
    ASSERT_FALSE(ec) << second.message;
    client.acquire("other", options(), ec);
    EXPECT_EQ(ec, errc::contention);
    client.extend(second.lock, 20s, ec);
    EXPECT_FALSE(ec);
    client.release(second.lock, ec);
    EXPECT_FALSE(ec);
    // `first` is left to expire: it leaves the count at the next operation after its validity.
    std::this_thread::sleep_for(400ms);
    auto third = client.acquire("third", options(), ec);
    ASSERT_FALSE(ec);
    client.release(third.lock, ec);

    const auto acquires = observer->acquires();
    ASSERT_EQ(acquires.size(), 4u);
    EXPECT_EQ(acquires[0].keys, (std::vector<std::string>{"stock:1", "stock:2"}));
    EXPECT_EQ(acquires[1].keys, (std::vector<std::string>{"other"}));
    EXPECT_EQ(acquires[1].mode, lock_mode::exclusive);
    EXPECT_EQ(acquires[2].error, errc::contention);
    // Granted, granted, extended (still 2), released, expired + granted, released.
    EXPECT_EQ(observer->held(), (std::vector<std::size_t>{1, 2, 2, 1, 1, 0}));

    const auto spans = observer->spans();
    ASSERT_EQ(spans.size(), 7u);
    const std::vector<std::string> operations{"acquire", "acquire", "acquire", "extend",
                                              "release", "acquire", "release"};
    for (std::size_t i = 0; i < spans.size(); ++i) {
        EXPECT_EQ(spans[i].operation, operations[i]);
        EXPECT_EQ(attribute(spans[i], "db.system.name"), "redis");
        EXPECT_EQ(attribute(spans[i], "db.operation.name"), operations[i]);
        EXPECT_GE(spans[i].start, before - 1s);
        EXPECT_GT(spans[i].duration.count(), 0);
    }
    EXPECT_EQ(attribute(spans[0], "redlock.keys"), "stock:1,stock:2");
    EXPECT_EQ(attribute(spans[0], "redlock.nodes"), "5");
    EXPECT_EQ(attribute(spans[2], "error.type"), "contention");
    // A release completes at quorum; the rest of its deletes land after the span.
    EXPECT_GE(std::stoi(attribute(spans[4], "redlock.nodes.succeeded")), 3);
    EXPECT_EQ(attribute(spans[3], "redlock.attempts"), "1");
}

} // namespace
} // namespace redlock::test
