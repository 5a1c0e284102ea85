#include "core/renewal_fsm.hpp"

#include <algorithm>

namespace redlock::detail {

using std::chrono::milliseconds;

renewal_options renewal_fsm::resolve(milliseconds ttl, renewal_options options) {
    if (options.interval <= milliseconds::zero()) {
        options.interval = std::max(milliseconds(1), ttl / 3);
    }
    if (options.retry_delay <= milliseconds::zero()) {
        options.retry_delay = std::max(milliseconds(1), options.interval / 5);
    }
    return options;
}

renewal_fsm::renewal_fsm(milliseconds ttl, const renewal_options& options,
                         clock::time_point valid_until)
    : ttl_(ttl)
    , options_(options)
    , valid_until_(valid_until) {}

renewal_action renewal_fsm::start(clock::time_point now) {
    if (now >= valid_until_) {
        return lose();
    }
    // Due when only ttl - interval of validity is left: the same spacing as every renewal
    // after it, however late in its life the lock was handed to us.
    return schedule(valid_until_ - (ttl_ - options_.interval));
}

renewal_action renewal_fsm::schedule(clock::time_point at) {
    state_ = state::waiting;
    // The deadline itself is always an event: reaching it unrenewed means lost.
    return {renewal_action::kind::wait_until, std::min(at, valid_until_), {}};
}

renewal_action renewal_fsm::on_timer(clock::time_point now) {
    if (state_ == state::extending) {
        // The deadline armed with the round. After a stop the holder was already done while
        // the lock was valid: the round's end decides nothing more.
        if (now >= valid_until_ && !stop_requested_) {
            return lose();
        }
        return {};
    }
    if (state_ != state::waiting) {
        return {};
    }
    if (now >= valid_until_) {
        return lose();
    }
    state_ = state::extending;
    return {renewal_action::kind::extend, valid_until_, {}};
}

renewal_action renewal_fsm::on_extended(std::error_code error, clock::time_point new_valid_until,
                                        clock::time_point now) {
    if (state_ != state::extending) {
        return {};
    }
    if (stop_requested_) {
        state_ = state::finished;
        return {renewal_action::kind::stopped, {}, {}};
    }
    if (now >= valid_until_) {
        // Too late to count, whatever it says: the lock was unprotected meanwhile.
        return lose();
    }
    if (!error && new_valid_until > valid_until_) {
        valid_until_ = new_valid_until;
    }
    if (error == errc::lock_lost) {
        return lose();
    }
    if (error) {
        // Nodes unreachable or slow: try again soon, while there is validity left.
        return schedule(now + options_.retry_delay);
    }
    return schedule(valid_until_ - (ttl_ - options_.interval));
}

renewal_action renewal_fsm::on_stop(clock::time_point now) {
    if (state_ == state::finished) {
        return {};
    }
    if (now >= valid_until_ && !stop_requested_) {
        return lose();
    }
    if (state_ == state::extending) {
        // The round in flight finishes first: nothing may race a following release.
        stop_requested_ = true;
        return {};
    }
    state_ = state::finished;
    return {renewal_action::kind::stopped, {}, {}};
}

renewal_action renewal_fsm::lose() {
    state_ = state::finished;
    return {renewal_action::kind::lost, {}, make_error_code(errc::lock_lost)};
}

} // namespace redlock::detail
