#include "support/naive_fencing.hpp"

#include "support/topology.hpp"

#include <algorithm>

namespace redlock::test {

std::optional<std::uint64_t> naive_max_of_incr_grant(const std::vector<int>& reachable,
                                                     std::size_t total, const std::string& key) {
    const std::string token = "naive-" + std::to_string(reachable.size()) + "-" + key;
    std::vector<int> granted;
    std::uint64_t highest = 0;
    for (int node : reachable) {
        inspector look(node);
        if (look.run({"SET", key, token, "NX", "PX", "10000"}) == "OK") {
            granted.push_back(node);
            highest = std::max<std::uint64_t>(
                highest, std::stoull(look.run({"INCR", key + ":naive-fence"})));
        }
    }
    for (int node : granted) {
        inspector(node).run({"DEL", key});
    }
    if (granted.size() < total / 2 + 1) {
        return std::nullopt;
    }
    return highest;
}

} // namespace redlock::test
