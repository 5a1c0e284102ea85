#ifndef REDLOCK_ERROR_HPP
#define REDLOCK_ERROR_HPP

#include <redlock/export.hpp>

#include <system_error>
#include <type_traits>

namespace redlock {

/// Every error this library reports. Operation results use the first group;
/// per-node votes use the second. Users branch on these, so each stays distinct.
enum class errc {
    // Operation outcomes.
    /// Another holder owns the lock on enough nodes that no quorum was possible
    /// even had every failing node answered; or (no attempt made, attempts 0) older
    /// acquires of this client for the same keys came first: they still waited, or held the
    /// keys, when this one's wait budget or max_attempts ran out (docs/design.md, "No lost
    /// wake-up" and "Herd control and fairness").
    contention = 1,
    /// Too few nodes answered usefully (down, timed out, erroring) to form a quorum.
    quorum_unreachable,
    /// A quorum agreed, but too late: the remaining validity was below the minimum.
    validity_expired,
    /// The lock is no longer held: it expired or another holder took it over.
    lock_lost,
    /// The operation was cancelled through its cancellation slot or by client shutdown.
    cancelled,
    /// An argument or option was rejected before anything was sent to a node.
    invalid_argument,

    // Per-node outcomes.
    /// The node did not answer within the per-node timeout.
    node_timeout,
    /// The connection to the node could not be established or broke.
    connection_failed,
    /// The node answered with an error reply (READONLY, OOM, LOADING, BUSY, NOPERM...).
    server_error,
    /// The node answered with a reply this library did not expect.
    unexpected_reply,
    /// The node already has too many commands in flight; the command was not sent.
    node_backlogged,
    /// The node restarted recently and may have forgotten locks: its vote does not count.
    node_quarantined,
    /// The node is the same server (same run_id) as another node of this client, whose vote
    /// already counts for it: this one's does not.
    duplicate_node,
    /// The node's restarts and evictions cannot be detected (INFO refused, e.g. an ACL user
    /// without +info): with the quarantine or the eviction veto on, its vote does not count.
    restarts_undetectable,

    // Operation outcomes added later, after the per-node values.
    /// The operation was started after client::close() (or on a blocking_client after its
    /// close()): nothing was sent. Operations already in flight then complete with cancelled.
    client_closed,
    /// No quorum only because nodes that restarted recently may not vote yet (restart
    /// quarantine, see quarantine_options): they and the nodes that granted are a majority. Their
    /// votes say when they count again; retrying after that can succeed.
    nodes_quarantined,
    /// The key holds another kind of lock than the one asked for (a read-write lock's readers
    /// where a semaphore was asked for, a semaphore with another permit count) or a value that
    /// is no lock: a usage error, the same on every node. As a vote: that node's answer.
    lock_mismatch,
    /// Fenced acquire only: the fencing counters of the granting nodes cannot give the next
    /// token. One node's counter leads every other's by more than
    /// lock_options::max_counter_lead (a hostile or corrupted node, or honest nodes that lost
    /// that many raises), or the counter is at 2^64-1 (pushed there earlier). Nothing was
    /// raised; acquire_result::message names the node. Not retried: an operator repairs the
    /// counters (docs/safety.md).
    fencing_counter_refused,
    /// The node can evict keys (maxmemory set with a maxmemory-policy other than noeviction,
    /// or its INFO memory does not say), so it may forget a lock while it is held: its vote
    /// does not count unless eviction_options::accept_evicting_nodes is on.
    node_can_evict,
    /// The node's server is not a primary: its INFO replication says `role:slave` (a
    /// replica, maybe a writable one, or a primary demoted since the connect). Its vote
    /// does not count; a Sentinel node asks its Sentinels for the primary again.
    node_not_primary,
};

/// The category of every error_code this library produces.
REDLOCK_API const std::error_category& error_category() noexcept;

/// `e` as a std::error_code of error_category(); what makes `ec == errc::...` work.
inline std::error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), error_category()};
}

} // namespace redlock

// errc converts to std::error_code. (Hidden from Doxygen, which cannot scope it in std.)
/// @cond
template <>
struct std::is_error_code_enum<redlock::errc> : std::true_type {};
/// @endcond

#endif
