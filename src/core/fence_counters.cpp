#include "core/fence_counters.hpp"

#include <algorithm>
#include <limits>

namespace redlock::detail {

std::optional<counter_rejection> judge_counters(const std::vector<std::uint64_t>& counters,
                                                const std::vector<bool>& granted,
                                                std::uint64_t floor, std::uint64_t max_lead) {
    // Only the highest witness can lead the others: find it and the runner-up. The floor is
    // a witness too (what this client was granted before), so that a node whose counter is
    // honest but whose fellow granting nodes lost theirs does not read as a liar to a client
    // that remembers.
    std::optional<std::size_t> leader;
    std::uint64_t runner_up = floor;
    std::size_t granting = 0;
    for (std::size_t node = 0; node < counters.size(); ++node) {
        if (!granted[node]) {
            continue;
        }
        ++granting;
        const auto counter = counters[node];
        if (!leader || counter > counters[*leader]) {
            if (leader) {
                runner_up = std::max(runner_up, counters[*leader]);
            }
            leader = node;
        } else {
            runner_up = std::max(runner_up, counter);
        }
    }
    if (!leader) {
        return std::nullopt;
    }
    const auto highest = counters[*leader];
    if (highest == std::numeric_limits<std::uint64_t>::max()) {
        return counter_rejection{counter_rejection::kind::exhausted, *leader, highest, runner_up};
    }
    // A lone granting node (a one-node client) has no peer to be compared with: a fresh
    // client's floor of 0 says nothing against it.
    if (granting > 1 && highest > runner_up && highest - runner_up > max_lead) {
        return counter_rejection{counter_rejection::kind::leads, *leader, highest, runner_up};
    }
    return std::nullopt;
}

} // namespace redlock::detail
