#ifndef REDLOCK_SCOPED_LOCK_HPP
#define REDLOCK_SCOPED_LOCK_HPP

#include <redlock/blocking_client.hpp>
#include <redlock/export.hpp>
#include <redlock/lock.hpp>

#include <string_view>
#include <system_error>

namespace redlock {

/// Holds a lock for a scope and releases it when the scope ends. Its destructor never
/// throws: a failed release there is swallowed (the key expires by its TTL), so call
/// release() explicitly where the outcome matters, e.g. to learn of a lock_lost.
class REDLOCK_API scoped_lock {
public:
    scoped_lock() = default;
    /// Acquires; on failure owns_lock() is false and `ec` says why.
    scoped_lock(blocking_client& client, std::string_view key, const lock_options& options,
                std::error_code& ec);
    /// Adopts a lock acquired elsewhere from `client`.
    scoped_lock(blocking_client& client, lock held) noexcept;
    ~scoped_lock();

    /// Takes over `other`'s lock; `other` no longer owns it.
    scoped_lock(scoped_lock&& other) noexcept;
    /// Releases the lock held (quietly, as the destructor does), then takes over `other`'s.
    scoped_lock& operator=(scoped_lock&& other) noexcept;
    scoped_lock(const scoped_lock&) = delete;
    scoped_lock& operator=(const scoped_lock&) = delete;

    /// Whether a lock is held and still to be released.
    bool owns_lock() const noexcept { return client_ != nullptr && held_.held(); }
    /// owns_lock().
    explicit operator bool() const noexcept { return owns_lock(); }
    /// The lock held (empty when none is).
    const lock& get() const noexcept { return held_; }

    /// Releases now; afterwards owns_lock() is false whatever the outcome.
    release_result release(std::error_code& ec);

private:
    void release_quietly() noexcept;

    blocking_client* client_ = nullptr;
    lock held_;
};

} // namespace redlock

#endif
