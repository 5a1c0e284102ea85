#include "core/validity.hpp"

#include <algorithm>

namespace redlock::detail {

using std::chrono::microseconds;

std::chrono::microseconds drift(const lock_options& options) noexcept {
    const auto proportional = microseconds(static_cast<microseconds::rep>(
        static_cast<double>(microseconds(options.ttl).count()) * options.clock_drift_factor));
    return proportional + options.drift_allowance;
}

clock::time_point valid_until(clock::time_point start, const lock_options& options) noexcept {
    return start + options.ttl - drift(options);
}

static clock::duration validity_horizon(const lock_options& options) noexcept {
    return options.ttl - drift(options) - options.min_validity;
}

clock::time_point attempt_deadline(clock::time_point start, const lock_options& options) noexcept {
    return start + std::min<clock::duration>(options.node_timeout, validity_horizon(options));
}

clock::time_point raise_deadline(clock::time_point start, clock::time_point now,
                                 const lock_options& options) noexcept {
    return std::min(now + options.node_timeout, start + validity_horizon(options));
}

bool deadline_is_validity_horizon(const lock_options& options) noexcept {
    return validity_horizon(options) < options.node_timeout;
}

} // namespace redlock::detail
