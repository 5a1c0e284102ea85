// A client destroyed while its connections are between attempts: the timers of connects
// and backoffs may already have fired and sit queued behind the handler that destroys it.
// Found by review; a use after free under AddressSanitizer before the fix.
#include <redlock/client.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <thread>

namespace {

using namespace std::chrono_literals;

TEST(client_teardown, while_connections_back_off_on_a_multithreaded_context) {
    boost::asio::io_context io;
    auto work = boost::asio::make_work_guard(io);
    std::thread first([&] { io.run(); });
    std::thread second([&] { io.run(); });
    std::size_t failed = 0;
    for (int round = 0; round < 1500; ++round) {
        redlock::client_config config;
        // Nothing listens on these ports: every connect is refused at once.
        config.nodes = {"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"};
        config.reconnect_delay_initial = 1ms;
        config.reconnect_delay_max = 1ms;
        auto client = std::make_unique<redlock::client>(io.get_executor(), config);
        redlock::lock_options options;
        options.retry.max_attempts = 2;
        options.retry.backoff_initial = 1ms;
        options.retry.backoff_max = 1ms;
        std::promise<std::error_code> done;
        client->async_acquire(
            "k", options,
            [&](boost::system::error_code ec, redlock::acquire_result) { done.set_value(ec); });
        failed += done.get_future().get() == redlock::errc::quorum_unreachable ? 1 : 0;
        client.reset();
    }
    work.reset();
    first.join();
    second.join();
    EXPECT_EQ(failed, 1500U) << "no node can grant anything";
}

} // namespace
