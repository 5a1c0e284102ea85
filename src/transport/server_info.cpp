#include "transport/server_info.hpp"

#include "transport/server_text.hpp"

#include <algorithm>
#include <charconv>

namespace redlock::detail {
namespace {

std::optional<std::uint64_t> number(std::string_view text) {
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
        return std::nullopt;
    }
    return value;
}

} // namespace

info_field_map info_fields(std::string_view text) {
    info_field_map fields;
    while (!text.empty()) {
        const auto end = text.find('\n');
        auto line = text.substr(0, end);
        text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        const auto colon = line.find(':');
        if (line.empty() || line.front() == '#' || colon == std::string_view::npos) {
            continue;
        }
        fields.emplace(std::string(line.substr(0, colon)), std::string(line.substr(colon + 1)));
    }
    return fields;
}

clock::time_point uptime_start(const server_info& info, clock::time_point now,
                               std::optional<clock::time_point> earlier) {
    const auto reading = now - std::chrono::seconds(info.uptime_seconds);
    // Readings of one process lie within a second (and the reply's way back) of each other:
    // one further on is a restart the run_id did not show (no run_id, or a proxy's), or a
    // reply held up on its way; either way the later placement is the safe one.
    if (earlier && *earlier < reading && reading - *earlier <= std::chrono::seconds(1)) {
        return *earlier;
    }
    return reading;
}

server_info parse_server_info(std::string_view text) {
    const auto fields = info_fields(text);
    const auto info_field = [&fields](std::string_view name) -> std::string_view {
        const auto at = fields.find(name);
        return at == fields.end() ? std::string_view() : std::string_view(at->second);
    };
    server_info info;
    // A run_id is 40 hex digits; anything else is kept printable and short.
    info.run_id = printable_server_text(info_field("run_id"), {});
    const auto uptime = number(info_field("uptime_in_seconds")).value_or(0);
    info.uptime_seconds = static_cast<long long>(
        std::min<std::uint64_t>(uptime, 365ULL * 24 * 3600)); // plenty for any quarantine
    info.maxmemory = number(info_field("maxmemory"));
    info.maxmemory_policy = printable_server_text(info_field("maxmemory_policy"), {});
    info.evicted_keys = number(info_field("evicted_keys"));
    info.role = printable_server_text(info_field("role"), {});
    info.replication_id = printable_server_text(info_field("master_replid"), {});
    const auto replid2 = info_field("master_replid2");
    info.promoted_since_start =
        !replid2.empty() && replid2.find_first_not_of('0') != std::string_view::npos;
    info.requires_replicas = fields.count("min_slaves_good_slaves") != 0;
    return info;
}

std::string not_primary_reason(const server_info& info, const std::vector<std::string>& secrets) {
    if (info.role.empty() || info.role == "master") {
        return {};
    }
    return "not a primary: INFO replication says role:" + printable_server_text(info.role, secrets);
}

std::string eviction_risk(const server_info& info, const std::vector<std::string>& secrets) {
    if (!info.maxmemory || info.maxmemory_policy.empty()) {
        return "evictions cannot be ruled out: INFO memory did not give maxmemory and "
               "maxmemory_policy";
    }
    if (*info.maxmemory == 0 || info.maxmemory_policy == "noeviction") {
        return {};
    }
    return "can evict keys: maxmemory-policy " +
           printable_server_text(info.maxmemory_policy, secrets);
}

} // namespace redlock::detail
