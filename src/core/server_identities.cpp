#include "core/server_identities.hpp"

#include <algorithm>
#include <utility>

namespace redlock::detail {

std::size_t server_identities::counted_through(std::size_t node, std::string_view run_id,
                                               const std::vector<std::string_view>& live) {
    auto& reported = reported_.at(node);
    if (reported != run_id) {
        const std::string previous = std::exchange(reported, std::string(run_id));
        // The server this node was before (restarted, or failed over) is gone from it; once no
        // other node reports it either, no vote can come under its run_id any more.
        // A node not weighed since its connection moved to that server reports it too.
        if (!previous.empty() &&
            std::find(reported_.begin(), reported_.end(), previous) == reported_.end() &&
            std::find(live.begin(), live.end(), std::string_view(previous)) == live.end()) {
            counted_through_.erase(previous);
        }
    }
    return counted_through_.try_emplace(std::string(run_id), node).first->second;
}

} // namespace redlock::detail
