#include "core/held_locks.hpp"

#include <iterator>

namespace redlock::detail {

void held_locks::granted(const std::string& token, clock::time_point valid_until) {
    valid_until_[token] = valid_until;
}

void held_locks::extended(const std::string& token, clock::time_point valid_until) {
    // Only locks this client granted: an extend of a lock built by hand counts nothing.
    if (auto it = valid_until_.find(token); it != valid_until_.end()) {
        it->second = valid_until;
    }
}

void held_locks::released(const std::string& token) {
    valid_until_.erase(token);
}

std::size_t held_locks::count(clock::time_point now) {
    std::erase_if(valid_until_, [now](const auto& entry) { return entry.second <= now; });
    return valid_until_.size();
}

} // namespace redlock::detail
