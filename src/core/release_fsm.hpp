#ifndef REDLOCK_SRC_RELEASE_FSM_HPP
#define REDLOCK_SRC_RELEASE_FSM_HPP

#include "core/round_action.hpp"
#include "core/tally.hpp"

#include "redlock/error.hpp"

#include <chrono>
#include <optional>

namespace redlock::detail {

/// Release without I/O: one compare-and-delete round on every node, never retried (a lock
/// past its TTL needs no chasing), decided as soon as its outcome is certain, whatever the
/// nodes still silent answer:
/// - success once our token was deleted on a quorum;
/// - lock_lost once a quorum can no longer confirm and a quorum answered but fewer held our
///   token (the lock had already expired or been taken before the release);
/// - quorum_unreachable once a quorum can neither confirm nor answer.
/// The nodes still silent then are awaited in the background until the per-node timeout
/// (`decided`, then `settled`): their deletes were sent, and a client closing meanwhile
/// lets them be answered. Without a decision before it, the deadline decides.
class release_fsm {
public:
    release_fsm(std::size_t nodes, std::chrono::milliseconds node_timeout);

    round_action start(clock::time_point now);
    round_action on_reply(std::size_t node, node_outcome outcome);
    round_action on_deadline();
    round_action on_cancel();

    const tally& votes() const noexcept { return votes_; }

private:
    /// The outcome, if the nodes still silent can no longer change it.
    std::optional<std::error_code> certain() const;
    /// The outcome once every node answered or timed out.
    std::error_code verdict() const;
    round_action decide(std::error_code error);

    std::chrono::milliseconds node_timeout_;
    tally votes_;
    bool decided_ = false;
    bool settled_ = false;
};

} // namespace redlock::detail

#endif
