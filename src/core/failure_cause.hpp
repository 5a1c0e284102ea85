#ifndef REDLOCK_SRC_CORE_FAILURE_CAUSE_HPP
#define REDLOCK_SRC_CORE_FAILURE_CAUSE_HPP

#include "redlock/vote.hpp"

#include <system_error>
#include <vector>

namespace redlock::detail {

/// The error a failed round reports: `decided` (what its state machine concluded), except
/// that a quorum missed only because nodes in restart quarantine may not vote yet (they and
/// the nodes that granted are a majority) is errc::nodes_quarantined: the
/// caller learns that waiting, not fixing a node, is what helps; and a quorum missed while
/// a majority reported errc::lock_mismatch is that usage error. Changes only the report; the
/// round failed either way.
std::error_code failure_cause(std::error_code decided, const std::vector<node_vote>& votes);

} // namespace redlock::detail

#endif
