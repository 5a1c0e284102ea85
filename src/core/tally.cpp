#include "core/tally.hpp"

namespace redlock::detail {

tally::tally(std::size_t nodes)
    : votes_(nodes) {}

bool tally::record(std::size_t node, node_outcome outcome) {
    auto& slot = votes_.at(node);
    if (slot) {
        return false;
    }
    slot = outcome;
    switch (outcome) {
    case node_outcome::granted:
        ++granted_;
        break;
    case node_outcome::refused:
        ++refused_;
        break;
    case node_outcome::failed:
    case node_outcome::pending:
        ++failed_;
        break;
    }
    return true;
}

void tally::fail_pending() {
    for (auto& slot : votes_) {
        if (!slot) {
            slot = node_outcome::failed;
            ++failed_;
        }
    }
}

} // namespace redlock::detail
