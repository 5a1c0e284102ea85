#ifndef REDLOCK_SRC_SERVER_IDENTITIES_HPP
#define REDLOCK_SRC_SERVER_IDENTITIES_HPP

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace redlock::detail {

/// Which node's votes count for each server, told apart by the run_id its INFO reports: the
/// first node a grant was weighed for with that run_id. An entry is never handed to another
/// node while any node still reports its run_id (else two nodes could count one server whose
/// grant the first had counted in the same round); it is forgotten once no node reports it,
/// so that a node reconnecting again and again under new run_ids keeps at most one entry per
/// node, not one per reconnect. The run_id is the server's word: docs/security.md says what a
/// hostile node can do with it.
class server_identities {
public:
    explicit server_identities(std::size_t nodes)
        : reported_(nodes) {}

    /// `node` reports `run_id` (not empty) now: the node whose votes count for that server,
    /// `node` itself or the one that reported it first. `live`: what every node's connection
    /// reports now (empty where unknown), weighed in this round or not: a run_id one of them
    /// reports is not forgotten, since a grant may still come under it.
    std::size_t counted_through(std::size_t node, std::string_view run_id,
                                const std::vector<std::string_view>& live = {});
    /// How many servers are remembered: at most the number of nodes.
    std::size_t size() const noexcept { return counted_through_.size(); }

private:
    std::vector<std::string> reported_;
    std::unordered_map<std::string, std::size_t> counted_through_;
};

} // namespace redlock::detail

#endif
