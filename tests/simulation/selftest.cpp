// The simulation's own parts checked against what they promise: a simulation that lies
// about Redis, the network or time finds nothing (or finds ghosts).
#include "history.hpp"
#include "sim_clock.hpp"
#include "sim_network.hpp"

#include "sim_lua.hpp"
#include "sim_node.hpp"
#include "sim_world.hpp"
#include "transport/node_connection.hpp"

#include "transport/commands.hpp"
#include "transport/scripts.hpp"

#include "redlock/error.hpp"

#include <boost/asio/strand.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace redlock::sim {
namespace {

std::string run(sim_node& n, std::vector<std::string> args) {
    return n.execute(args, "test");
}

TEST(SimNode, SetNxPxExpiresOnTheNodesClock) {
    world w(1, false);
    sim_node n(w, 0, drift_clock{0, 1.0}, {});
    EXPECT_EQ(run(n, {"SET", "k", "a", "NX", "PX", "100"}), "+OK\r\n");
    EXPECT_EQ(run(n, {"SET", "k", "b", "NX", "PX", "100"}), "$-1\r\n");
    EXPECT_EQ(run(n, {"GET", "k"}), "$1\r\na\r\n");
    w.at(99 * ms, -1, [] {});
    w.run(nullptr, sec);
    EXPECT_EQ(run(n, {"GET", "k"}), "$1\r\na\r\n");
    w.at(100 * ms, -1, [] {});
    w.run(nullptr, sec);
    EXPECT_EQ(run(n, {"GET", "k"}), "$-1\r\n");
    EXPECT_EQ(n.live_lock_keys().size(), 0u);
}

TEST(SimNode, ScriptsRunInLuaBehindTheCache) {
    world w(1, false);
    sim_node n(w, 0, drift_clock{0, 1.0}, {});
    const std::string release(detail::release_script.sha1);
    const std::string extend(detail::extend_script.sha1);
    EXPECT_EQ(run(n, {"SET", "k", "t1", "NX", "PX", "100"}), "+OK\r\n");
    EXPECT_EQ(run(n, {"EVALSHA", release, "1", "k", "t1"}).substr(0, 9), "-NOSCRIPT");
    EXPECT_EQ(run(n, {"EVAL", std::string(detail::release_script.text), "1", "k", "t2"}), ":0\r\n");
    EXPECT_EQ(run(n, {"EVALSHA", release, "1", "k", "t1"}), ":1\r\n");
    // extend: compare-and-pexpire, and re-create only where missing when asked.
    EXPECT_EQ(run(n, {"EVAL", std::string(detail::extend_script.text), "1", "k", "t1", "50", "0"}),
              ":0\r\n");
    EXPECT_EQ(run(n, {"EVALSHA", extend, "1", "k", "t1", "50", "1"}), ":1\r\n");
    EXPECT_EQ(run(n, {"EVALSHA", extend, "1", "k", "t2", "50", "1"}), ":0\r\n");
    EXPECT_EQ(run(n, {"PTTL", "k"}), ":50\r\n");
    n.flush_scripts();
    EXPECT_EQ(run(n, {"EVALSHA", extend, "1", "k", "t1", "50", "0"}).substr(0, 9), "-NOSCRIPT");
    // Any script runs, with Redis' conversions and errors (the conformance test compares
    // them with a real node's).
    EXPECT_EQ(run(n, {"EVAL", "return {1, nil, 3.7}", "0"}), "*1\r\n:1\r\n");
    EXPECT_EQ(run(n, {"HSET", "h", "mode", "shared"}), ":1\r\n");
    const std::string get = "return redis.call('GET', KEYS[1])";
    EXPECT_EQ(run(n, {"EVAL", get, "1", "h"}),
              "-WRONGTYPE Operation against a key holding the wrong kind of value script: " +
                  sha1_hex(get) + ", on @user_script:1.\r\n");
    EXPECT_EQ(run(n, {"EVALSHA", sha1_hex(get), "1", "k"}), "$2\r\nt1\r\n");
}

TEST(SimNode, FencingCountersSurviveARestartLockKeysDoNot) {
    world w(1, false);
    sim_node n(w, 0, drift_clock{0, 1.0}, {});
    const std::string acquire(detail::acquire_script.text);
    const std::string raise(detail::fence_raise_script.text);
    EXPECT_EQ(run(n, {"EVAL", acquire, "2", "k", "{k}:fence", "t1", "100", "1"}), "$1\r\n0\r\n");
    EXPECT_EQ(run(n, {"EVAL", raise, "2", "k", "{k}:fence", "t1", "7"}), ":1\r\n");
    EXPECT_EQ(run(n, {"EVAL", raise, "2", "k", "{k}:fence", "t1", "7"}), ":0\r\n");
    EXPECT_EQ(run(n, {"EVAL", acquire, "2", "k", "{k}:fence", "t2", "100", "1"}), "$-1\r\n");
    n.crash();
    n.restart();
    EXPECT_EQ(run(n, {"GET", "k"}), "$-1\r\n");
    EXPECT_EQ(run(n, {"EVAL", acquire, "2", "k", "{k}:fence", "t2", "100", "1"}), "$1\r\n7\r\n");
    EXPECT_EQ(run(n, {"NONSENSE"}).substr(0, 4), "-ERR");
}

TEST(SimNode, HoldersExpireOnTheNodesClockAndReleasesArePublished) {
    // The scripts' answers are held to Redis' by redlock_sim_conformance; here what only the
    // simulation has: a drifting node clock and the release messages.
    world w(1, false);
    sim_node n(w, 0, drift_clock{0, 2.0}, {});
    std::vector<std::string> published;
    n.on_publish = [&](const std::string& channel, const std::string& payload) {
        published.push_back(channel + " " + payload);
    };
    const std::string holders(detail::holders_acquire_script.text);
    const std::string release(detail::release_script.text);
    EXPECT_EQ(run(n, {"EVAL", holders, "1", "k", "t1/0", "100", "2"}), ":1\r\n");
    EXPECT_EQ(run(n, {"EVAL", holders, "1", "k", "t2/1", "300", "2"}), ":1\r\n");
    EXPECT_EQ(run(n, {"EVAL", holders, "1", "k", "t3/0", "300", "2"}), "$-1\r\n");
    w.at(50 * ms, -1, [] {}); // 100 ms on the node's clock
    w.run(nullptr, sec);
    EXPECT_EQ(run(n, {"EVAL", holders, "1", "k", "t3/0", "300", "2"}), ":1\r\n");
    EXPECT_EQ(run(n, {"EVAL", release, "1", "k", "t2/1", "a1"}), ":1\r\n");
    EXPECT_EQ(run(n, {"EVAL", release, "1", "k", "t2/1"}), ":0\r\n");
    EXPECT_EQ(published, std::vector<std::string>{"redlock:released:k a1"});
    w.at(200 * ms, -1, [] {}); // t3's deadline, 400 ms on the node's clock
    w.run(nullptr, sec);
    EXPECT_EQ(run(n, {"TYPE", "k"}), "+none\r\n");
    EXPECT_TRUE(n.live_lock_keys().empty());
}

TEST(SimClock, AlarmsFireWhenTheLocalClockGetsThereAndNeverStale) {
    world w(1, false);
    w.add_clients(1);
    auto strand = boost::asio::make_strand(w.io().get_executor());
    sim_time_source time(w, 0, drift_clock{5 * sec, 2.0}, strand);
    auto a = time.make_alarm();
    const auto start = time.now();
    std::vector<std::string> fired;
    a->arm(start + std::chrono::milliseconds(100), [&] { fired.push_back("first"); });
    // Re-armed before the first wake-up (its event stays queued): only the second runs.
    w.at(40 * ms, -1, [&] {
        a->arm(start + std::chrono::milliseconds(300), [&] { fired.push_back("second"); });
    });
    w.run(nullptr, 10 * sec);
    ASSERT_EQ(fired, std::vector<std::string>{"second"});
    EXPECT_EQ(w.now(), 150 * ms); // local runs twice as fast
    EXPECT_GE(time.now(), start + std::chrono::milliseconds(300));
    a->arm(time.now() + std::chrono::milliseconds(10), [&] { fired.push_back("cancelled"); });
    a->cancel();
    w.run(nullptr, 20 * sec);
    EXPECT_EQ(fired.size(), 1u);
}

TEST(SimWorld, APausedClientsEventsWaitForItsResume) {
    world w(1, false);
    w.add_clients(1);
    std::vector<real_ns> ran;
    w.at(10 * ms, 0, [&] { ran.push_back(w.now()); });
    w.at(20 * ms, 0, [&] { ran.push_back(w.now()); });
    w.at(5 * ms, -1, [&] { w.pause(0); });
    w.at(50 * ms, -1, [&] { w.resume(0); });
    w.run(nullptr, sec);
    EXPECT_EQ(ran, (std::vector<real_ns>{50 * ms, 50 * ms}));
}

struct recorder final : detail::reply_target {
    std::vector<std::string> got;
    bool in_send = false;
    void on_reply(std::uint64_t tag, const detail::node_reply& r) override {
        EXPECT_FALSE(in_send) << "reply inside send()";
        got.push_back(
            std::to_string(tag) + ":" +
            (r.error ? r.error.message() : std::string(r.reply->str ? r.reply->str : "")));
    }
};

/// A world with one client and one node, and the client's history.
struct one_client_world {
    explicit one_client_world(std::uint64_t seed)
        : w(seed, false)
        , h((w.add_clients(1), w)) {
        h.set_clock(0, drift_clock{});
    }
    world w;
    history h;
};

/// The production node_connection of that client to that node, over the simulated network.
struct one_link : one_client_world {
    one_link(std::uint64_t seed, const net_faults& net)
        : one_client_world(seed)
        , n(w, 0, drift_clock{}, {})
        , strand(boost::asio::make_strand(w.io().get_executor()))
        , path(std::make_shared<sim_path>(w, h, n, 0, drift_clock{}, net))
        , link(strand, sim_address(), config,
               std::make_unique<sim_time_source>(w, 0, drift_clock{}, strand),
               path->connector(strand)) {}
    static node_address sim_address() {
        node_address address;
        address.host = "sim";
        return address;
    }
    sim_node n;
    client_config config;
    boost::asio::any_io_executor strand;
    std::shared_ptr<sim_path> path;
    detail::node_connection link;
};

TEST(SimNetwork, NodeConnectionRepliesInSendOrderAndACrashFailsWhatIsPending) {
    net_faults net;
    net.tail_rate = 0.5; // reorder-prone latencies: FIFO must hold anyway
    one_link s(7, net);
    auto& w = s.w;
    auto& n = s.n;
    auto& link = s.link;
    auto target = std::make_shared<recorder>();
    for (std::uint64_t i = 0; i < 20; ++i) {
        target->in_send = true;
        link.send(detail::set_nx_px("k" + std::to_string(i), "t", "1000"), target, i);
        target->in_send = false;
    }
    w.run(nullptr, 10 * sec);
    ASSERT_EQ(target->got.size(), 20u);
    for (std::size_t i = 0; i < 20; ++i) {
        EXPECT_EQ(target->got[i], std::to_string(i) + ":OK");
    }
    EXPECT_TRUE(link.started_at().has_value());
    EXPECT_EQ(link.readiness(), detail::link_readiness::ready);
    // A crash resets the connection: pending commands fail, none is lost.
    target->got.clear();
    for (std::uint64_t i = 0; i < 5; ++i) {
        link.send(detail::set_nx_px("x", "t", "1000"), target, i);
    }
    n.crash();
    w.run(nullptr, w.now() + 10 * sec);
    ASSERT_EQ(target->got.size(), 5u);
    EXPECT_EQ(target->got[0], "0:" + make_error_code(errc::connection_failed).message());
    link.shutdown(std::chrono::milliseconds(50));
    target->got.clear();
    link.send(detail::set_nx_px("y", "t", "1000"), target, 9);
    w.run(nullptr, w.now() + 10 * sec);
    ASSERT_EQ(target->got.size(), 1u);
    EXPECT_EQ(target->got[0], "9:" + make_error_code(errc::cancelled).message());
}

TEST(SimNetwork, AConnectionReadsItsNodeEveryRefreshIntervalWhileConnectedIdleOrNot) {
    one_link s(11, net_faults{});
    auto& w = s.w;
    auto& link = s.link;
    int reads = 0;
    link.on_server_read([&] { ++reads; });
    auto target = std::make_shared<recorder>();
    link.send(detail::set_nx_px("k", "t", "1000"), target, 1);
    // Idle from here: INFO and the clock mark are read at connect and then every second
    // (each calls on_server_read), so that a step of the node's clock is seen within one.
    EXPECT_FALSE(w.run(nullptr, 10 * sec)) << "the refresh never stops while connected";
    ASSERT_EQ(target->got.size(), 1u);
    EXPECT_GE(reads, 2 * 9);
    EXPECT_LE(reads, 2 * 11);
    // Shut down, it reads no more, and the world comes to rest.
    link.shutdown(std::chrono::milliseconds(0));
    const int at_shutdown = reads;
    EXPECT_TRUE(w.run(nullptr, w.now() + 600 * sec));
    EXPECT_EQ(reads, at_shutdown);
}

} // namespace
} // namespace redlock::sim
