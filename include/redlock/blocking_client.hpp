#ifndef REDLOCK_BLOCKING_CLIENT_HPP
#define REDLOCK_BLOCKING_CLIENT_HPP

#include <redlock/client.hpp>
#include <redlock/config.hpp>
#include <redlock/lock.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string_view>
#include <system_error>

namespace redlock {

/// The coordinator for thread-per-request code: owns an I/O thread running a client;
/// every call blocks the calling thread until its operation completes. Safe to call from
/// many threads at once; calls from inside a handler running on its own I/O thread are
/// refused with errc::invalid_argument (they would deadlock).
class blocking_client {
public:
    /// @throws std::system_error with errc::invalid_argument when `config` is invalid.
    explicit blocking_client(client_config config);
    /// Cancels what is in flight and joins the I/O thread. Never throws.
    ~blocking_client();
    blocking_client(const blocking_client&) = delete;
    blocking_client& operator=(const blocking_client&) = delete;

    acquire_result acquire(std::string_view key, const lock_options& options, std::error_code& ec);
    extend_result extend(const lock& held, std::chrono::milliseconds ttl, std::error_code& ec);
    extend_result extend(const lock& held, std::error_code& ec);
    release_result release(const lock& held, std::error_code& ec);

    /// The seeds' `tryLock(key, ttl, wait, retries)`: up to `retries` retries after the first
    /// attempt, none starting later than `wait` after the call. Empty on failure, with `ec`.
    std::optional<lock> try_lock(std::string_view key, std::chrono::milliseconds ttl,
                                 std::chrono::milliseconds wait, unsigned retries,
                                 std::error_code& ec);

    /// The client underneath, for asynchronous use alongside.
    client& async_client() noexcept;

private:
    struct state;
    std::unique_ptr<state> state_;
};

} // namespace redlock

#endif
