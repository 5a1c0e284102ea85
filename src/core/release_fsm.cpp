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
    if (settled_ || !votes_.record(node, outcome)) {
        return {};
    }
    if (decided_) {
        if (votes_.pending() > 0) {
            return {};
        }
        settled_ = true;
        return {round_action::kind::settled, {}, {}};
    }
    if (const auto error = certain()) {
        return decide(*error);
    }
    return {};
}

round_action release_fsm::on_deadline() {
    if (settled_) {
        return {};
    }
    votes_.fail_pending();
    settled_ = true;
    if (decided_) {
        return {round_action::kind::settled, {}, {}};
    }
    decided_ = true;
    return {round_action::kind::done, {}, verdict()};
}

round_action release_fsm::on_cancel() {
    if (decided_) {
        return {};
    }
    // The deletes were sent and still run on the nodes: they are awaited like those of a
    // decided release.
    return decide(errc::cancelled);
}

std::optional<std::error_code> release_fsm::certain() const {
    const auto quorum = votes_.quorum();
    if (votes_.granted() >= quorum) {
        return std::error_code{};
    }
    if (votes_.granted() + votes_.pending() >= quorum) {
        return std::nullopt; // the silent nodes may still confirm
    }
    if (votes_.granted() + votes_.refused() >= quorum) {
        return make_error_code(errc::lock_lost);
    }
    if (votes_.granted() + votes_.refused() + votes_.pending() < quorum) {
        return make_error_code(errc::quorum_unreachable);
    }
    return std::nullopt; // lock_lost or quorum_unreachable: the silent nodes tell which
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

round_action release_fsm::decide(std::error_code error) {
    decided_ = true;
    if (votes_.pending() == 0) {
        settled_ = true;
        return {round_action::kind::done, {}, error};
    }
    return {round_action::kind::decided, {}, error};
}

} // namespace redlock::detail
