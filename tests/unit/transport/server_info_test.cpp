#include "transport/server_info.hpp"

#include <gtest/gtest.h>

namespace {

using redlock::detail::eviction_risk;
using redlock::detail::info_fields;
using redlock::detail::parse_server_info;

// The lines Redis 7.0 sends for `INFO server memory stats` that matter here, among others
// that start alike (maxmemory_human, maxmemory_policy after maxmemory).
constexpr const char* evicting_node =
    "# Server\r\nredis_version:7.0.15\r\nrun_id:0123456789abcdef0123456789abcdef01234567\r\n"
    "uptime_in_seconds:42\r\n\r\n# Memory\r\nused_memory:1000\r\nmaxmemory:3145728\r\n"
    "maxmemory_human:3.00M\r\nmaxmemory_policy:volatile-ttl\r\n\r\n# Stats\r\n"
    "expired_keys:5\r\nevicted_keys:23\r\nevicted_clients:0\r\n";

TEST(server_info, fields_are_every_name_value_line_as_sent) {
    const auto fields = info_fields("# Server\r\nrun_id:abc\r\n\r\nno colon here\r\n"
                                    "redis_mode:standalone\nrun_id:second\r\n"
                                    "maxmemory_policy:a:b\r\n");
    EXPECT_EQ(fields.size(), 3u);
    EXPECT_EQ(fields.at("run_id"), "abc") << "a repeated name keeps its first value";
    EXPECT_EQ(fields.at("redis_mode"), "standalone") << "a line may end in LF alone";
    EXPECT_EQ(fields.at("maxmemory_policy"), "a:b") << "the value runs to the line's end";
    EXPECT_TRUE(info_fields("").empty());
}

TEST(server_info, reads_identity_memory_limit_policy_and_evictions) {
    const auto info = parse_server_info(evicting_node);
    EXPECT_EQ(info.run_id, "0123456789abcdef0123456789abcdef01234567");
    EXPECT_EQ(info.uptime_seconds, 42);
    EXPECT_EQ(info.maxmemory, 3145728u);
    EXPECT_EQ(info.maxmemory_policy, "volatile-ttl");
    EXPECT_EQ(info.evicted_keys, 23u);
    EXPECT_EQ(eviction_risk(info, {}), "can evict keys: maxmemory-policy volatile-ttl");
}

TEST(server_info, a_node_without_limit_or_with_noeviction_cannot_evict) {
    EXPECT_EQ(
        eviction_risk(parse_server_info("maxmemory:0\r\nmaxmemory_policy:allkeys-lru\r\n"), {}),
        "");
    EXPECT_EQ(
        eviction_risk(parse_server_info("maxmemory:100\r\nmaxmemory_policy:noeviction\r\n"), {}),
        "");
}

TEST(server_info, a_node_that_does_not_say_counts_as_one_that_can_evict) {
    // INFO server only (an older reply, a proxy): nothing rules evictions out.
    const auto info = parse_server_info("# Server\r\nrun_id:abc\r\nuptime_in_seconds:1\r\n");
    EXPECT_FALSE(info.maxmemory);
    EXPECT_FALSE(info.evicted_keys);
    EXPECT_NE(eviction_risk(info, {}).find("evictions cannot be ruled out"), std::string::npos);
    EXPECT_NE(
        eviction_risk(parse_server_info("maxmemory:x1\r\nmaxmemory_policy:noeviction\r\n"), {}),
        "");
}

TEST(server_info, hostile_values_stay_bounded_and_printable) {
    const auto info = parse_server_info(
        "uptime_in_seconds:99999999999999\r\nmaxmemory:5\r\nmaxmemory_policy:\x1b[31m\r\n"
        "evicted_keys:-3\r\n");
    EXPECT_EQ(info.uptime_seconds, 365LL * 24 * 3600);
    EXPECT_EQ(info.maxmemory_policy, "?[31m");
    EXPECT_FALSE(info.evicted_keys);
}

TEST(server_info, secrets_are_cut_where_shown_never_where_compared) {
    // Review finding F5: with the password "no", "noeviction" became "***eviction" before
    // the comparison, and a healthy node lost its vote ("can evict keys").
    const auto healthy = parse_server_info(
        "run_id:0123456789abcdef\r\nmaxmemory:1048576\r\nmaxmemory_policy:noeviction\r\n");
    EXPECT_EQ(healthy.maxmemory_policy, "noeviction");
    EXPECT_EQ(healthy.run_id, "0123456789abcdef");
    EXPECT_EQ(eviction_risk(healthy, {"no"}), "");
    // Shown: the secret is cut out.
    const auto echoing = parse_server_info("maxmemory:1\r\nmaxmemory_policy:hunter2-lru\r\n");
    EXPECT_EQ(eviction_risk(echoing, {"hunter2"}), "can evict keys: maxmemory-policy ***-lru");
}

} // namespace

namespace {

// Uptime's whole seconds place the start up to a second late, differently at each reading:
// the earliest for the same server stays (a placement moving later by itself read as a new
// restart, whose ceilings had to be read again, and after the maximum were not: review 8).
TEST(server_info, replication_says_role_replication_id_and_promotion) {
    const auto primary =
        parse_server_info("# Replication\r\nrole:master\r\nconnected_slaves:1\r\nmaster_replid:"
                          "8c2f\r\nmaster_replid2:0000000000000000000000000000000000000000\r\n");
    EXPECT_EQ(primary.role, "master");
    EXPECT_EQ(primary.replication_id, "8c2f");
    EXPECT_FALSE(primary.promoted_since_start);
    EXPECT_EQ(not_primary_reason(primary, {}), "");

    const auto promoted = parse_server_info("role:master\nmaster_replid:9d\nmaster_replid2:8c2f\n");
    EXPECT_TRUE(promoted.promoted_since_start);

    const auto replica = parse_server_info("role:slave\r\nmaster_host:10.0.0.1\r\n");
    EXPECT_EQ(not_primary_reason(replica, {}), "not a primary: INFO replication says role:slave");
    EXPECT_EQ(not_primary_reason(parse_server_info("role:\x1b[31mpw\r\n"), {"pw"}),
              "not a primary: INFO replication says role:?[31m***");

    EXPECT_FALSE(primary.requires_replicas);
    EXPECT_TRUE(parse_server_info("role:master\r\nmin_slaves_good_slaves:1\r\n").requires_replicas);

    const auto silent = parse_server_info("# Server\r\nrun_id:abc\r\n");
    EXPECT_EQ(not_primary_reason(silent, {}), "") << "no replication section says nothing";
    EXPECT_FALSE(silent.promoted_since_start);
}

TEST(uptime_start, keeps_the_earliest_placement_of_the_same_server) {
    using namespace std::chrono_literals;
    using redlock::detail::clock;
    using redlock::detail::uptime_start;
    redlock::detail::server_info info;
    const clock::time_point restart(clock::duration(1h));
    // First read 300 ms after the restart: uptime 0, placed at the read.
    info.uptime_seconds = 0;
    const auto first = uptime_start(info, restart + 300ms, std::nullopt);
    EXPECT_EQ(first, restart + 300ms);
    // A refresh 1,005 ms later says 1 s: restart + 305 ms alone, the earlier one kept.
    info.uptime_seconds = 1;
    EXPECT_EQ(uptime_start(info, restart + 1305ms, first), first);
    // A later reading that places it earlier (closer to the real restart) wins.
    info.uptime_seconds = 3;
    EXPECT_EQ(uptime_start(info, restart + 3100ms, first), restart + 100ms);
    // Never before the real restart: whole seconds round down.
    EXPECT_GE(uptime_start(info, restart + 3100ms, first), restart);
    // Uptime went down with the same run_id (none sent, or a proxy's): a restart, placed at
    // the new reading, not kept at the old process's start (review 8).
    info.uptime_seconds = 0;
    EXPECT_EQ(uptime_start(info, restart + 5s, restart + 100ms), restart + 5s);
}

} // namespace
