#ifndef REDLOCK_SRC_FENCE_COUNTERS_HPP
#define REDLOCK_SRC_FENCE_COUNTERS_HPP

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace redlock::detail {

/// Why the fencing counters a granting majority returned cannot give the next token.
struct counter_rejection {
    enum class kind {
        /// One node's counter is more than max_counter_lead above every other witness's
        /// (the other granting nodes and this client's own floor): a hostile or corrupted
        /// node, or honest nodes that lost or missed that many raises. Raising to it would
        /// push every node's counter there for good.
        leads,
        /// The highest counter is 2^64-1: no token above it exists (counters already pushed
        /// there, see docs/safety.md for the repair).
        exhausted,
    };
    kind what = kind::leads;
    /// The node whose counter is rejected (the leader; for exhausted, the first at 2^64-1).
    /// Empty: it is this client's own last token (exhausted only).
    std::optional<std::size_t> node;
    std::uint64_t counter = 0;
    /// The highest of the other witnesses: the other granting nodes and the floor.
    std::uint64_t others = 0;
};

/// Judges the counters of the granting nodes (`granted[i]`: node i granted and `counters[i]`
/// is its counter) before the raise. Never drops a counter from the maximum (that would let a
/// token repeat): it either accepts all of them or refuses the acquire. `floor`: the highest
/// token this client already had for the key. Returns nothing when the next token may be the
/// highest counter plus one.
std::optional<counter_rejection> judge_counters(const std::vector<std::uint64_t>& counters,
                                                const std::vector<bool>& granted,
                                                std::uint64_t floor, std::uint64_t max_lead);

} // namespace redlock::detail

#endif
