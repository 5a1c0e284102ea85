#ifndef REDLOCK_SRC_TALLY_HPP
#define REDLOCK_SRC_TALLY_HPP

#include "redlock/vote.hpp"

#include <cstddef>
#include <optional>
#include <vector>

namespace redlock::detail {

/// Counts one round of votes, one per node, and says whether a majority is reached,
/// still possible, or out of reach.
class tally {
public:
    explicit tally(std::size_t nodes);

    static std::size_t quorum_of(std::size_t nodes) noexcept { return nodes / 2 + 1; }
    std::size_t quorum() const noexcept { return quorum_of(votes_.size()); }
    std::size_t nodes() const noexcept { return votes_.size(); }

    /// Records a node's vote; only a node's first vote counts. Returns whether it counted.
    bool record(std::size_t node, node_outcome outcome);
    /// Turns every missing vote into `failed` (the round's deadline passed).
    void fail_pending();

    bool has_voted(std::size_t node) const { return votes_.at(node).has_value(); }
    std::size_t granted() const noexcept { return granted_; }
    std::size_t refused() const noexcept { return refused_; }
    std::size_t failed() const noexcept { return failed_; }
    std::size_t pending() const noexcept { return votes_.size() - granted_ - refused_ - failed_; }

    bool reached() const noexcept { return granted_ >= quorum(); }
    bool impossible() const noexcept { return granted_ + pending() < quorum(); }
    /// Refusals alone rule the quorum out: even had every failed or pending node granted,
    /// there would be no majority. Distinguishes "held by another" from "nodes unreachable".
    bool refusals_decide() const noexcept { return granted_ + failed_ + pending() < quorum(); }

private:
    std::vector<std::optional<node_outcome>> votes_;
    std::size_t granted_ = 0;
    std::size_t refused_ = 0;
    std::size_t failed_ = 0;
};

} // namespace redlock::detail

#endif
