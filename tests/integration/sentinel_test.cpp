// Nodes that are Sentinel-managed primaries (issue 25, section 3), on a real Sentinel
// topology of local processes (compose/sentinel-nodes.sh): five groups of a primary and a
// replica, three Sentinels, the data nodes and the Sentinels with passwords of their own.
// Its ports follow REDLOCK_BASE_PORT (+800 for the data nodes, +20800 for the Sentinels), so
// that two suites side by side do not meet.
#include "support/fixture.hpp"
#include "support/log_record.hpp"
#include "support/shell.hpp"

#include <hiredis/hiredis.h>

#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace redlock::test {
namespace {

using namespace std::chrono_literals;

/// `command` through the shell, its stdout and stderr together.
shell_result shell(const std::string& command) {
    return run_shell(command + " 2>&1");
}

constexpr const char* data_password = "data-pw-4d2";
constexpr const char* sentinel_password = "watch-pw-9e1";

/// The topology of compose/sentinel-nodes.sh this suite runs.
struct sentinels {
    static int base() {
        const char* text = std::getenv("REDLOCK_BASE_PORT");
        return (text && *text ? std::atoi(text) : 7001) + 800;
    }
    static int sentinel_port(int i) { return base() + 20000 + i; }

    static shell_result script(const std::string& verb) {
        const auto b = std::to_string(base());
        return shell("SENTINEL_GROUPS=5 SENTINEL_BASE_PORT=" + b + " SENTINEL_PORTS_BASE=" +
                     std::to_string(sentinel_port(0)) + " SENTINEL_DIR=/tmp/redlock-sentinel-" + b +
                     " SENTINEL_DATA_PASSWORD=" + data_password + " SENTINEL_PASSWORD=" +
                     sentinel_password + " bash " + REDLOCK_SENTINEL_NODES_SCRIPT + " " + verb);
    }
    static std::string checked(const std::string& verb) {
        auto r = script(verb);
        EXPECT_EQ(r.status, 0) << "sentinel-nodes.sh " << verb << ": " << r.out;
        while (!r.out.empty() && (r.out.back() == '\n' || r.out.back() == ' ')) {
            r.out.pop_back();
        }
        // The verbs that print an address print it on their last line.
        return r.out.substr(r.out.rfind('\n') == std::string::npos ? 0 : r.out.rfind('\n') + 1);
    }

    /// Group g's node as users write it: the data nodes' password, the three Sentinels,
    /// theirs, and the master name.
    static std::string node(int group) {
        return "redis-sentinel://:" + std::string(data_password) + "@" + sentinel_list(3) +
               "?sentinel_password=" + sentinel_password + "#group" + std::to_string(group);
    }
    /// The first `count` Sentinels, comma-separated.
    static std::string sentinel_list(int count) {
        std::string text;
        for (int i = 0; i < count; ++i) {
            text += (i ? ",127.0.0.1:" : "127.0.0.1:") + std::to_string(sentinel_port(i));
        }
        return text;
    }
    static std::vector<std::string> nodes() {
        return {node(1), node(2), node(3), node(4), node(5)};
    }
    /// Group g's replica (host:port): of its two ports, the one its primary is not on.
    static std::string replica(int group) {
        const auto primary = checked("primary " + std::to_string(group));
        const int first = base() + 2 * (group - 1);
        const int port =
            std::stoi(primary.substr(primary.rfind(':') + 1)) == first ? first + 1 : first;
        return "127.0.0.1:" + std::to_string(port);
    }
};

/// One command to the server at `address` (host:port), its reply as text ("(nil)" for nil).
std::string run_on(const std::string& address, const std::vector<std::string>& args) {
    const auto colon = address.rfind(':');
    const timeval timeout{2, 0};
    std::unique_ptr<redisContext, decltype(&redisFree)> c(
        redisConnectWithTimeout(address.substr(0, colon).c_str(),
                                std::stoi(address.substr(colon + 1)), timeout),
        &redisFree);
    if (!c || c->err) {
        return "(cannot connect)";
    }
    freeReplyObject(redisCommand(c.get(), "AUTH %s", data_password));
    auto* reply = command_reply(c.get(), args);
    if (!reply) {
        return "(no reply)";
    }
    std::string text = reply->type == REDIS_REPLY_NIL ? "(nil)"
                       : reply->str                   ? std::string(reply->str, reply->len)
                                                      : std::to_string(reply->integer);
    if (reply->type == REDIS_REPLY_ARRAY) { // ROLE: its first word
        text = reply->elements > 0 && reply->element[0]->str ? reply->element[0]->str : "";
    }
    freeReplyObject(reply);
    return text;
}

std::size_t count_granted(const std::vector<node_vote>& votes) {
    std::size_t n = 0;
    for (const auto& v : votes) {
        n += v.outcome == node_outcome::granted ? 1 : 0;
    }
    return n;
}

class sentinel_test : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        sentinels::script("down");
        const auto up = sentinels::script("up");
        ASSERT_EQ(up.status, 0) << up.out;
        up_at_ = clock_type::now();
    }
    static void TearDownTestSuite() { sentinels::script("down"); }

    /// The fleet maximum of these tests: every data node that has run less (the whole
    /// topology, at first) is quarantined with the defaults.
    static constexpr std::chrono::milliseconds max_ttl = 10s;

    /// The defaults users get, with these nodes and a fleet maximum that fits the test.
    static client_config defaults(std::vector<std::string> nodes = sentinels::nodes()) {
        client_config c;
        c.nodes = std::move(nodes);
        c.fleet_max_ttl = max_ttl;
        return c;
    }
    /// For the tests that are not about the quarantine, on a topology just started.
    static client_config config(std::vector<std::string> nodes = sentinels::nodes()) {
        auto c = defaults(std::move(nodes));
        c.quarantine.enabled = false;
        return c;
    }
    /// Until every data node has run for the fleet maximum (and its drift).
    static void wait_out_the_start() {
        const auto ready_at = up_at_ + max_ttl + 1s;
        if (clock_type::now() < ready_at) {
            std::this_thread::sleep_until(ready_at);
        }
    }

    static inline clock_type::time_point up_at_;
    static lock_options options(std::chrono::milliseconds ttl) {
        lock_options o;
        o.ttl = ttl;
        o.node_timeout = 500ms;
        o.retry.max_attempts = 1;
        return o;
    }
};

TEST_F(sentinel_test, a_sentinel_node_reaches_the_primary_the_sentinels_name) {
    blocking_client client(config());
    std::error_code ec;
    auto lock = client.acquire("sentinel:plain", options(5s), ec);
    ASSERT_FALSE(ec) << lock.message;
    ASSERT_EQ(lock.votes.size(), 5U);
    EXPECT_GE(count_granted(lock.votes), 3U);
    for (int group = 1; group <= 5; ++group) {
        // The third SET may still be on its way when the quorum decided.
        const auto primary = sentinels::checked("primary " + std::to_string(group));
        const auto start = clock_type::now();
        while (run_on(primary, {"GET", "sentinel:plain"}) != lock.lock.token() &&
               since(start) < 2s) {
            std::this_thread::sleep_for(10ms);
        }
        EXPECT_EQ(run_on(primary, {"GET", "sentinel:plain"}), lock.lock.token())
            << "group " << group << "'s primary holds the token";
    }
    client.release(lock.lock, ec);
    EXPECT_FALSE(ec);
    EXPECT_EQ(run_on(sentinels::checked("primary 1"), {"EXISTS", "sentinel:plain"}), "0");
}

TEST_F(sentinel_test, a_replica_given_as_a_plain_address_gets_no_vote) {
    const auto replica = sentinels::replica(2);
    ASSERT_NE(run_on(replica, {"ROLE"}).find("slave"), std::string::npos)
        << replica << " should be group 2's replica";
    // A writable replica (replica-read-only no) takes the SET: only the veto keeps its vote
    // from counting. Its next full resync would drop the key.
    ASSERT_EQ(run_on(replica, {"CONFIG", "SET", "replica-read-only", "no"}), "OK");
    // Group 3 holds a blocker: with group 1, only the replica's vote could make a majority.
    const auto group3 = sentinels::checked("primary 3");
    ASSERT_EQ(run_on(group3, {"SET", "sentinel:replica", "blocker", "PX", "60000"}), "OK");
    blocking_client client(config({"redis://:" + std::string(data_password) + "@" + replica,
                                   sentinels::node(1), sentinels::node(3)}));
    std::error_code ec;
    auto attempt = client.acquire("sentinel:replica", options(5s), ec);
    EXPECT_TRUE(ec) << "granted with the replica's vote: " << attempt.message;
    ASSERT_EQ(attempt.votes.size(), 3U);
    EXPECT_EQ(attempt.votes[0].error, errc::node_not_primary);
    EXPECT_EQ(attempt.votes[0].server_message, "not a primary: INFO replication says role:slave");
    ASSERT_EQ(run_on(group3, {"DEL", "sentinel:replica"}), "1");
    auto view = client.inspect("sentinel:replica", ec);
    ASSERT_FALSE(ec);
    EXPECT_EQ(view.nodes[0].not_primary, "not a primary: INFO replication says role:slave");
    EXPECT_EQ(view.nodes[1].not_primary, "");
    const auto status =
        shell(std::string(REDLOCK_CLI_PATH) +
              " --no-quarantine --nodes 'redis://:" + data_password + "@" + replica + "," +
              sentinels::node(1) + "," + sentinels::node(3) + "' status sentinel:replica");
    EXPECT_NE(status.out.find("(not a primary: INFO replication says role:slave: votes do not "
                              "count)"),
              std::string::npos)
        << status.out;
    client.release(attempt.lock, ec);
    EXPECT_EQ(run_on(replica, {"CONFIG", "SET", "replica-read-only", "yes"}), "OK");
}

TEST_F(sentinel_test, a_read_only_replica_is_said_to_be_a_replica_not_a_missing_permission) {
    const auto replica = sentinels::replica(4);
    ASSERT_NE(run_on(replica, {"ROLE"}).find("slave"), std::string::npos)
        << replica << " should be group 4's replica";
    // Read-only, as replicas are by default: it refuses the clock mark's write (READONLY),
    // which is its role, not a permission the user lacks.
    log_record log;
    auto c = config({"redis://:" + std::string(data_password) + "@" + replica, sentinels::node(1),
                     sentinels::node(3)});
    c.log = log.sink();
    blocking_client client(c);
    std::error_code ec;
    auto attempt = client.acquire("sentinel:read-only-replica", options(5s), ec);
    ASSERT_FALSE(ec) << attempt.message;
    ASSERT_EQ(attempt.votes.size(), 3U);
    // Refused (READONLY), or decided by the two primaries before it answered.
    EXPECT_NE(attempt.votes[0].outcome, node_outcome::granted);
    client.release(attempt.lock, ec);
    EXPECT_FALSE(ec);
    // Its INFO has come once inspect says why it has no vote; its clock mark came with it.
    const auto deadline = clock_type::now() + 5s;
    std::string why;
    while (why.empty() && clock_type::now() < deadline) {
        auto view = client.inspect("sentinel:read-only-replica", ec);
        ASSERT_FALSE(ec);
        why = view.nodes[0].not_primary;
        std::this_thread::sleep_for(50ms);
    }
    EXPECT_EQ(why, "not a primary: INFO replication says role:slave");
    EXPECT_NE(log.text().find("not a primary: INFO replication says role:slave"), std::string::npos)
        << log.text();
    EXPECT_EQ(log.text().find("clock mark refused"), std::string::npos) << log.text();
}

TEST_F(sentinel_test, sentinels_that_name_no_primary_are_quoted) {
    blocking_client client(
        config({"redis-sentinel://" + sentinels::sentinel_list(2) +
                    ",127.0.0.1:1?sentinel_password=" + sentinel_password + "#nosuch",
                sentinels::node(1), sentinels::node(2)}));
    std::error_code ec;
    auto attempt = client.acquire("sentinel:nosuch", options(5s), ec);
    ASSERT_EQ(attempt.votes.size(), 3U);
    const auto& why = attempt.votes[0].server_message;
    EXPECT_EQ(attempt.votes[0].error, errc::connection_failed);
    EXPECT_NE(why.find("no majority of the Sentinels (2 of 3) names one primary for \"nosuch\""),
              std::string::npos)
        << why;
    EXPECT_NE(why.find("knows no primary named \"nosuch\""), std::string::npos) << why;
    EXPECT_NE(why.find("127.0.0.1:1 cannot connect"), std::string::npos) << why;
    client.release(attempt.lock, ec);
}

TEST_F(sentinel_test, the_cli_and_status_take_sentinel_nodes) {
    const auto list = sentinels::node(1) + "," + sentinels::node(2) + "," + sentinels::node(3);
    const std::string cli =
        std::string(REDLOCK_CLI_PATH) + " --no-quarantine --nodes '" + list + "' --max-ttl 10s";
    auto acquired = shell(cli + " acquire --ttl 10s sentinel:cli");
    ASSERT_EQ(acquired.status, 0) << acquired.out;
    const auto token = acquired.out.substr(0, acquired.out.find('\n'));
    auto status = shell(cli + " status sentinel:cli");
    EXPECT_EQ(status.status, 0) << status.out;
    EXPECT_NE(status.out.find("redis-sentinel://127.0.0.1:" +
                              std::to_string(sentinels::sentinel_port(0))),
              std::string::npos)
        << status.out;
    EXPECT_NE(status.out.find("#group2"), std::string::npos) << status.out;
    auto released = shell(cli + " release sentinel:cli " + token);
    EXPECT_EQ(released.status, 0) << released.out;
}

// Each side gets its own credentials, and neither reaches a message.
TEST_F(sentinel_test, without_the_sentinels_password_each_refusal_is_quoted) {
    auto c = config({"redis-sentinel://:" + std::string(data_password) + "@" +
                     sentinels::sentinel_list(1) + "#group1"});
    blocking_client refused(c);
    std::error_code ec;
    auto attempt = refused.acquire("sentinel:auth", options(5s), ec);
    ASSERT_TRUE(ec);
    const auto& why = attempt.votes.at(0).server_message;
    EXPECT_NE(why.find("AUTH"), std::string::npos) << why;
    EXPECT_NE(why.find("NOAUTH"), std::string::npos) << why;
    EXPECT_EQ(why.find(data_password), std::string::npos) << why;

    auto wrong =
        config({"redis-sentinel://:" + std::string(data_password) + "@" +
                sentinels::sentinel_list(1) + "?sentinel_password=" + data_password + "#group1"});
    blocking_client wrong_client(wrong);
    attempt = wrong_client.acquire("sentinel:auth", options(5s), ec);
    ASSERT_TRUE(ec);
    EXPECT_NE(attempt.votes.at(0).server_message.find("WRONGPASS"), std::string::npos)
        << attempt.votes.at(0).server_message;
    EXPECT_EQ(attempt.votes.at(0).server_message.find(data_password), std::string::npos);
}

// Split brain: group 2's primary is cut off from its replica and the Sentinels, not killed;
// a client connected to it before keeps that connection (and the server still says
// role:master to it) while the Sentinels promote the replica. The primaries are set up as
// docs/operations.md asks (min-replicas-to-write 1): the old one refuses that client's SET
// once its replica has been gone for min-replicas-max-lag, so the two servers of group 2 never
// both vote for one key. Runs before the failover test, within that test's wait for the
// fresh topology: its clients use a fleet maximum of 2 s.
// Group 2's primary is cut off from its replica and the Sentinels (not killed), and the
// Sentinels promote the replica. A client that hears them (+switch-master) leaves the old
// primary at once; one that cannot (here: it names the old primary by its address, as a
// client cut off with it would keep its connection) is refused there once the old primary
// has been without a replica for min-replicas-max-lag.
TEST_F(sentinel_test, a_primary_cut_off_from_its_replica_refuses_writes_with_min_replicas) {
    const auto old_primary = sentinels::checked("primary 2");
    ASSERT_EQ(run_on(old_primary, {"CONFIG", "SET", "min-replicas-max-lag", "1"}), "OK");
    ASSERT_EQ(run_on(old_primary, {"CONFIG", "SET", "min-replicas-to-write", "1"}), "OK");
    auto short_max = defaults();
    short_max.fleet_max_ttl = 2s;
    auto connected_early = short_max;
    connected_early.quarantine.enabled = false; // the topology may have run less than 2 s
    log_record heard;
    connected_early.log = heard.sink();
    auto cut_off = connected_early;
    cut_off.log = nullptr;
    cut_off.nodes[1] = "redis://:" + std::string(data_password) + "@" + old_primary;
    blocking_client listening(connected_early);
    blocking_client stuck(cut_off);
    std::error_code ec;
    for (auto* client : {&listening, &stuck}) {
        auto warm = client->acquire("split:warm", options(2s), ec);
        ASSERT_FALSE(ec) << "connected to every group's primary before the cut: " << warm.message;
        client->release(warm.lock, ec);
    }

    sentinels::checked("isolate-primary 2");
    const auto new_primary = sentinels::checked("wait-failover 2 " + old_primary + " 40");
    ASSERT_NE(new_primary, old_primary);
    // Past min-replicas-max-lag, and past the promoted replica's quarantine (2 s + drift).
    std::this_thread::sleep_for(2500ms);
    EXPECT_NE(heard.text().find("moved to " + new_primary + " (+switch-master)"), std::string::npos)
        << heard.text();

    // Either client can win only with group 2's vote: groups 4 and 5 hold a blocker.
    const std::string key = "split:k";
    const std::vector<std::string> blocked{sentinels::checked("primary 4"),
                                           sentinels::checked("primary 5")};
    for (const auto& primary : blocked) {
        ASSERT_EQ(run_on(primary, {"SET", key, "blocker", "PX", "60000"}), "OK");
    }
    // The client that heard the switch, connected before the cut, reaches the promoted
    // replica.
    auto promoted_side = listening.acquire(key, options(2s), ec);
    EXPECT_FALSE(ec) << promoted_side.message;
    if (!ec) {
        EXPECT_EQ(promoted_side.votes[1].outcome, node_outcome::granted);
        listening.release(promoted_side.lock, ec);
    }

    // The old primary, still role:master to the clients it kept, refuses the other one for
    // want of a replica.
    auto stale_side = stuck.acquire(key, options(2s), ec);
    EXPECT_TRUE(ec) << "granted with the cut-off primary's vote: " << stale_side.message;
    ASSERT_EQ(stale_side.votes.size(), 5U);
    EXPECT_EQ(stale_side.votes[1].outcome, node_outcome::failed);
    EXPECT_NE(stale_side.votes[1].server_message.find("NOREPLICAS"), std::string::npos)
        << stale_side.votes[1].server_message;

    // A client that asks the Sentinels afresh reaches it too: with groups 1 and 3 held (as
    // the first client's would be, had it won), it needs 2, 4 and 5.
    for (const auto& primary : blocked) {
        ASSERT_EQ(run_on(primary, {"DEL", key}), "1");
    }
    for (const char* group : {"primary 1", "primary 3"}) {
        ASSERT_EQ(run_on(sentinels::checked(group), {"SET", key, "other", "PX", "60000"}), "OK");
    }
    blocking_client after(short_max);
    auto fresh = after.acquire(key, options(2s), ec);
    EXPECT_FALSE(ec) << fresh.message;
    if (!ec) {
        EXPECT_EQ(fresh.votes[1].outcome, node_outcome::granted);
        after.release(fresh.lock, ec);
    }
    for (const char* group : {"primary 1", "primary 3"}) {
        run_on(sentinels::checked(group), {"DEL", key});
    }
}

// The issue's test: a lock held on groups 1, 3 and 4 (groups 2 and 5 had a short blocker
// then); group 1's primary is killed and its replica, which replication never brought the
// lock key to, is promoted. A client that starts after the failover, with the defaults, must
// not count the promoted replica while the lock may stand; with the quarantine off it does,
// and two clients hold the lock.
TEST_F(sentinel_test, a_promoted_replica_without_the_lock_is_quarantined) {
    wait_out_the_start();
    const std::string key = "sentinel:failover";
    const std::vector<std::string> blocked{sentinels::checked("primary 2"),
                                           sentinels::checked("primary 5")};
    for (const auto& primary : blocked) {
        ASSERT_EQ(run_on(primary, {"SET", key, "blocker", "PX", "1500"}), "OK");
    }
    sentinels::checked("freeze-replica 1"); // the lock key never reaches the replica

    auto holder_config = defaults();
    holder_config.reconnect_delay_max = 200ms;
    blocking_client holder(holder_config);
    std::error_code ec;
    auto lock = holder.acquire(key, options(max_ttl), ec);
    ASSERT_FALSE(ec) << lock.message;
    for (const auto& primary : blocked) {
        ASSERT_EQ(run_on(primary, {"GET", key}), "blocker") << "groups 2 and 5 held the blocker";
    }

    const auto old_primary = sentinels::checked("kill-primary 1");
    sentinels::checked("thaw-replica 1");
    const auto new_primary = sentinels::checked("wait-failover 1 " + old_primary + " 40");
    ASSERT_NE(new_primary, old_primary);
    const auto failed_over = clock_type::now();
    ASSERT_EQ(run_on(new_primary, {"EXISTS", key}), "0") << "the promoted replica lacks the lock";
    for (const char* group : {"primary 3", "primary 4"}) {
        ASSERT_EQ(run_on(sentinels::checked(group), {"GET", key}), lock.lock.token());
    }

    // The holder's client finds the new primary: its vote is heard again (quarantined) within
    // a few reconnects.
    std::chrono::milliseconds reached{-1};
    while (since(failed_over) < 10s) {
        auto probe = holder.acquire("sentinel:probe", options(1s), ec);
        if (probe.votes.size() == 5 && probe.votes[0].error == errc::node_quarantined) {
            reached = since(failed_over);
            break;
        }
        if (!ec) {
            holder.release(probe.lock, ec);
        }
        std::this_thread::sleep_for(50ms);
    }
    // The bound docs/operations.md states; measured well under a second here.
    EXPECT_GE(reached.count(), 0) << "the holder's client never reached group 1's new primary";
    EXPECT_LT(reached, 5s);
    std::printf("the holder's client reached the new primary %lld ms after the failover\n",
                static_cast<long long>(reached.count()));

    std::this_thread::sleep_for(1600ms -
                                std::min<std::chrono::milliseconds>(since(failed_over), 1600ms));
    for (const auto& primary : blocked) {
        ASSERT_EQ(run_on(primary, {"EXISTS", key}), "0") << "the blocker expired";
    }

    // A client that never saw the old primary: the promoted replica's uptime is long, and
    // only its promotion (INFO replication) and the Sentinels' word date its role.
    blocking_client late(defaults());
    auto second = late.acquire(key, options(5s), ec);
    EXPECT_TRUE(ec) << "granted while the holder's lock stands: " << second.message;
    ASSERT_EQ(second.votes.size(), 5U);
    const auto& why = second.votes[0].server_message;
    EXPECT_EQ(second.votes[0].error, errc::node_quarantined) << why;
    // Dated by the Sentinels (the promotion came before they named the replica, at least
    // 1.6 s ago), not from this client's first sight of the server (0.0 s ago).
    EXPECT_NE(why.find("promoted to primary"), std::string::npos) << why;
    const auto ago = why.find(" ago, votes count again");
    ASSERT_NE(ago, std::string::npos) << why;
    const auto figure = why.rfind(' ', why.rfind(" s", ago) - 1) + 1;
    EXPECT_GE(std::stod(why.substr(figure)), 1.5) << why;

    // The same client with the quarantine off: the double grant the quarantine prevents.
    blocking_client unguarded(config());
    auto double_grant = unguarded.acquire(key, options(5s), ec);
    EXPECT_FALSE(ec) << "with the quarantine off the promoted replica's vote counts: "
                     << double_grant.message;
    if (!ec) {
        unguarded.release(double_grant.lock, ec);
    }
    holder.release(lock.lock, ec);
}

} // namespace
} // namespace redlock::test
