#include "core/clock_watch.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace redlock::detail {
namespace {

std::optional<std::int64_t> decimal(std::string_view text) {
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 0) {
        return std::nullopt;
    }
    return value;
}

std::int64_t us_of(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

/// Whether `now` moved against `before` by more than the bound; the movement if so.
std::optional<std::int64_t> moved(const auto& before, const auto& now, double drift_rate) {
    const auto elapsed = static_cast<double>(now.mid_us - before.mid_us);
    const auto allowed = drift_rate * std::abs(elapsed) + static_cast<double>(before.error_us) +
                         static_cast<double>(now.error_us) +
                         static_cast<double>(clock_watch::resolution_margin.count());
    const auto by = now.offset_us - before.offset_us;
    if (static_cast<double>(std::llabs(by)) > allowed) {
        return by;
    }
    return std::nullopt;
}

} // namespace

std::optional<std::chrono::microseconds> parse_node_time(std::string_view seconds,
                                                         std::string_view microseconds) {
    const auto s = decimal(seconds);
    const auto u = decimal(microseconds);
    // Up to the year 2500 or so: a broken or hostile node must not overflow the arithmetic.
    if (!s || !u || *u >= 1'000'000 || *s > 16'725'225'600LL) {
        return std::nullopt;
    }
    return std::chrono::microseconds(*s * 1'000'000 + *u);
}

std::optional<std::chrono::microseconds> clock_watch::observe(const time_sample& s,
                                                              double drift_rate) {
    const auto sent = us_of(s.sent);
    const auto received = std::max(us_of(s.received), sent);
    const auto mid = sent + (received - sent) / 2;
    // Half the round trip, rounded up, so that the integer middle is never outside it.
    const reading now{mid, s.node_time.count() - mid, (received - sent + 1) / 2};
    std::optional<std::int64_t> step;
    if (previous_) {
        step = moved(*previous_, now, drift_rate);
    }
    if (!step && precise_) {
        step = moved(*precise_, now, drift_rate);
    }
    if (!step && first_) {
        step = moved(*first_, now, drift_rate);
    }
    previous_ = now;
    if (step || !precise_ ||
        static_cast<double>(now.error_us) <=
            static_cast<double>(precise_->error_us) +
                drift_rate * static_cast<double>(now.mid_us - precise_->mid_us)) {
        precise_ = now;
    }
    if (step || !first_) {
        first_ = now;
    }
    if (step) {
        return std::chrono::microseconds(*step);
    }
    return std::nullopt;
}

void clock_watch::forget() noexcept {
    first_.reset();
    previous_.reset();
    precise_.reset();
}

std::string clock_step_text(std::chrono::microseconds step) {
    const auto ms =
        static_cast<long long>(std::llround(static_cast<double>(step.count()) / 1000.0));
    return "clock stepped by " + std::string(ms >= 0 ? "+" : "") + std::to_string(ms) + " ms";
}

} // namespace redlock::detail
