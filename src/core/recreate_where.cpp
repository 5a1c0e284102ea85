#include "core/recreate_where.hpp"

namespace redlock::detail {

std::vector<bool> recreate_where(const std::vector<std::optional<clock::time_point>>& restarted_at,
                                 const std::vector<clock::time_point>& confirmed_at) {
    std::vector<bool> where(confirmed_at.size(), false);
    for (std::size_t node = 0; node < where.size() && node < restarted_at.size(); ++node) {
        where[node] = restarted_at[node] && *restarted_at[node] > confirmed_at[node];
    }
    return where;
}

} // namespace redlock::detail
