#include "core/backoff.hpp"

#include <algorithm>

namespace redlock::detail {

using std::chrono::microseconds;

microseconds backoff_ceiling(unsigned retry, microseconds initial, microseconds max) noexcept {
    if (retry == 0 || initial <= microseconds::zero()) {
        return std::max(microseconds::zero(), std::min(initial, max));
    }
    microseconds ceiling = initial;
    for (unsigned i = 1; i < retry && ceiling < max; ++i) {
        ceiling *= 2;
    }
    return std::min(ceiling, max);
}

microseconds full_jitter(microseconds ceiling, std::uint64_t random_bits) noexcept {
    if (ceiling <= microseconds::zero()) {
        return microseconds::zero();
    }
    const auto span = static_cast<std::uint64_t>(ceiling.count()) + 1;
    return microseconds(static_cast<microseconds::rep>(random_bits % span));
}

microseconds upper_half_jitter(microseconds ceiling, std::uint64_t random_bits) noexcept {
    return ceiling / 2 + full_jitter(ceiling - ceiling / 2, random_bits);
}

} // namespace redlock::detail
