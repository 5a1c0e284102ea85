#include "core/release_fsm.hpp"

#include "redlock/error.hpp"

namespace redlock::detail {

release_fsm::release_fsm(std::size_t nodes, std::chrono::milliseconds node_timeout)
    : node_timeout_(node_timeout)
    , votes_(nodes) {}

round_action release_fsm::start(clock::time_point now) {
    return {round_action::kind::send, now + node_timeout_, {}};
}

round_action release_fsm::on_reply(std::size_t node, node_outcome outcome) {
    if (finished_) {
        return {};
    }
    votes_.record(node, outcome);
    if (votes_.pending() > 0) {
        return {};
    }
    return finish(verdict());
}

round_action release_fsm::on_deadline() {
    if (finished_) {
        return {};
    }
    votes_.fail_pending();
    return finish(verdict());
}

round_action release_fsm::on_cancel() {
    if (finished_) {
        return {};
    }
    return finish(errc::cancelled);
}

std::error_code release_fsm::verdict() const {
    if (votes_.granted() >= votes_.quorum()) {
        return {};
    }
    if (votes_.granted() + votes_.refused() >= votes_.quorum()) {
        return errc::lock_lost;
    }
    return errc::quorum_unreachable;
}

round_action release_fsm::finish(std::error_code error) {
    finished_ = true;
    return {round_action::kind::done, {}, error};
}

} // namespace redlock::detail
