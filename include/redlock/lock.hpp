#ifndef REDLOCK_LOCK_HPP
#define REDLOCK_LOCK_HPP

#include <redlock/config.hpp>
#include <redlock/export.hpp>
#include <redlock/vote.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace redlock {

namespace detail {
struct lock_access;
}

/// A lock granted by a quorum. A plain value: copying it does not copy ownership in
/// any meaningful sense, only what release and extend need. Copies share the keys, token,
/// options and fencing token, which never change (a copy costs a reference count, not an
/// allocation, and may go to another thread); the validity is each copy's own.
class REDLOCK_API lock {
public:
    /// The monotonic clock validity is measured on.
    using clock = std::chrono::steady_clock;

    /// An empty lock: held() is false.
    lock() = default;
    /// A lock as a grant makes it. Built by hand (from a key and token kept elsewhere), it can
    /// be extended or released by a client, whose nodes still check the token. `options`
    /// must carry the mode (and permit count) the lock was acquired with.
    lock(std::string key, std::string token, clock::time_point valid_until, lock_options options,
         std::uint64_t fencing_token = 0);
    /// A lock over several keys at once, `keys` in canonical (sorted) order.
    lock(std::vector<std::string> keys, std::string token, clock::time_point valid_until,
         lock_options options, std::uint64_t fencing_token = 0);

    /// False for a default-constructed lock or the lock slot of a failed acquire.
    bool held() const noexcept { return fixed_ && !fixed_->token.empty(); }
    /// The key locked on every node; for a lock over several keys, the first of keys().
    const std::string& key() const noexcept;
    /// Every key the lock holds, in canonical order (sorted bytewise): one for a single-key
    /// lock.
    const std::vector<std::string>& keys() const noexcept;
    /// 128 random bits, hex encoded; the same on every node.
    const std::string& token() const noexcept;
    /// Monotonic instant until which the quorum guarantees exclusivity, drift included.
    clock::time_point valid_until() const noexcept { return valid_until_; }
    /// Time left before valid_until(); zero or negative once it has passed.
    clock::duration remaining(clock::time_point now = clock::now()) const noexcept {
        return valid_until_ - now;
    }
    /// For a lock acquired with lock_options::fencing: a token greater than that of every
    /// earlier holder of the key, to present to the protected resource (see fencing.hpp).
    /// The same for the whole life of the lock, extends included. 0 without fencing.
    std::uint64_t fencing_token() const noexcept;
    /// The options the lock was acquired with; extend reuses ttl and timeouts.
    const lock_options& options() const noexcept;

private:
    friend struct detail::lock_access;

    /// What a lock is from its grant to its release; only the validity moves.
    struct fixed_part {
        std::vector<std::string> keys;
        std::string token;
        lock_options options;
        std::uint64_t fencing_token = 0;
    };

    std::shared_ptr<const fixed_part> fixed_; ///< null for an empty lock
    clock::time_point valid_until_{};
};

/// What async_acquire reports. `lock` is held only when the error is empty.
struct acquire_result {
    /// The granted lock; empty (not held()) on failure.
    redlock::lock lock;
    /// Votes of the last attempt, one per node in node order.
    std::vector<node_vote> votes;
    /// Attempts made, the first included: 0 when older acquires of its client came first
    /// and it ended without asking any node (errc::contention), or was cancelled before.
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
    /// Nodes on which our token was found and deleted by the time the release completed (at
    /// least a quorum on success); nodes still `pending` in `votes` may delete it afterwards.
    std::size_t released = 0;
    /// One vote per node, in node order.
    std::vector<node_vote> votes;
    /// A human-readable explanation of a failure.
    std::string message;
};

/// One holder of a shared or permit lock, as one node records it.
struct holder_view {
    std::string token; ///< the holder's token, as the node sent it
    /// Time left before the node drops the holder: its deadline minus the node's own clock.
    /// Zero or negative once past (the scripts purge such holders on their next write).
    std::chrono::milliseconds left{0};
};

/// One node's view of a key, as client::async_inspect found it. What comes from the node
/// (`holder`, the messages) is its bytes as sent, bounded by client_config::max_reply_size:
/// escape them before printing.
struct node_view {
    std::size_t node = 0; ///< index into client_config::nodes
    /// Empty when the node told what the key holds; else why it did not:
    /// node_timeout (no answer in time), connection_failed, node_backlogged, cancelled (the
    /// client closed), server_error (an error reply such as NOPERM, in `message`),
    /// unexpected_reply (a malformed answer), or lock_mismatch (the key holds a value that is
    /// no lock of this library, said in `message`).
    std::error_code error;
    std::string message; ///< the text that goes with `error`: the error reply, or what failed
    /// The token of the exclusive holder; empty when the key does not exist, is held by
    /// shared or permit holders (see `holders`), or `error` is set.
    std::optional<std::string> holder;
    /// What the key holds on this node: exclusive for an exclusive holder or nothing;
    /// shared or permit when readers or a semaphore's holders are recorded there.
    lock_mode mode = lock_mode::exclusive;
    /// lock_mode::permit: the semaphore's permit count as this node records it.
    unsigned permits = 0;
    /// lock_mode::shared and permit: every holder recorded on the node, in the node's order.
    std::vector<holder_view> holders;
    /// lock_mode::shared: how much longer a waiting writer's mark keeps new readers out;
    /// empty when no writer waits (or its mark has passed).
    std::optional<std::chrono::milliseconds> writer_waiting;
    /// What PTTL answered, when it answered with a number: the time the key has left,
    /// -1 ms for a key without expiry, -2 ms for a key that is gone. GET and PTTL run one
    /// right after the other on the node but not atomically: a key that expired in between
    /// is held per `holder` and gone per `pttl`.
    std::optional<std::chrono::milliseconds> pttl;
    /// From sending the inspection's commands to the node's answer to the first (GET);
    /// zero when it did not answer.
    std::chrono::microseconds latency{0};
    /// Why PTTL gave no number (the same errors as `error`), and its text.
    std::error_code pttl_error;
    std::string pttl_message; ///< the text that goes with `pttl_error`
    /// The server's run_id learnt on connect (INFO server), empty when unknown.
    std::string run_id;
    /// Set when an earlier node of the list has the same run_id: the same server under a
    /// second name, whose votes count once (errc::duplicate_node).
    std::optional<std::size_t> same_server_as;
    /// The restart quarantine: how long until the node's votes count again; empty when
    /// they count now (docs/safety.md).
    std::optional<std::chrono::milliseconds> quarantined_for;
    /// While quarantined: why, as the votes say it: "node restarted", "promoted to primary",
    /// "clock stepped by +2500 ms", "clock stepped back by 1500 ms (recorded on the node)"
    /// (docs/safety.md, "Node clocks"). Empty when the votes count.
    std::string quarantine_cause;
    /// While quarantined: what the quarantine's length rests on, "learned ceiling 500 ms
    /// from 4 nodes" (the TTL ceilings of a quorum of other nodes) or "fleet maximum; ceiling
    /// known on 1 of 3 nodes needed" (client_config::fleet_max_ttl), or why a ceiling was
    /// refused (docs/safety.md, "The TTL ceiling"). The votes say the same.
    std::string quarantine_basis;
    /// Set when the node's restarts and evictions cannot be detected (INFO refused): with
    /// the quarantine or the eviction veto on, its votes do not count
    /// (errc::restarts_undetectable).
    std::string restarts_undetectable;
    /// Set when the node can evict keys ("can evict keys: maxmemory-policy volatile-ttl"),
    /// as its INFO memory said at the last connect or refresh: unless
    /// eviction_options::accept_evicting_nodes is on, its votes do not count
    /// (errc::node_can_evict).
    std::string can_evict;
    /// Set when the node's server is not a primary ("not a primary: INFO replication says
    /// role:slave"), as its INFO said at the last connect or refresh: its votes do not count
    /// (errc::node_not_primary).
    std::string not_primary;
};

/// What async_inspect reports: one view per node, in node order.
struct inspect_result {
    std::vector<node_view> nodes; ///< one per node, in node order
    /// Why the inspection failed as a whole (a bad key, a closed client), else empty.
    std::string message;
};

} // namespace redlock

#endif
