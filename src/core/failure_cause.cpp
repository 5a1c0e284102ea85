#include "core/failure_cause.hpp"

#include "core/tally.hpp"
#include "redlock/error.hpp"

namespace redlock::detail {

std::error_code failure_cause(std::error_code decided, const std::vector<node_vote>& votes) {
    if (decided != errc::quorum_unreachable) {
        return decided;
    }
    // Decisive quarantine: the nodes that granted and the quarantined ones (whose grants
    // did not count) are a majority. Nodes that never answered count for neither: nobody
    // knows what they would have said.
    std::size_t granted = 0;
    std::size_t quarantined = 0;
    std::size_t mismatched = 0;
    for (const auto& vote : votes) {
        if (vote.outcome == node_outcome::granted) {
            ++granted;
        } else if (vote.error == errc::node_quarantined) {
            ++quarantined;
        } else if (vote.error == errc::lock_mismatch) {
            ++mismatched;
        }
    }
    // A majority holding another kind of lock under the key answers so for as long as that
    // lock lives: a usage error, which waiting or retrying does not mend. (One node alone
    // saying so is one node's view, reported in its vote.)
    if (mismatched >= tally::quorum_of(votes.size())) {
        return make_error_code(errc::lock_mismatch);
    }
    if (quarantined > 0 && granted + quarantined >= tally::quorum_of(votes.size())) {
        return make_error_code(errc::nodes_quarantined);
    }
    return decided;
}

} // namespace redlock::detail
