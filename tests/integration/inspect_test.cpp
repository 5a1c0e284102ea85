// client::async_inspect and blocking_client::inspect against the five nodes.
#include "support/fixture.hpp"

#include <boost/asio/use_future.hpp>

namespace redlock::test {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

TEST_F(nodes_test, inspect_shows_the_holder_and_its_pttl_on_every_node) {
    io_thread io;
    client locks(io.executor(), config());
    const auto got = locks.async_acquire("inspect:held", options(10s), asio::use_future).get();
    const auto seen = locks.async_inspect("inspect:held", asio::use_future).get();
    ASSERT_EQ(seen.nodes.size(), topology::size());
    for (const auto& view : seen.nodes) {
        EXPECT_FALSE(view.error) << view.node << ": " << view.message;
        ASSERT_TRUE(view.holder) << view.node;
        EXPECT_EQ(*view.holder, got.lock.token());
        ASSERT_TRUE(view.pttl) << view.node << ": " << view.pttl_message;
        EXPECT_GT(*view.pttl, 0ms);
        EXPECT_LE(*view.pttl, 10s);
        EXPECT_FALSE(view.run_id.empty()) << "learnt on connect";
        EXPECT_FALSE(view.same_server_as);
        EXPECT_FALSE(view.quarantined_for) << "the fixture turns the quarantine off";
    }
    locks.async_release(got.lock, asio::use_future).get();
    const auto after = locks.async_inspect("inspect:held", asio::use_future).get();
    for (const auto& view : after.nodes) {
        EXPECT_FALSE(view.error);
        EXPECT_FALSE(view.holder) << "released everywhere";
        ASSERT_TRUE(view.pttl);
        EXPECT_EQ(*view.pttl, -2ms) << "PTTL of a missing key";
    }
}

TEST_F(nodes_test, inspect_reports_a_stopped_node_in_its_view_only) {
    topology::stop(2);
    blocking_client locks(config());
    std::error_code ec;
    const auto seen = locks.inspect("inspect:down", 1s, ec);
    ASSERT_FALSE(ec) << seen.message;
    ASSERT_EQ(seen.nodes.size(), topology::size());
    EXPECT_EQ(seen.nodes[1].error, errc::connection_failed) << seen.nodes[1].message;
    EXPECT_FALSE(seen.nodes[1].holder);
    EXPECT_FALSE(seen.nodes[0].error) << seen.nodes[0].message;
    EXPECT_FALSE(seen.nodes[0].holder);
}

TEST_F(nodes_test, inspect_waits_its_whole_timeout_for_a_paused_node) {
    blocking_client locks(config());
    std::error_code ec;
    locks.inspect("inspect:warm", 1s, ec); // connected first
    topology::pause(2);
    const auto start = std::chrono::steady_clock::now();
    const auto seen = locks.inspect("inspect:paused", 2500ms, ec);
    const auto took = std::chrono::steady_clock::now() - start;
    topology::resume(2);
    ASSERT_FALSE(ec) << seen.message;
    // Not cut short by the connection's reply patience (1 s unless a longer wait is in use).
    EXPECT_EQ(seen.nodes[1].error, errc::node_timeout) << seen.nodes[1].message;
    EXPECT_GE(took, 2400ms);
    EXPECT_FALSE(seen.nodes[0].error) << seen.nodes[0].message;
}

TEST_F(nodes_test, inspect_refuses_bad_input_and_a_closed_client) {
    blocking_client locks(config());
    std::error_code ec;
    auto seen = locks.inspect("", ec);
    EXPECT_EQ(ec, errc::invalid_argument);
    seen = locks.inspect("k", 0ms, ec);
    EXPECT_EQ(ec, errc::invalid_argument) << seen.message;
    locks.close();
    seen = locks.inspect("k", ec);
    EXPECT_EQ(ec, errc::client_closed);
    EXPECT_TRUE(seen.nodes.empty());
}

} // namespace
} // namespace redlock::test
