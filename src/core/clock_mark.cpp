#include "core/clock_mark.hpp"

#include "core/clock_watch.hpp"

#include <charconv>
#include <cmath>

namespace redlock::detail {
namespace {

// Microseconds up to the year 2500 or so, as parse_node_time: a broken or hostile node must
// not overflow the arithmetic.
constexpr std::int64_t largest_us = 16'725'225'600LL * 1'000'000;

std::optional<std::int64_t> microseconds_of(std::string_view text) {
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 0 ||
        value > largest_us) {
        return std::nullopt;
    }
    return value;
}

} // namespace

std::optional<clock_mark_reply> parse_clock_mark(std::string_view seconds,
                                                 std::string_view microseconds,
                                                 std::string_view step_at,
                                                 std::string_view step_by) {
    const auto now = parse_node_time(seconds, microseconds);
    const auto at = microseconds_of(step_at);
    const auto by = microseconds_of(step_by);
    if (!now || !at || !by) {
        return std::nullopt;
    }
    return clock_mark_reply{*now, std::chrono::microseconds(*at), std::chrono::microseconds(*by)};
}

clock_mark_arguments make_clock_mark_arguments(std::chrono::milliseconds fleet_max_ttl,
                                               double drift_rate) {
    const auto rate = std::max(drift_rate, 0.0);
    const auto base = static_cast<double>(fleet_max_ttl.count()) + 1000.0;
    // Below 10^12 ms (the script's limit, 30 years): a fleet maximum beyond that is refused
    // by the configuration's validation long before.
    const auto keep = std::min(std::ceil(base * (1 + rate) * (1 + rate)), 999'999'999'999.0);
    return {std::to_string(clock_watch::resolution_margin.count()),
            std::to_string(static_cast<std::int64_t>(keep))};
}

std::optional<recorded_step>
clock_mark_watch::observe(const clock_mark_reply& r, std::chrono::steady_clock::time_point received,
                          double drift_rate) {
    const auto at = r.step_at.count();
    if (at == 0 || reported_ == at) {
        return std::nullopt;
    }
    reported_ = at;
    // The node's clock may have stepped back once more, by less than the tolerance, since.
    const auto node_elapsed = std::max<std::int64_t>(r.node_time.count() - at, 0);
    const auto elapsed = static_cast<std::int64_t>(
        std::floor(static_cast<double>(node_elapsed) / (1 + std::max(drift_rate, 0.0))));
    return recorded_step{received - std::chrono::microseconds(elapsed), r.step_by};
}

void clock_mark_watch::forget() noexcept {
    reported_.reset();
}

std::string recorded_step_text(std::chrono::microseconds by) {
    const auto ms = static_cast<long long>(std::llround(static_cast<double>(by.count()) / 1000.0));
    return "clock stepped back by " + std::to_string(ms) + " ms (recorded on the node)";
}

} // namespace redlock::detail
