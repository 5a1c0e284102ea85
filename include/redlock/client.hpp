#ifndef REDLOCK_CLIENT_HPP
#define REDLOCK_CLIENT_HPP

#include <redlock/config.hpp>
#include <redlock/error.hpp>
#include <redlock/export.hpp>
#include <redlock/lock.hpp>
#include <redlock/lock_keys.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace redlock {

namespace detail {
class client_impl;
struct client_access;
} // namespace detail
class watchdog;

/// The asynchronous Redlock coordinator: one connection per node, every command of every
/// operation pipelined on it, all state confined to a strand of the given executor.
///
/// Completion tokens: any Asio token works (callbacks, `asio::use_future`,
/// `asio::use_awaitable`, `asio::deferred`). Handlers run on their associated executor.
/// The error comes first as a boost::system::error_code, as in every Asio operation: a failed
/// operation makes `use_future`'s future and a plain `use_awaitable` throw
/// boost::system::system_error (wrap the token in `asio::as_tuple` to get the error instead).
/// It compares equal to redlock::errc values and converts to std::error_code.
/// Thread safety: the initiating functions may be called from any thread.
class REDLOCK_API client {
public:
    /// The executor given at construction; handlers without one of their own run on it.
    using executor_type = boost::asio::any_io_executor;
    /// Completion signature of async_acquire.
    using acquire_signature = void(boost::system::error_code, acquire_result);
    /// Completion signature of async_extend.
    using extend_signature = void(boost::system::error_code, extend_result);
    /// Completion signature of async_release.
    using release_signature = void(boost::system::error_code, release_result);
    /// Completion signature of async_inspect.
    using inspect_signature = void(boost::system::error_code, inspect_result);

    /// Connects lazily, on the first command for each node.
    /// @throws std::system_error with errc::invalid_argument and the reason when `config`
    ///         is invalid (no nodes, malformed or duplicate addresses, bad durations).
    client(executor_type executor, client_config config);
    /// close(), then lets go of the client: what close() lets finish still finishes.
    ~client();
    client(const client&) = delete;
    client& operator=(const client&) = delete;

    /// Shuts the client down: operations in flight complete with errc::cancelled (an
    /// interrupted acquire still sends its cleanup), every watchdog of this client stops and
    /// its loss handler hears errc::cancelled, and the connections close once the commands
    /// already sent (those cleanups, a release issued just before) were answered, or after
    /// the largest node_timeout in use. Then nothing of the client keeps the executor busy:
    /// `io_context::run()` returns once the rest of the program's work is done. Operations
    /// started afterwards complete with errc::client_closed without sending anything.
    /// Returns at once (the shutdown runs on the client's strand). Safe from any thread,
    /// also from a handler; a second call does nothing. Never throws.
    void close() noexcept;

    /// The executor given at construction.
    executor_type get_executor() const noexcept { return executor_; }
    /// The number of nodes in client_config::nodes.
    std::size_t node_count() const noexcept;
    /// node_count() / 2 + 1.
    std::size_t quorum() const noexcept;

    /// Takes `keys` (one key or several: see lock_keys) on a quorum of nodes: SET key token
    /// NX PX ttl to every node at once, decided as soon as the outcome is known, retried per
    /// `options.retry`.
    ///
    /// Errors: contention, quorum_unreachable, nodes_quarantined, validity_expired, cancelled,
    /// invalid_argument (then nothing was sent; the result's message says why), client_closed.
    ///
    /// @par Per-operation cancellation
    /// All cancellation types. The attempt in flight is cleaned up like a failed one (the
    /// compare-and-delete goes to every node that may hold the key), then the operation
    /// completes with errc::cancelled, even if a quorum had just been reached.
    ///
    /// `options.mode` picks what the key admits: one holder (exclusive, the default), many
    /// readers (shared), or `options.permits` holders (permit); see lock_mode. Errors also:
    /// lock_mismatch (the key holds another kind of lock).
    ///
    /// Several keys (`{"a", "b"}`, a vector) are taken at once, all or nothing: each node
    /// grants only if it could take every key (one script per node, every key in its KEYS, so keys
    /// sharing a hash tag work through proxies), and the lock is granted when a quorum of nodes
    /// granted. The keys are taken in canonical order (sorted bytewise; lock::keys() returns them
    /// so); a key given twice is errc::invalid_argument. Extend, release, renewal and fencing work
    /// on the whole set; a fenced lock gets one token, above every earlier holder of any of its
    /// keys. Exclusive locks only.
    template <typename CompletionToken>
    auto async_acquire(lock_keys keys, const lock_options& options, CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, acquire_signature>(
            [this](auto handler, std::vector<std::string> keys, lock_options options) {
                start_acquire(std::move(keys), std::move(options), std::move(handler));
            },
            token, std::move(keys).get(), options);
    }

    /// Pushes the expiry of a held lock to `ttl` from now with a compare-and-pexpire on
    /// every node. Succeeds with a quorum; the new validity is measured from this call.
    /// A lock already past its validity is never extended (errc::lock_lost).
    ///
    /// Errors: lock_lost, quorum_unreachable, nodes_quarantined, validity_expired, cancelled,
    /// invalid_argument, client_closed.
    ///
    /// @par Per-operation cancellation
    /// All cancellation types: completes at once with errc::cancelled; commands already
    /// sent still run on the nodes.
    template <typename CompletionToken>
    auto async_extend(const lock& held, std::chrono::milliseconds ttl, CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, extend_signature>(
            [this](auto handler, lock held, std::chrono::milliseconds ttl) {
                start_extend(std::move(held), ttl, std::move(handler));
            },
            token, held, ttl);
    }

    /// Extends by the ttl the lock was acquired with.
    template <typename CompletionToken>
    auto async_extend(const lock& held, CompletionToken&& token) {
        return async_extend(held, held.options().ttl, std::forward<CompletionToken>(token));
    }

    /// Deletes the key on every node where it still carries our token, never elsewhere.
    /// One round, bounded by the lock's node_timeout, never retried. Completes as soon as a
    /// quorum confirmed the delete (or the outcome is otherwise certain); the slower nodes'
    /// deletes finish in the background, stay `pending` in the result's votes, and are
    /// awaited by close().
    ///
    /// Errors: lock_lost (a quorum answered but fewer held our token: the lock had already
    /// expired or been taken), quorum_unreachable, cancelled, invalid_argument.
    ///
    /// @par Per-operation cancellation
    /// All cancellation types: completes at once with errc::cancelled; the deletes already
    /// sent still run on the nodes.
    template <typename CompletionToken>
    auto async_release(const lock& held, CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, release_signature>(
            [this](auto handler, lock held) { start_release(std::move(held), std::move(handler)); },
            token, held);
    }

    /// Reads what every node holds for `key`, with read-only commands (GET, PTTL, HGETALL and
    /// TIME, pipelined on each node's connection: a reader ACL user needs +get, +pttl and
    /// +info, and +hgetall and +time to see readers and permit holders) and reports, per
    /// node, the exclusive holder's token or the shared/permit holders with their time left,
    /// a waiting writer's mark, the remaining PTTL, whether and how the node answered, and
    /// whether its votes count now (restart quarantine, same server as another node). Waits
    /// for each node up to `timeout` (which includes a first connect), never for longer. What
    /// `redlock status` prints.
    ///
    /// Errors: invalid_argument (a bad key or timeout), cancelled, client_closed; a node that
    /// fails is a failure in its view only.
    ///
    /// @par Per-operation cancellation
    /// All cancellation types: completes at once with errc::cancelled.
    template <typename CompletionToken>
    auto async_inspect(std::string_view key, std::chrono::milliseconds timeout,
                       CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, inspect_signature>(
            [this](auto handler, std::string key, std::chrono::milliseconds timeout) {
                start_inspect(std::move(key), timeout, std::move(handler));
            },
            token, std::string(key), timeout);
    }

    /// Waits for each node up to the connect_timeout plus 200 ms: enough for a first connect
    /// and one round trip on a local network.
    template <typename CompletionToken>
    auto async_inspect(std::string_view key, CompletionToken&& token) {
        return async_inspect(key, default_inspect_timeout(), std::forward<CompletionToken>(token));
    }

    /// For operators: deletes the lock state of every key of `keys` on every node, whatever
    /// token holds it (an exclusive holder, readers, a semaphore's holders): a string with an
    /// expiry, or a hash with a lock's `mode` field, whatever else it is; never another type,
    /// a string without expiry, or a fencing counter. Name only lock keys. DANGEROUS: the holders
    /// are not told and go on as if they held the lock, so a new holder can overlap with
    /// them; use it only when the holder is known to be gone (`redlock release --force`).
    /// Waits for every node up to `timeout`. `release_result::released` counts the nodes
    /// where something was deleted; each vote is granted (deleted), refused (nothing there)
    /// or failed.
    ///
    /// Errors: quorum_unreachable (fewer than a quorum of nodes answered: the lock may still
    /// be held), invalid_argument, cancelled, client_closed.
    ///
    /// @par Per-operation cancellation
    /// All cancellation types: completes at once with errc::cancelled; the deletes already
    /// sent still run on the nodes.
    template <typename CompletionToken>
    auto async_force_release(std::vector<std::string> keys, std::chrono::milliseconds timeout,
                             CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, release_signature>(
            [this](auto handler, std::vector<std::string> keys, std::chrono::milliseconds t) {
                start_force_release(std::move(keys), t, std::move(handler));
            },
            token, std::move(keys), timeout);
    }

private:
    friend class watchdog;
    friend struct detail::client_access;

    client(executor_type executor, std::shared_ptr<detail::client_impl> impl);

    void start_acquire(std::vector<std::string> keys, lock_options options,
                       boost::asio::any_completion_handler<acquire_signature> handler);
    void start_extend(lock held, std::chrono::milliseconds ttl,
                      boost::asio::any_completion_handler<extend_signature> handler);
    void start_release(lock held, boost::asio::any_completion_handler<release_signature> handler);
    void start_inspect(std::string key, std::chrono::milliseconds timeout,
                       boost::asio::any_completion_handler<inspect_signature> handler);
    void start_force_release(std::vector<std::string> keys, std::chrono::milliseconds timeout,
                             boost::asio::any_completion_handler<release_signature> handler);
    std::chrono::milliseconds default_inspect_timeout() const noexcept;

    executor_type executor_;
    std::shared_ptr<detail::client_impl> impl_;
};

} // namespace redlock

#endif
