#include "redlock/error.hpp"

#include <string>

namespace redlock {
namespace {

class category final : public std::error_category {
public:
    const char* name() const noexcept override { return "redlock"; }

    std::string message(int value) const override {
        switch (static_cast<errc>(value)) {
        case errc::contention:
            return "lock is held by another owner";
        case errc::quorum_unreachable:
            return "not enough nodes answered to form a quorum";
        case errc::validity_expired:
            return "quorum reached too slowly: lock validity already expired";
        case errc::lock_lost:
            return "lock is no longer held";
        case errc::cancelled:
            return "operation cancelled";
        case errc::invalid_argument:
            return "invalid argument";
        case errc::nodes_quarantined:
            return "no quorum while nodes that restarted recently may not vote yet";
        case errc::node_timeout:
            return "node did not answer in time";
        case errc::connection_failed:
            return "connection to node failed";
        case errc::server_error:
            return "node answered with an error";
        case errc::unexpected_reply:
            return "node sent an unexpected reply";
        case errc::node_backlogged:
            return "too many commands in flight to node";
        case errc::node_quarantined:
            return "quarantined";
        case errc::duplicate_node:
            return "node is the same server as another node; its vote counts only once";
        case errc::restarts_undetectable:
            return "node's restarts and evictions cannot be detected; its vote does not count";
        case errc::client_closed:
            return "client closed: the operation was started after close()";
        case errc::lock_mismatch:
            return "the key holds another kind of lock (or another permit count) than asked for";
        case errc::fencing_counter_refused:
            return "a node's fencing counter was refused: it leads the other nodes' by more than "
                   "max_counter_lead, or no token is left above it";
        case errc::node_can_evict:
            return "node can evict keys; its vote does not count";
        case errc::node_not_primary:
            return "node's server is not a primary; its vote does not count";
        }
        return "unknown redlock error";
    }
};

} // namespace

const std::error_category& error_category() noexcept {
    static const category instance;
    return instance;
}

} // namespace redlock
