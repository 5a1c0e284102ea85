#ifndef REDLOCK_VOTE_HPP
#define REDLOCK_VOTE_HPP

#include <chrono>
#include <cstddef>
#include <string>
#include <system_error>

namespace redlock {

/// What one node answered to one command of an operation.
enum class node_outcome {
    /// The node did what was asked: SET NX succeeded, the key was deleted or extended.
    granted,
    /// The node answered, but the key holds another token (or none): nothing changed.
    refused,
    /// No usable answer; `node_vote::error` says why.
    failed,
    /// Not answered yet when the operation was decided: it did not wait for this node. For a
    /// release, that node's delete finishes in the background (it may still succeed or fail;
    /// the metrics observer and the log hear how, the result does not).
    pending,
};

/// Per-node detail carried by every operation result.
struct node_vote {
    std::size_t node = 0;                         ///< index into client_config::nodes
    node_outcome outcome = node_outcome::pending; ///< what the node did
    /// Set when outcome is failed: errc::node_timeout, connection_failed, server_error,
    /// unexpected_reply, node_backlogged, or, for a grant that does not count,
    /// node_quarantined, duplicate_node or restarts_undetectable.
    std::error_code error;
    /// The server's own error text (`READONLY You can't write...`, `OOM ...`), the
    /// connection's error text, or why a grant did not count; empty otherwise.
    std::string server_message;
    /// From sending the command to its reply (or to the timeout).
    std::chrono::microseconds latency{0};
};

} // namespace redlock

#endif
