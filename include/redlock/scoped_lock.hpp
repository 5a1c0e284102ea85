#ifndef REDLOCK_SCOPED_LOCK_HPP
#define REDLOCK_SCOPED_LOCK_HPP

#include <redlock/blocking_client.hpp>
#include <redlock/config.hpp>
#include <redlock/export.hpp>
#include <redlock/lock.hpp>
#include <redlock/lock_keys.hpp>

#include <memory>
#include <stop_token>
#include <system_error>

namespace redlock {

/// Holds a lock for a scope and releases it when the scope ends. Its destructor never
/// throws: a failed release there is swallowed (the key expires by its TTL), so call
/// release() explicitly where the outcome matters, e.g. to learn of a lock_lost.
///
/// Given renewal_options, it also renews the lock while it is held (a watchdog that stops
/// with the guard, before the release): the scope may then outlast the TTL. stop_token() is
/// requested when the lock can no longer be trusted; check it (or register a
/// std::stop_callback) in the protected work.
class REDLOCK_API scoped_lock {
public:
    scoped_lock() = default;
    /// Acquires `keys` (one key or several, see lock_keys); on failure owns_lock() is false
    /// and `ec` says why.
    scoped_lock(blocking_client& client, lock_keys keys, const lock_options& options,
                std::error_code& ec);
    /// Acquires, then renews while held. Unusable `renewal` options are errc::invalid_argument
    /// before anything is acquired (check_renewal_options() says why).
    scoped_lock(blocking_client& client, lock_keys keys, const lock_options& options,
                const renewal_options& renewal, std::error_code& ec);
    /// Adopts a lock acquired elsewhere from `client`.
    scoped_lock(blocking_client& client, lock held) noexcept;
    ~scoped_lock();

    /// Takes over `other`'s lock (and its renewal); `other` no longer owns it.
    scoped_lock(scoped_lock&& other) noexcept;
    /// Releases the lock held (quietly, as the destructor does), then takes over `other`'s.
    scoped_lock& operator=(scoped_lock&& other) noexcept;
    scoped_lock(const scoped_lock&) = delete;
    scoped_lock& operator=(const scoped_lock&) = delete;

    /// Whether a lock is held and still to be released (also after a renewing guard's lock
    /// was lost: it is still to be released; see lost()).
    bool owns_lock() const noexcept { return client_ != nullptr && held_.held(); }
    /// owns_lock().
    explicit operator bool() const noexcept { return owns_lock(); }
    /// The lock held, with its validity as of the last renewal (empty when none is held).
    lock get() const;
    /// Whether the renewal found the lock can no longer be trusted (never for a guard that
    /// does not renew).
    bool lost() const noexcept;
    /// Requested once the lock can no longer be trusted; never for a guard that does not
    /// renew.
    std::stop_token stop_token() const noexcept;

    /// Releases now (after stopping the renewal); afterwards owns_lock() is false whatever
    /// the outcome. A renewing guard whose lock was lost returns errc::lock_lost.
    release_result release(std::error_code& ec);

private:
    struct renewal;

    void release_quietly() noexcept;

    blocking_client* client_ = nullptr;
    lock held_;
    std::unique_ptr<renewal> renewal_;
};

} // namespace redlock

#endif
