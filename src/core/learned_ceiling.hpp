#ifndef REDLOCK_SRC_CORE_LEARNED_CEILING_HPP
#define REDLOCK_SRC_CORE_LEARNED_CEILING_HPP

#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace redlock::detail {

/// What one node's TTL ceiling (lua/ttl_ceiling_read.lua) says.
struct ceiling_reading {
    enum class kind {
        known,   ///< `ttl` is the largest live entry
        missing, ///< no live entry: unknown (never written, flushed, expired), never 0
        odd      ///< an entry that is no ttl and time, or the read failed: unknown, `note` says
    };
    kind what = kind::missing;
    std::chrono::milliseconds ttl{0};
    std::string note;
};

/// The read script's reply: the node's time in milliseconds, then field, value pairs.
ceiling_reading parse_ceiling(std::span<const std::string_view> items);

/// How long a quarantined node's locks may stand, as the quarantine uses it.
struct quarantine_figure {
    std::chrono::milliseconds ttl{0};
    /// From a full quorum of eligible nodes' ceilings (else fleet_max_ttl, "maximum").
    bool learned = false;
    /// What to tell a person: "learned 1000 ms from 3 nodes", "fleet maximum; ceiling known on 1 of
    /// 3 nodes needed", or why a ceiling was refused.
    std::string basis;
    /// A ceiling above fleet_max_ttl was seen (an error to report): the figure is that ceiling.
    bool above_maximum = false;
};

/// The figure for a ceiling above fleet_max_ttl: a lock that long may stand, so the quarantine
/// lasts the ceiling, reported as an error of configuration (clients disagree on the maximum,
/// or it was lowered while older entries live).
quarantine_figure beyond_maximum(std::chrono::milliseconds ceiling,
                                 std::chrono::milliseconds fleet_max_ttl);

/// `readings[i]` is node i's reading, empty when that node is not eligible (restarted within
/// the maximum, evicting, INFO refused, not connected, the node in quarantine itself) or did
/// not answer. The figure is the largest known ceiling when at least node_count/2+1 readings
/// are known, else fleet_max_ttl; never below a known ceiling above fleet_max_ttl (a lock that
/// long may stand), which is reported instead of being taken as a tighter figure.
quarantine_figure quarantine_ttl(std::span<const std::optional<ceiling_reading>> readings,
                                 std::size_t node_count, std::chrono::milliseconds fleet_max_ttl);

} // namespace redlock::detail

#endif
