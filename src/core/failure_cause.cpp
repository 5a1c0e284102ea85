#include "core/failure_cause.hpp"

#include "core/tally.hpp"
#include "redlock/error.hpp"

namespace redlock::detail {

std::error_code failure_cause(std::error_code decided, const std::vector<node_vote>& votes) {
    if (decided != errc::quorum_unreachable) {
        return decided;
    }
    // Decisive quarantine: had the quarantined nodes granted, a quorum was still possible
    // (nodes not answered yet when the round was decided could still have granted).
    std::size_t possible = 0;
    std::size_t quarantined = 0;
    for (const auto& vote : votes) {
        if (vote.outcome == node_outcome::granted || vote.outcome == node_outcome::pending) {
            ++possible;
        } else if (vote.error == errc::node_quarantined) {
            ++quarantined;
        }
    }
    if (quarantined > 0 && possible + quarantined >= tally::quorum_of(votes.size())) {
        return make_error_code(errc::nodes_quarantined);
    }
    return decided;
}

} // namespace redlock::detail
