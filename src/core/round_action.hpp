#ifndef REDLOCK_SRC_ROUND_ACTION_HPP
#define REDLOCK_SRC_ROUND_ACTION_HPP

#include "core/validity.hpp"

#include <system_error>

namespace redlock::detail {

/// What the I/O layer must do next for a one-round operation (extend, release).
struct round_action {
    enum class kind {
        /// Send the command to every node and call on_deadline() at `at`.
        send,
        wait,
        /// Complete the operation with `error` (empty on success); nothing is awaited any more.
        done,
        /// Complete the operation with `error` now, and keep the deadline armed: nodes that
        /// have not answered are still awaited, in the background (a release decided at
        /// quorum). Ends in `settled`.
        decided,
        /// After `decided`, the last node answered or the deadline passed: nothing is awaited
        /// any more.
        settled,
    };
    kind what = kind::wait;
    clock::time_point at{};
    std::error_code error;
};

} // namespace redlock::detail

#endif
