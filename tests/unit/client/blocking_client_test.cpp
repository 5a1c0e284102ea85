#include <redlock/blocking_client.hpp>
// Thread-per-request code includes the facade everywhere: it must not bring Asio or its
// coroutine machinery along (docs/api.md, "Include cost").
#if defined(BOOST_ASIO_AWAITABLE_HPP) || defined(BOOST_ASIO_CO_SPAWN_HPP) ||                       \
    defined(BOOST_ASIO_ANY_IO_EXECUTOR_HPP) || defined(BOOST_ASIO_IO_CONTEXT_HPP)
#error "blocking_client.hpp includes Asio"
#endif

#include <redlock/client.hpp>

#include <gtest/gtest.h>

#include <boost/asio/post.hpp>

#include <chrono>
#include <filesystem>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include <unistd.h>

namespace {

/// The kernel's id of the thread running `client`'s handlers.
pid_t io_thread_of(redlock::blocking_client& client) {
    std::promise<pid_t> tid;
    boost::asio::post(client.async_client().get_executor(), [&] { tid.set_value(::gettid()); });
    return tid.get_future().get();
}

/// Whether that thread has ended, within a few seconds (counting all threads would count a
/// sanitizer's own; a joined thread may linger in /proc for a moment).
bool thread_ended(pid_t tid) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::filesystem::exists("/proc/self/task/" + std::to_string(tid))) {
        if (std::chrono::steady_clock::now() > until) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
}

redlock::client_config unreachable_node() {
    redlock::client_config config;
    config.nodes = {"127.0.0.1:1"}; // nothing listens: connects are refused at once
    return config;
}

TEST(blocking_client, may_be_destroyed_by_a_handler_on_its_own_io_thread) {
    auto owned = std::make_unique<redlock::blocking_client>(unreachable_node());
    const auto io_thread = io_thread_of(*owned);
    auto& async = owned->async_client();
    // Work in flight when the destructor runs: an acquire retrying against a dead node.
    redlock::lock_options options;
    options.retry.max_attempts = 0;
    options.retry.wait_budget = std::chrono::seconds(5);
    std::promise<std::error_code> acquired;
    async.async_acquire("k", options, [&](boost::system::error_code ec, redlock::acquire_result) {
        acquired.set_value(ec);
    });
    std::promise<void> destroyed;
    boost::asio::post(async.get_executor(), [&] {
        owned.reset();
        destroyed.set_value();
    });
    destroyed.get_future().wait();
    auto outcome = acquired.get_future();
    ASSERT_EQ(outcome.wait_for(std::chrono::seconds(10)), std::future_status::ready)
        << "the acquire in flight never completed";
    EXPECT_EQ(outcome.get(), redlock::errc::cancelled);

    // The I/O thread ends by itself once what was in flight has finished, and frees the
    // io_context only then (a use-after-free here is what ASan would report).
    EXPECT_TRUE(thread_ended(io_thread));
}

TEST(blocking_client, destroyed_from_another_thread_joins_its_io_thread) {
    pid_t io_thread = 0;
    {
        redlock::blocking_client client(unreachable_node());
        io_thread = io_thread_of(client);
        std::error_code ec;
        redlock::lock_options options;
        options.retry.max_attempts = 1;
        client.acquire("k", options, ec);
        EXPECT_EQ(ec, redlock::errc::quorum_unreachable);
    }
    EXPECT_TRUE(thread_ended(io_thread));
}

} // namespace
