#ifndef REDLOCK_TESTS_SUPPORT_FIXTURE_HPP
#define REDLOCK_TESTS_SUPPORT_FIXTURE_HPP

#include "support/settled.hpp"
#include "support/topology.hpp"

#include <redlock/redlock.hpp>

#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <thread>

namespace redlock::test {

/// Every integration test starts and ends with all five nodes up, running and empty,
/// whatever it stopped or paused.
class nodes_test : public ::testing::Test {
protected:
    void SetUp() override {
        topology::prepare_child_environment();
        topology::restore();
    }
    void TearDown() override { topology::restore(); }

    static client_config config() {
        client_config c;
        c.nodes = topology::addresses();
        c.reconnect_delay_initial = std::chrono::milliseconds(20);
        c.reconnect_delay_max = std::chrono::milliseconds(200);
        // These tests restart nodes all the time; the quarantine tests turn it back on.
        c.quarantine.enabled = false;
        return c;
    }

    /// One attempt, and 500 ms for each node. The default node_timeout (50 ms) bounds a
    /// node's answer on a quiet network, but a process on the shared CI machines can be
    /// descheduled for longer than 50 ms (seen in CI under AddressSanitizer: 0 of 5 nodes in
    /// time), and an extend's or release's first command on a new connection waits for its
    /// handshake within it (only an acquire waits for connections first). These
    /// tests check behaviour, not speed; the tests about a silent node set the timeout they
    /// mean (default_node_timeout() for the one users get).
    static lock_options options(std::chrono::milliseconds ttl = std::chrono::seconds(10)) {
        lock_options o;
        o.ttl = ttl;
        o.node_timeout = std::chrono::milliseconds(500);
        o.retry.max_attempts = 1;
        return o;
    }
    static std::chrono::milliseconds default_node_timeout() { return lock_options{}.node_timeout; }

    static std::size_t count(const std::vector<node_vote>& votes, node_outcome outcome) {
        std::size_t n = 0;
        for (const auto& v : votes) {
            n += v.outcome == outcome ? 1 : 0;
        }
        return n;
    }
};

using clock_type = std::chrono::steady_clock;

/// An io_context running on its own thread. Destroy the clients first: then the thread
/// drains by itself, which also proves that a client's shutdown leaves no work behind.
class io_thread {
public:
    io_thread()
        : thread_([this] { io_.run(); }) {}
    ~io_thread() {
        guard_.reset();
        thread_.join();
    }
    boost::asio::io_context& context() { return io_; }
    boost::asio::any_io_executor executor() { return io_.get_executor(); }

private:
    boost::asio::io_context io_;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard_{
        io_.get_executor()};
    std::thread thread_;
};

/// Whether this build runs under a sanitizer, which slows everything several times and
/// keeps freed memory in quarantine: throughput and memory figures mean little there.
constexpr bool sanitized() {
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
    return true;
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return true;
#else
    return false;
#endif
}

inline std::chrono::milliseconds since(clock_type::time_point start) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - start);
}

} // namespace redlock::test

#endif
