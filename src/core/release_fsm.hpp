#ifndef REDLOCK_SRC_RELEASE_FSM_HPP
#define REDLOCK_SRC_RELEASE_FSM_HPP

#include "core/round_action.hpp"
#include "core/tally.hpp"

#include "redlock/error.hpp"

#include <chrono>

namespace redlock::detail {

/// Release without I/O: one compare-and-delete round on every node, waiting for every
/// answer or the per-node timeout, never retried (a lock past its TTL needs no chasing).
/// Success: our token was deleted on a quorum. lock_lost: a quorum answered but fewer
/// held our token, so the lock had already expired or been taken before the release.
class release_fsm {
public:
    release_fsm(std::size_t nodes, std::chrono::milliseconds node_timeout);

    round_action start(clock::time_point now);
    round_action on_reply(std::size_t node, node_outcome outcome);
    round_action on_deadline();
    round_action on_cancel();

    const tally& votes() const noexcept { return votes_; }

private:
    round_action finish(std::error_code error);
    std::error_code verdict() const;

    std::chrono::milliseconds node_timeout_;
    tally votes_;
    bool finished_ = false;
};

} // namespace redlock::detail

#endif
