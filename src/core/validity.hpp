#ifndef REDLOCK_SRC_VALIDITY_HPP
#define REDLOCK_SRC_VALIDITY_HPP

#include "redlock/config.hpp"

#include <chrono>

namespace redlock::detail {

using clock = std::chrono::steady_clock;

/// ttl * clock_drift_factor + drift_allowance.
std::chrono::microseconds drift(const lock_options& options) noexcept;

/// When a quorum reached for an attempt that started at `start` stops protecting:
/// start + ttl - drift. Independent of when the quorum is reached, because
/// validity = ttl - elapsed - drift and valid_until = now + validity.
clock::time_point valid_until(clock::time_point start, const lock_options& options) noexcept;

/// The latest instant an attempt may still succeed: the per-node timeout, capped so that
/// a quorum at the deadline still leaves min_validity.
clock::time_point attempt_deadline(clock::time_point start, const lock_options& options) noexcept;

/// The latest instant a fencing raise sent at `now` may still complete the attempt that
/// started at `start`: the per-node timeout from now, capped like attempt_deadline.
clock::time_point raise_deadline(clock::time_point start, clock::time_point now,
                                 const lock_options& options) noexcept;

/// Whether the deadline of an attempt is the validity horizon rather than the node timeout:
/// then running out of time means "too slow", not "nodes unreachable".
bool deadline_is_validity_horizon(const lock_options& options) noexcept;

} // namespace redlock::detail

#endif
