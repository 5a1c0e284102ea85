// The README's example: a lock taken and released from a coroutine, then with the blocking
// facade, on the five local nodes (compose/local-nodes.sh up; wait out their restart
// quarantine, the fleet's maximum TTL, 60 s by default, or see "quarantined" in the error).
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <exception>
#include <iostream>

namespace asio = boost::asio;
using namespace std::chrono_literals;

// Asynchronous, here as a coroutine.
asio::awaitable<void> reserve(redlock::client& locks) {
    redlock::lock_options options;
    options.ttl = 30s; // at least 3x the critical section's P99
    auto [ec, got] =
        co_await locks.async_acquire("stock:sku-1", options, asio::as_tuple(asio::use_awaitable));
    if (ec == redlock::errc::contention) {
        co_return; // someone else holds it
    }
    if (ec) {
        throw boost::system::system_error(ec, got.message); // the message names the nodes
    }
    // ... critical section, finished before got.lock.valid_until() ...
    co_await locks.async_release(got.lock, asio::use_awaitable); // throws if it fails
}

// Blocking, for thread-per-request code.
void reserve_blocking(redlock::blocking_client& locks) {
    std::error_code ec;
    if (auto held = locks.try_lock("stock:sku-1", 30s, /*wait*/ 2s, /*retries*/ 10, ec)) {
        redlock::scoped_lock guard(locks, std::move(*held)); // released at scope exit
        // ... critical section ...
    } else {
        std::cerr << "not acquired: " << ec.message() << '\n';
    }
}

int main() {
    redlock::client_config config;
    // Also "redis://user:password@host:6379/0", "rediss://host:6380", "unix:///run/redis.sock".
    config.nodes = {"127.0.0.1:7001", "127.0.0.1:7002", "127.0.0.1:7003", "127.0.0.1:7004",
                    "127.0.0.1:7005"};

    asio::io_context io;
    redlock::client locks(io.get_executor(), config);
    asio::co_spawn(io, reserve(locks), [&](std::exception_ptr failed) {
        locks.close(); // cancels what is in flight, lets queued cleanups finish, disconnects
        if (failed) {
            try {
                std::rethrow_exception(failed);
            } catch (const std::exception& e) {
                std::cerr << "not acquired: " << e.what() << '\n';
            }
        }
    });
    io.run(); // returns once the client is closed and nothing else is pending

    redlock::blocking_client blocking(config);
    reserve_blocking(blocking);
}
