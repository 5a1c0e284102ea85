#include "core/learned_ceiling.hpp"

#include "redlock/config.hpp"

#include <algorithm>
#include <cstdint>

namespace redlock::detail {
namespace {

/// A decimal of at most 15 digits (what the scripts write), or empty.
std::optional<std::int64_t> small_number(std::string_view text) {
    if (text.empty() || text.size() > 15) {
        return std::nullopt;
    }
    std::int64_t value = 0;
    for (const char c : text) {
        if (c < '0' || c > '9') {
            return std::nullopt;
        }
        value = value * 10 + (c - '0');
    }
    return value;
}

std::string shown(std::string_view text) {
    std::string out;
    for (const char c : text.substr(0, 40)) {
        out += (c >= 0x20 && c < 0x7f) ? c : '?';
    }
    return text.size() > 40 ? out + "..." : out;
}

} // namespace

ceiling_reading parse_ceiling(std::span<const std::string_view> items) {
    ceiling_reading r;
    const auto now = items.empty() ? std::nullopt : small_number(items[0]);
    if (!now || items.size() % 2 == 0) {
        r.what = ceiling_reading::kind::odd;
        r.note = "ceiling read answered in an unexpected form";
        return r;
    }
    std::string absurd;
    for (std::size_t i = 1; i + 1 < items.size(); i += 2) {
        const auto ttl = small_number(items[i]);
        const auto until = small_number(items[i + 1]);
        if (!ttl || *ttl == 0 || !until) {
            r.what = ceiling_reading::kind::odd;
            r.note = "ceiling entry \"" + shown(items[i]) + "\" = \"" + shown(items[i + 1]) +
                     "\" is no ttl and time";
            return r;
        }
        // No client of this library can set a longer ttl (fleet_max_ttl is at most max_ttl):
        // such an entry is another program's or a corruption, and taken as a figure it would
        // keep a restarted node out for centuries (and overflow the time it ends at).
        // Skipped, so that it hides no valid entry beside it; reported if nothing else is
        // known.
        if (std::chrono::milliseconds(*ttl) > redlock::max_ttl) {
            absurd = "ceiling entry \"" + shown(items[i]) +
                     "\" is above the longest ttl any client may set (max_ttl, " +
                     std::to_string(redlock::max_ttl.count()) + " ms)";
            continue;
        }
        if (*until > *now && std::chrono::milliseconds(*ttl) > r.ttl) {
            r.what = ceiling_reading::kind::known;
            r.ttl = std::chrono::milliseconds(*ttl);
        }
    }
    if (r.what == ceiling_reading::kind::missing && !absurd.empty()) {
        r.what = ceiling_reading::kind::odd;
        r.note = std::move(absurd);
    }
    return r;
}

quarantine_figure beyond_maximum(std::chrono::milliseconds ceiling,
                                 std::chrono::milliseconds fleet_max_ttl) {
    quarantine_figure f;
    f.ttl = ceiling;
    f.above_maximum = true;
    f.basis = "ceiling " + std::to_string(ceiling.count()) + " ms above fleet_max_ttl " +
              std::to_string(fleet_max_ttl.count()) +
              " ms refused as a tighter figure: quarantined for the ceiling";
    return f;
}

quarantine_figure quarantine_ttl(std::span<const std::optional<ceiling_reading>> readings,
                                 std::size_t node_count, std::chrono::milliseconds fleet_max_ttl) {
    const std::size_t quorum = node_count / 2 + 1;
    std::size_t known = 0;
    std::chrono::milliseconds largest{0};
    for (const auto& r : readings) {
        if (r && r->what == ceiling_reading::kind::known) {
            ++known;
            largest = std::max(largest, r->ttl);
        }
    }
    if (largest > fleet_max_ttl) {
        // Some client sets locks longer than this client's maximum (a larger fleet_max_ttl,
        // or one lowered less than keep ago): such a lock may stand, so it is the figure.
        return beyond_maximum(largest, fleet_max_ttl);
    }
    quarantine_figure f;
    if (known >= quorum) {
        f.ttl = largest;
        f.learned = true;
        f.basis = "learned ceiling " + std::to_string(largest.count()) + " ms from " +
                  std::to_string(known) + " nodes";
        return f;
    }
    f.ttl = fleet_max_ttl;
    f.basis = "fleet maximum; ceiling known on " + std::to_string(known) + " of " +
              std::to_string(quorum) + " nodes needed";
    return f;
}

} // namespace redlock::detail
