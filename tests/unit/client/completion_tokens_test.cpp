// Every completion token type against a failing operation: the error comes first as a
// boost::system::error_code, so use_future and a plain use_awaitable throw as every Asio
// operation does, and as_tuple gets the error instead. A bad key fails without any server.
#include <redlock/client.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/system/system_error.hpp>

#include <gtest/gtest.h>

#include <type_traits>

#include <exception>
#include <optional>
#include <string>

namespace {

namespace asio = boost::asio;
using redlock::errc;

redlock::client_config unreachable() {
    redlock::client_config config;
    config.nodes = {"127.0.0.1:1"};
    return config;
}

const std::string bad_key; // empty: refused before anything is sent

TEST(completion_tokens, callback_gets_the_error_first) {
    asio::io_context io;
    redlock::client client(io.get_executor(), unreachable());
    std::optional<boost::system::error_code> got;
    client.async_acquire(bad_key, {},
                         [&](boost::system::error_code ec, redlock::acquire_result) { got = ec; });
    io.run();
    ASSERT_TRUE(got);
    EXPECT_EQ(*got, errc::invalid_argument);
    // The same error as a std::error_code: comparable with the enum both ways.
    const std::error_code as_std = *got;
    EXPECT_EQ(as_std, errc::invalid_argument);
    EXPECT_EQ(&as_std.category(), &redlock::error_category());
}

TEST(completion_tokens, callback_taking_std_error_code_still_works) {
    asio::io_context io;
    redlock::client client(io.get_executor(), unreachable());
    std::error_code got;
    client.async_acquire(bad_key, {},
                         [&](std::error_code ec, redlock::acquire_result) { got = ec; });
    io.run();
    EXPECT_EQ(got, errc::invalid_argument);
}

TEST(completion_tokens, use_future_throws_system_error_with_the_code) {
    asio::io_context io;
    redlock::client client(io.get_executor(), unreachable());
    auto acquired = client.async_acquire(bad_key, {}, asio::use_future);
    auto released = client.async_release(redlock::lock{}, asio::use_future);
    io.run();
    try {
        acquired.get();
        FAIL() << "a failed acquire must throw through use_future";
    } catch (const boost::system::system_error& e) {
        EXPECT_EQ(e.code(), errc::invalid_argument);
    }
    EXPECT_THROW(released.get(), boost::system::system_error);
}

TEST(completion_tokens, use_future_throws_client_closed_after_close) {
    asio::io_context io;
    redlock::client client(io.get_executor(), unreachable());
    client.close();
    auto acquired = client.async_acquire("k", {}, asio::use_future);
    io.run();
    try {
        acquired.get();
        FAIL() << "an acquire after close() must throw through use_future";
    } catch (const boost::system::system_error& e) {
        EXPECT_EQ(e.code(), errc::client_closed);
        // What std::system_error users catch compares too.
        EXPECT_EQ(std::error_code(e.code()), errc::client_closed);
    }
}

// `co_await c.async_acquire(key, {}, asio::use_awaitable)`: GCC 12 destroys a `{}` temporary
// of a type that is not trivially destructible twice inside a co_await expression (a free of
// memory never allocated, seen when lock_options briefly held a std::string). The options
// types stay trivially destructible so that this common call stays safe.
static_assert(std::is_trivially_destructible_v<redlock::lock_options>);
static_assert(std::is_trivially_destructible_v<redlock::renewal_options>);

TEST(completion_tokens, use_awaitable_throws) {
    asio::io_context io;
    redlock::client client(io.get_executor(), unreachable());
    std::optional<boost::system::error_code> caught;
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
            try {
                co_await client.async_acquire(bad_key, {}, asio::use_awaitable);
            } catch (const boost::system::system_error& e) {
                caught = e.code();
            }
        },
        asio::detached);
    io.run();
    ASSERT_TRUE(caught) << "a failed acquire must throw through use_awaitable";
    EXPECT_EQ(*caught, errc::invalid_argument);
}

TEST(completion_tokens, use_awaitable_with_as_tuple_does_not_throw) {
    asio::io_context io;
    redlock::client client(io.get_executor(), unreachable());
    std::optional<boost::system::error_code> got;
    std::exception_ptr thrown;
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
            auto [ec, result] =
                co_await client.async_acquire(bad_key, {}, asio::as_tuple(asio::use_awaitable));
            got = ec;
            EXPECT_FALSE(result.message.empty());
        },
        [&](std::exception_ptr e) { thrown = e; });
    io.run();
    EXPECT_FALSE(thrown);
    ASSERT_TRUE(got);
    EXPECT_EQ(*got, errc::invalid_argument);
}

TEST(completion_tokens, deferred_runs_when_given_its_handler) {
    asio::io_context io;
    redlock::client client(io.get_executor(), unreachable());
    auto op = client.async_acquire(bad_key, {}, asio::deferred);
    std::optional<boost::system::error_code> got;
    io.poll();
    EXPECT_FALSE(got) << "nothing starts before the deferred operation is invoked";
    std::move(op)([&](boost::system::error_code ec, redlock::acquire_result) { got = ec; });
    io.restart(); // the poll() above ran out of work, which stops the io_context
    io.run();
    ASSERT_TRUE(got);
    EXPECT_EQ(*got, errc::invalid_argument);
}

} // namespace
