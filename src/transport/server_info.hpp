#ifndef REDLOCK_SRC_TRANSPORT_SERVER_INFO_HPP
#define REDLOCK_SRC_TRANSPORT_SERVER_INFO_HPP

#include "core/validity.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::detail {

/// What the client learns from a node's `INFO server memory stats replication` (read at every
/// connect and on every refresh): who the server is, since when it runs and holds its role,
/// whether it is a primary, and whether it can forget keys by evicting them. Parsed here so that
/// the decisions built on it are testable without a server, and shared by the real connection and
/// the simulated one.
struct server_info {
    std::string run_id; ///< printable and short, whatever the node sent
    /// Clamped to [0, one year]: a hostile or broken node must not overflow the clock.
    long long uptime_seconds = 0;
    std::optional<std::uint64_t> maxmemory; ///< bytes; 0 means no limit
    std::string maxmemory_policy;           ///< printable and short
    std::optional<std::uint64_t> evicted_keys;
    /// INFO replication: "master" or "slave" (printable and short), empty when not sent.
    std::string role;
    /// INFO replication's master_replid: a primary takes a new one at every start and every
    /// promotion, so a change of it under one run_id is a promotion (or a resync as a
    /// replica) since the last reading. Printable and short.
    std::string replication_id;
    /// Whether INFO replication says this server was promoted (or handed over by FAILOVER)
    /// since it started: master_replid2 is not all zeros. Its uptime then says nothing of
    /// when it took its role.
    bool promoted_since_start = false;
    /// Whether the primary refuses writes without enough replicas (min-replicas-to-write and
    /// min-replicas-max-lag both set: INFO replication then shows min_slaves_good_slaves).
    bool requires_replicas = false;
};

/// Every `name:value` line of an INFO reply's text (section headers, blank lines and lines
/// without a colon skipped; lines end in CRLF or LF; a repeated name keeps its first value),
/// exactly as sent: what the connection compares and what `redlock nodes` shows.
using info_field_map = std::map<std::string, std::string, std::less<>>;
info_field_map info_fields(std::string_view text);

/// The fields of an INFO reply's text; absent or malformed fields stay empty. Its text
/// fields are made printable and short, but no secret is cut out of them: they are compared
/// (a short password such as "no" would turn "noeviction" into "***eviction", and run_ids
/// into others), so the secrets are cut only where they are shown.
server_info parse_server_info(std::string_view text);

/// Why a node answering `info` can evict (and so forget) lock keys, or empty when it
/// cannot: "can evict keys: maxmemory-policy volatile-ttl" for a memory limit with a policy
/// other than noeviction; a node whose INFO does not say counts as one that can. The policy
/// is shown with `secrets` cut out (printable_server_text).
std::string eviction_risk(const server_info& info, const std::vector<std::string>& secrets);

/// When the server started, from an INFO read at `now`: `uptime_seconds` is whole seconds,
/// so each reading is at or after the real start, by up to a second (and the reply's way
/// back). The earliest reading of the same server (`earlier`, empty for a new one) is the
/// closest and is kept: a placement that moved later by itself would look like a new restart,
/// for which the ceilings read at the real one would no longer count. A reading more than a
/// second after `earlier` is a restart all the same (uptime went down with the same run_id:
/// none sent, or a proxy's), or a reply held up: the later one is taken.
clock::time_point uptime_start(const server_info& info, clock::time_point now,
                               std::optional<clock::time_point> earlier);

/// The command read at connect and on every refresh: its sections in one call (Redis 7.0
/// and later; an older server refuses it, as an ACL user without +info does).
inline constexpr std::string_view info_sections[] = {"INFO", "server", "memory", "stats",
                                                     "replication"};

/// Why a server is no primary ("not a primary: INFO replication says role:slave"), or empty
/// when it is one. A reply without the replication section (an old server, a proxy) says
/// nothing, and its other fields are still used.
std::string not_primary_reason(const server_info& info, const std::vector<std::string>& secrets);

} // namespace redlock::detail

#endif
