#include "transport/server_info.hpp"

#include "transport/server_text.hpp"

#include <algorithm>
#include <charconv>

namespace redlock::detail {
namespace {

/// The value of `field:` in an INFO reply, or empty.
std::string_view info_field(std::string_view info, std::string_view field) {
    for (std::size_t at = 0; at < info.size();) {
        const auto end = std::min(info.find("\r\n", at), info.size());
        const auto line = info.substr(at, end - at);
        if (line.size() > field.size() && line.starts_with(field) && line[field.size()] == ':') {
            return line.substr(field.size() + 1);
        }
        at = end + 2;
    }
    return {};
}

std::optional<std::uint64_t> number(std::string_view text) {
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
        return std::nullopt;
    }
    return value;
}

} // namespace

server_info parse_server_info(std::string_view text) {
    server_info info;
    // A run_id is 40 hex digits; anything else is kept printable and short.
    info.run_id = printable_server_text(info_field(text, "run_id"), {});
    const auto uptime = number(info_field(text, "uptime_in_seconds")).value_or(0);
    info.uptime_seconds = static_cast<long long>(
        std::min<std::uint64_t>(uptime, 365ULL * 24 * 3600)); // plenty for any quarantine
    info.maxmemory = number(info_field(text, "maxmemory"));
    info.maxmemory_policy = printable_server_text(info_field(text, "maxmemory_policy"), {});
    info.evicted_keys = number(info_field(text, "evicted_keys"));
    return info;
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
