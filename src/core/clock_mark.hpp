#ifndef REDLOCK_SRC_CORE_CLOCK_MARK_HPP
#define REDLOCK_SRC_CORE_CLOCK_MARK_HPP

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace redlock::detail {

/// What lua/clock_mark.lua answers: the node's TIME, and the last backward step of its clock
/// that a run of the script saw, at `step_at` on the node's clock (zero: none) by `step_by`.
struct clock_mark_reply {
    std::chrono::microseconds node_time;
    std::chrono::microseconds step_at;
    std::chrono::microseconds step_by;
};

/// The reply's four fields (TIME's seconds and microseconds, step_at, step_by), as sent;
/// empty when they are not that (then the script's answer is a refusal, as TIME refused).
std::optional<clock_mark_reply> parse_clock_mark(std::string_view seconds,
                                                 std::string_view microseconds,
                                                 std::string_view step_at,
                                                 std::string_view step_by);

/// The script's ARGV: the tolerance in microseconds and how long the key is kept, in
/// milliseconds, as decimal text.
struct clock_mark_arguments {
    std::string tolerance_us;
    std::string keep_ms;
};

/// For a client whose fleet holds locks of at most `fleet_max_ttl`, its clocks drifting by
/// `drift_rate`.
///
/// Tolerance: clock_watch::resolution_margin (1 ms), no rate term. The script weighs the
/// node's clock against itself, and a clock within any drift bound (NTP slewing it
/// included) never runs backward: only a step does. A clock that steps back by D was
/// ahead by D and expired keys up to D early; below 1 ms that is inside the constant
/// drift_allowance every lock's validity subtracts (2 ms by default).
///
/// Keep: the record of a step at node time X must reach every client that runs the script
/// while the quarantine it calls for lasts, fleet_max_ttl plus its drift from X; the node
/// counts the key's expiry on its own clock, which may run up to `drift_rate` fast, so it
/// is (fleet_max_ttl plus 1 s, for the drift's constant part and rounding) x (1 + rate)^2.
/// The same keep bounds the high-water mark's use: a clock stepped forward at F and back
/// more than fleet_max_ttl (and drift) later dropped no lock that still stands, so a mark
/// that lapses when no client ran for that long loses nothing (docs/safety.md).
clock_mark_arguments make_clock_mark_arguments(std::chrono::milliseconds fleet_max_ttl,
                                               double drift_rate);

/// A backward step recorded on the node, placed on the client's steady clock.
struct recorded_step {
    std::chrono::steady_clock::time_point at;
    std::chrono::microseconds by;
};

/// Reads the recorded steps out of clock mark replies (docs/safety.md, "Node clocks"). A
/// step recorded at node time X is reported once, placed at the latest moment of the
/// client's steady clock it can have happened: the reply's TIME was read no later than it
/// was received, and at most (TIME - X) / (1 + drift_rate) before that on a clock that
/// runs within drift_rate of the client's. Placed latest, the quarantine that runs from
/// it ends no earlier than one run from the real moment.
class clock_mark_watch {
public:
    /// The step the reply `r`, received at `received`, carries, when not reported before.
    std::optional<recorded_step> observe(const clock_mark_reply& r,
                                         std::chrono::steady_clock::time_point received,
                                         double drift_rate);
    /// Another server answers at the address: its record is another.
    void forget() noexcept;

private:
    std::optional<std::int64_t> reported_; // step_at of the step last reported
};

/// "clock stepped back by 1500 ms (recorded on the node)": a quarantine's cause.
std::string recorded_step_text(std::chrono::microseconds by);

} // namespace redlock::detail

#endif
