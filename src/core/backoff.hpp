#ifndef REDLOCK_SRC_BACKOFF_HPP
#define REDLOCK_SRC_BACKOFF_HPP

#include <chrono>
#include <cstdint>

namespace redlock::detail {

/// The ceiling before retry `retry` (1 for the first retry): initial * 2^(retry-1),
/// capped at `max` and safe against overflow for any retry count.
std::chrono::microseconds backoff_ceiling(unsigned retry, std::chrono::microseconds initial,
                                          std::chrono::microseconds max) noexcept;

/// Full jitter (AWS architecture blog): a uniform draw in [0, ceiling] from 64 random bits.
std::chrono::microseconds full_jitter(std::chrono::microseconds ceiling,
                                      std::uint64_t random_bits) noexcept;

/// A uniform draw in [ceiling / 2, ceiling]: the fallback sleep of a waiter whose wake-up
/// will be announced, which should not poll long before its turn.
std::chrono::microseconds upper_half_jitter(std::chrono::microseconds ceiling,
                                            std::uint64_t random_bits) noexcept;

} // namespace redlock::detail

#endif
