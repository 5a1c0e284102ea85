#ifndef REDLOCK_SRC_EXTEND_FSM_HPP
#define REDLOCK_SRC_EXTEND_FSM_HPP

#include "core/round_action.hpp"
#include "core/tally.hpp"

#include "redlock/config.hpp"
#include "redlock/error.hpp"

namespace redlock::detail {

/// Extend without I/O: one compare-and-pexpire round, decided at quorum. The new validity
/// is measured from this round's own start; a lock already past its validity is never
/// extended, and a round that reaches its quorum only after the validity it extends has run
/// out fails with validity_expired. A reply handled at or after the round's deadline is no
/// vote.
class extend_fsm {
public:
    extend_fsm(std::size_t nodes, const lock_options& options);

    round_action start(clock::time_point now, clock::time_point current_valid_until);
    round_action on_reply(std::size_t node, node_outcome outcome, clock::time_point now);
    round_action on_deadline(clock::time_point now);
    round_action on_cancel();

    const tally& votes() const noexcept { return votes_; }
    /// Meaningful once done without error.
    clock::time_point valid_until() const noexcept { return valid_until_; }

private:
    round_action decide(clock::time_point now);
    round_action finish(std::error_code error);

    lock_options options_;
    tally votes_;
    bool finished_ = false;
    bool capped_by_validity_ = false;
    clock::time_point current_valid_until_{};
    clock::time_point start_{};
    /// No reply counts from then on.
    clock::time_point deadline_{};
    clock::time_point valid_until_{};
};

} // namespace redlock::detail

#endif
