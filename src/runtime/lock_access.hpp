#ifndef REDLOCK_SRC_RUNTIME_LOCK_ACCESS_HPP
#define REDLOCK_SRC_RUNTIME_LOCK_ACCESS_HPP

#include "redlock/lock.hpp"

namespace redlock::detail {

/// What the library does to a lock that its public constructors do not offer.
struct lock_access {
    /// `held` with another validity, sharing its keys, token and options (no copy of them):
    /// what a renewal or an extend with the same ttl makes of it.
    static lock with_validity(const lock& held, lock::clock::time_point valid_until) {
        lock moved = held;
        moved.valid_until_ = valid_until;
        return moved;
    }
};

} // namespace redlock::detail

#endif
