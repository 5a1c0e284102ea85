#ifndef REDLOCK_SRC_CORE_CLOCK_WATCH_HPP
#define REDLOCK_SRC_CORE_CLOCK_WATCH_HPP

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace redlock::detail {

/// One reading of a node's `TIME`: when the command left and when its reply was read, on
/// the client's steady clock, and the node's wall time it carried. The node read its clock
/// somewhere between the two; the middle is the best guess, half the round trip the error.
struct time_sample {
    std::chrono::steady_clock::time_point sent;
    std::chrono::steady_clock::time_point received;
    std::chrono::microseconds node_time; ///< since the Unix epoch, as TIME says
};

/// A `TIME` reply's two fields (seconds, microseconds), as sent; empty when they are not
/// two decimal numbers with the microseconds below a million.
std::optional<std::chrono::microseconds> parse_node_time(std::string_view seconds,
                                                         std::string_view microseconds);

/// Tells whether a node's wall clock stepped, from `TIME` samples taken against the
/// client's steady clock (docs/safety.md, "Node clocks"). Redis expires keys by its wall
/// clock, so a node whose clock steps forward drops locks early; a constant offset between
/// a node and the client is harmless (each expiry is measured on one clock), and so is a
/// rate within the drift the validity already subtracts.
///
/// The offset of a sample is the node's time minus the middle of its round trip on the
/// steady clock, known to within half the round trip. Against an earlier sample, the offset
/// may move by `drift_rate` x the time between the two middles, plus both uncertainties,
/// plus resolution_margin (TIME's microseconds, the steady clock's reading, rounding);
/// more than that is a step. Each sample is weighed against the previous one (a step shows
/// at once), against the last precise one (a step inside a slow round trip, which that
/// sample's own uncertainty hides, shows at the next precise sample) and against the first
/// one since the last step (a rate beyond the bound adds up there). Both directions count:
/// a backward step means the clock was ahead before.
class clock_watch {
public:
    static constexpr std::chrono::microseconds resolution_margin{1000};

    /// Weighs `s` (its received not before the previous sample's). Returns how far the
    /// offset moved when that is a step, and then starts afresh from `s`.
    std::optional<std::chrono::microseconds> observe(const time_sample& s, double drift_rate);
    /// Another server answers at the address (a restart, a failover): its clock is another.
    void forget() noexcept;

private:
    struct reading {
        std::int64_t mid_us;    ///< steady clock, microseconds
        std::int64_t offset_us; ///< node time minus mid
        std::int64_t error_us;  ///< half the round trip
    };
    std::optional<reading> first_;
    std::optional<reading> previous_;
    // The latest sample no less precise than every later one: its half round trip, widened
    // by drift x elapsed since, no larger than theirs.
    std::optional<reading> precise_;
};

/// "clock stepped by +1500 ms": how a step is shown in a vote's reason and the log.
std::string clock_step_text(std::chrono::microseconds step);

} // namespace redlock::detail

#endif
