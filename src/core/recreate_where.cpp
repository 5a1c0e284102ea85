#include "core/recreate_where.hpp"

namespace redlock::detail {

std::vector<bool> recreate_where(const std::vector<std::optional<clock::time_point>>& forgot_at,
                                 const std::vector<clock::time_point>& confirmed_at) {
    std::vector<bool> where(confirmed_at.size(), false);
    for (std::size_t node = 0; node < where.size() && node < forgot_at.size(); ++node) {
        where[node] = forgot_at[node] && *forgot_at[node] > confirmed_at[node];
    }
    return where;
}

} // namespace redlock::detail
