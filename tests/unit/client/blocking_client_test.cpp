#include <redlock/blocking_client.hpp>

#include <gtest/gtest.h>

#include <boost/asio/post.hpp>

#include <chrono>
#include <filesystem>
#include <future>
#include <iterator>
#include <memory>
#include <thread>

namespace {

std::size_t threads_of_this_process() {
    const std::filesystem::directory_iterator tasks("/proc/self/task");
    return static_cast<std::size_t>(std::distance(begin(tasks), end(tasks)));
}

redlock::client_config unreachable_node() {
    redlock::client_config config;
    config.nodes = {"127.0.0.1:1"}; // nothing listens: connects are refused at once
    return config;
}

TEST(blocking_client, may_be_destroyed_by_a_handler_on_its_own_io_thread) {
    const auto threads_before = threads_of_this_process();
    auto owned = std::make_unique<redlock::blocking_client>(unreachable_node());
    auto& async = owned->async_client();
    // Work in flight when the destructor runs: an acquire retrying against a dead node.
    redlock::lock_options options;
    options.retry.max_attempts = 0;
    options.retry.wait_budget = std::chrono::seconds(5);
    std::promise<std::error_code> acquired;
    async.async_acquire(
        "k", options, [&](std::error_code ec, redlock::acquire_result) { acquired.set_value(ec); });
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
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (threads_of_this_process() > threads_before && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_LE(threads_of_this_process(), threads_before);
}

TEST(blocking_client, destroyed_from_another_thread_joins_its_io_thread) {
    const auto threads_before = threads_of_this_process();
    {
        redlock::blocking_client client(unreachable_node());
        std::error_code ec;
        redlock::lock_options options;
        options.retry.max_attempts = 1;
        client.acquire("k", options, ec);
        EXPECT_EQ(ec, redlock::errc::quorum_unreachable);
    }
    EXPECT_LE(threads_of_this_process(), threads_before);
}

} // namespace
