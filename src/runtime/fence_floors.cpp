#include "runtime/fence_floors.hpp"

#include <algorithm>

namespace redlock::detail {

std::uint64_t fence_floors::floor(const std::string& key) const {
    const auto it = floors_.find(key);
    return it == floors_.end() ? 0 : it->second;
}

void fence_floors::raise(const std::string& key, std::uint64_t token) {
    if (auto it = floors_.find(key); it != floors_.end()) {
        it->second = std::max(it->second, token);
        return;
    }
    if (floors_.size() >= capacity_ && !floors_.empty()) {
        floors_.erase(floors_.begin());
    }
    floors_.emplace(key, token);
}

} // namespace redlock::detail
