#ifndef REDLOCK_LOCK_HPP
#define REDLOCK_LOCK_HPP

#include <redlock/config.hpp>
#include <redlock/export.hpp>
#include <redlock/vote.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace redlock {

/// A lock granted by a quorum. A plain value: copying it does not copy ownership in
/// any meaningful sense, it only copies what release and extend need (key and token).
class REDLOCK_API lock {
public:
    /// The monotonic clock validity is measured on.
    using clock = std::chrono::steady_clock;

    /// An empty lock: held() is false.
    lock() = default;
    /// A lock as a grant makes it. Built by hand (from a key and token kept elsewhere), it can
    /// be extended or released by a client, whose nodes still check the token.
    lock(std::string key, std::string token, clock::time_point valid_until, lock_options options,
         std::uint64_t fencing_token = 0);

    /// False for a default-constructed lock or the lock slot of a failed acquire.
    bool held() const noexcept { return !token_.empty(); }
    /// The key locked on every node.
    const std::string& key() const noexcept { return key_; }
    /// 128 random bits, hex encoded; the same on every node.
    const std::string& token() const noexcept { return token_; }
    /// Monotonic instant until which the quorum guarantees exclusivity, drift included.
    clock::time_point valid_until() const noexcept { return valid_until_; }
    /// Time left before valid_until(); zero or negative once it has passed.
    clock::duration remaining(clock::time_point now = clock::now()) const noexcept {
        return valid_until_ - now;
    }
    /// For a lock acquired with lock_options::fencing: a token greater than that of every
    /// earlier holder of the key, to present to the protected resource (see fencing.hpp).
    /// The same for the whole life of the lock, extends included. 0 without fencing.
    std::uint64_t fencing_token() const noexcept { return fencing_token_; }
    /// The options the lock was acquired with; extend reuses ttl and timeouts.
    const lock_options& options() const noexcept { return options_; }

private:
    std::string key_;
    std::string token_;
    clock::time_point valid_until_{};
    lock_options options_;
    std::uint64_t fencing_token_ = 0;
};

/// What async_acquire reports. `lock` is held only when the error is empty.
struct acquire_result {
    /// The granted lock; empty (not held()) on failure.
    redlock::lock lock;
    /// Votes of the last attempt, one per node in node order.
    std::vector<node_vote> votes;
    /// Attempts made, the first included.
    unsigned attempts = 0;
    /// A human-readable explanation of a failure (which argument, which nodes).
    std::string message;
};

/// What async_extend reports. On success `lock` carries the new validity.
struct extend_result {
    /// The lock with its new validity on success.
    redlock::lock lock;
    /// One vote per node, in node order.
    std::vector<node_vote> votes;
    /// A human-readable explanation of a failure.
    std::string message;
};

/// What async_release reports.
struct release_result {
    /// Nodes on which our token was found and deleted.
    std::size_t released = 0;
    /// One vote per node, in node order.
    std::vector<node_vote> votes;
    /// A human-readable explanation of a failure.
    std::string message;
};

} // namespace redlock

#endif
