#ifndef REDLOCK_BLOCKING_CLIENT_HPP
#define REDLOCK_BLOCKING_CLIENT_HPP

// Light on purpose (no Asio, no coroutines): thread-per-request code includes this in many
// files. The client underneath lives behind the pimpl; see docs/api.md for what each public
// header costs to include.
#include <redlock/config.hpp>
#include <redlock/error.hpp>
#include <redlock/export.hpp>
#include <redlock/lock.hpp>
#include <redlock/lock_keys.hpp>
#include <redlock/locked.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string_view>
#include <system_error>
#include <type_traits>

namespace redlock {

class client;
class watchdog;

/// The coordinator for thread-per-request code: owns an I/O thread running a client;
/// every call blocks the calling thread until its operation completes. Safe to call from
/// many threads at once; calls from inside a handler running on its own I/O thread are
/// refused with errc::invalid_argument (they would deadlock).
///
/// Errors come back in `std::error_code&` out-parameters, the standard library's type for
/// code without Asio; they compare with redlock::errc values like the asynchronous client's
/// boost::system::error_code does, and each converts to the other.
class REDLOCK_API blocking_client {
public:
    /// @throws std::system_error with errc::invalid_argument when `config` is invalid.
    explicit blocking_client(client_config config);
    /// close(), waits for the calls in progress on other threads to return (with_lock's work
    /// is told through its stop token), then joins the I/O thread once the cleanups close()
    /// let finish are done. No call may start once it has. Never throws. May also run in a
    /// handler on the I/O thread itself (a loss handler, a posted function): then that thread
    /// finishes what is in flight and ends on its own, after the destructor returned.
    ~blocking_client();
    blocking_client(const blocking_client&) = delete;
    blocking_client& operator=(const blocking_client&) = delete;

    /// client::close() on the client underneath: calls blocked on other threads return with
    /// errc::cancelled (a watchdog's stop token is requested), later calls return
    /// errc::client_closed at once. Returns without waiting; the destructor waits for the
    /// cleanups close() let finish (at most the largest node_timeout in use). Safe from any
    /// thread, idempotent, never throws.
    void close() noexcept;

    /// client::async_acquire, waited for: the error goes to `ec`, the result is returned.
    /// `keys` is one key or several taken at once (see lock_keys).
    acquire_result acquire(lock_keys keys, const lock_options& options, std::error_code& ec);
    /// client::async_extend to `ttl` from now, waited for; the error goes to `ec`.
    extend_result extend(const lock& held, std::chrono::milliseconds ttl, std::error_code& ec);
    /// Extends by the ttl the lock was acquired with, waited for; the error goes to `ec`.
    extend_result extend(const lock& held, std::error_code& ec);
    /// client::async_release, waited for; the error goes to `ec`.
    release_result release(const lock& held, std::error_code& ec);

    /// client::async_inspect: every node's view of `key`, waiting for each node up to
    /// `timeout` (by default the connect_timeout plus 200 ms).
    inspect_result inspect(std::string_view key, std::chrono::milliseconds timeout,
                           std::error_code& ec);
    /// inspect() with the default timeout.
    inspect_result inspect(std::string_view key, std::error_code& ec);

    /// A Redisson-style `tryLock(key, ttl, wait, retries)`: up to `retries` retries after the first
    /// attempt, none starting later than `wait` after the call. Empty on failure, with `ec`.
    std::optional<lock> try_lock(lock_keys keys, std::chrono::milliseconds ttl,
                                 std::chrono::milliseconds wait, unsigned retries,
                                 std::error_code& ec);
    /// acquire() with every option (mode, permits, fencing, retry), returning the lock or, on
    /// failure, nothing with `ec`.
    std::optional<lock> try_lock(lock_keys keys, const lock_options& options, std::error_code& ec);

    /// Acquires `keys` (one or several), renews the lock while `work(const watchdog&,
    /// std::stop_token)` runs on the calling thread, and always releases. The stop token is
    /// requested when the lock can no longer be trusted; the work should check it (or register a
    /// std::stop_callback) and stop touching the protected resource. Returns the work's value, or
    /// lock_lost (or cancelled on client shutdown) if the lock was lost, or the acquire's error. An
    /// exception from the work is rethrown after the release, unless the lock was lost.
    /// Include <redlock/watchdog.hpp> to use the watchdog inside the work.
    template <typename Work>
    auto with_lock(lock_keys keys, const lock_options& options, const renewal_options& renewal,
                   Work&& work)
        -> locked<std::invoke_result_t<Work&, const watchdog&, std::stop_token>> {
        using value_type = std::invoke_result_t<Work&, const watchdog&, std::stop_token>;
        locked<value_type> out;
        if constexpr (std::is_void_v<value_type>) {
            out.error = run_locked(std::move(keys), options, renewal, work, out.message);
        } else {
            std::optional<value_type> value;
            out.error = run_locked(
                std::move(keys), options, renewal,
                [&](const watchdog& dog, std::stop_token stop) {
                    value.emplace(work(dog, std::move(stop)));
                },
                out.message);
            if (!out.error) {
                out.value = std::move(value);
            }
        }
        return out;
    }

    /// The client underneath, for asynchronous use alongside (include <redlock/client.hpp>).
    client& async_client() noexcept;

private:
    std::error_code run_locked(lock_keys keys, const lock_options& options,
                               const renewal_options& renewal,
                               const std::function<void(const watchdog&, std::stop_token)>& work,
                               std::string& message);

    struct state;
    // Shared with the I/O thread, which may outlive this object (see the destructor).
    std::shared_ptr<state> state_;
};

} // namespace redlock

#endif
