#include "core/extend_fsm.hpp"

#include "redlock/error.hpp"

#include <algorithm>

namespace redlock::detail {

extend_fsm::extend_fsm(std::size_t nodes, const lock_options& options)
    : options_(options)
    , votes_(nodes) {}

round_action extend_fsm::start(clock::time_point now, clock::time_point current_valid_until) {
    if (now >= current_valid_until) {
        // Extending now could revive a key that another client has since been granted.
        return finish(errc::lock_lost);
    }
    start_ = now;
    current_valid_until_ = current_valid_until;
    // A renewal that ends after the validity it extends is never adopted: by then another
    // client may hold the lock. The round ends there at the latest.
    const auto deadline = attempt_deadline(now, options_);
    capped_by_validity_ = current_valid_until < deadline;
    deadline_ = std::min(deadline, current_valid_until);
    return {round_action::kind::send, deadline_, {}};
}

round_action extend_fsm::on_reply(std::size_t node, node_outcome outcome, clock::time_point now) {
    if (finished_) {
        return {};
    }
    if (now >= deadline_) {
        // Handled at or after the deadline (a stalled event loop may run the replies that
        // waited before the timer): no vote, as for an acquire's.
        return on_deadline(now);
    }
    votes_.record(node, outcome);
    return decide(now);
}

round_action extend_fsm::decide(clock::time_point now) {
    if (votes_.reached()) {
        if (now >= current_valid_until_) {
            return finish(errc::validity_expired);
        }
        const auto until = detail::valid_until(start_, options_);
        if (until - now < options_.min_validity) {
            return finish(errc::validity_expired);
        }
        valid_until_ = until;
        return finish({});
    }
    if (votes_.impossible()) {
        return finish(votes_.refusals_decide() ? errc::lock_lost : errc::quorum_unreachable);
    }
    return {};
}

round_action extend_fsm::on_deadline(clock::time_point) {
    if (finished_) {
        return {};
    }
    const bool was_possible = !votes_.impossible();
    votes_.fail_pending();
    if (was_possible && (capped_by_validity_ || deadline_is_validity_horizon(options_))) {
        return finish(errc::validity_expired);
    }
    return finish(votes_.refusals_decide() ? errc::lock_lost : errc::quorum_unreachable);
}

round_action extend_fsm::on_cancel() {
    if (finished_) {
        return {};
    }
    return finish(errc::cancelled);
}

round_action extend_fsm::finish(std::error_code error) {
    finished_ = true;
    return {round_action::kind::done, {}, error};
}

} // namespace redlock::detail
