// Faults injected for real, one scenario each, with the invariants checked on the nodes:
// replies lost after the SET ran, latency beyond the TTL, connections cut mid-operation,
// a paused node during extend, a client frozen mid-acquire, and server-side errors.
#include "support/fixture.hpp"
#include "support/proxied_nodes.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/use_future.hpp>

#include <future>
#include <thread>

namespace redlock::test {
namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;

/// nodes_test with a fault proxy in front of every node.
class proxied_test : public nodes_test {
protected:
    proxied_nodes nodes{5};

    client_config proxied_config() {
        auto c = config();
        c.nodes = nodes.addresses();
        return c;
    }
    void TearDown() override {
        nodes.heal_all();
        nodes_test::TearDown();
    }
};

class dropped_replies : public proxied_test, public ::testing::WithParamInterface<int> {};

TEST_P(dropped_replies, the_set_lands_unheard_and_no_copy_survives) {
    const int dropped = GetParam();
    blocking_client client(proxied_config());
    std::error_code ec;
    // Connected first, so that the drops hit established connections.
    auto warm = client.acquire("warm", options(), ec);
    ASSERT_FALSE(ec) << warm.message;
    client.release(warm.lock, ec);
    for (int node = 1; node <= dropped; ++node) {
        nodes.proxy(node).set_mode(fault_proxy::mode::drop_replies);
    }
    auto r = client.acquire("unheard", options(), ec);
    if (dropped < 3) {
        ASSERT_FALSE(ec) << r.message;
        // Decided at quorum without these nodes: their SET may still be in the proxy's
        // hands (its own thread) when the acquire returns. It lands; it need not have yet.
        for (int node = 1; node <= dropped; ++node) {
            EXPECT_TRUE(eventually([&] {
                return inspector(node).get("unheard") == r.lock.token();
            })) << "node "
                << node << " ran the SET it never answered";
        }
        // Decided at quorum: the other answers may still be on their way.
        EXPECT_GE(count(r.votes, node_outcome::granted), 3u);
        for (int node = 1; node <= dropped; ++node) {
            EXPECT_NE(r.votes[static_cast<std::size_t>(node - 1)].outcome, node_outcome::granted);
        }
        auto released = client.release(r.lock, ec);
        EXPECT_FALSE(ec) << released.message;
        EXPECT_GE(released.released, 3u);
    } else {
        EXPECT_EQ(ec, errc::quorum_unreachable) << r.message;
    }
    // The deletes reached the silent nodes too, in order behind the SETs.
    EXPECT_TRUE(all_keys_gone()) << keys_everywhere();
}

INSTANTIATE_TEST_SUITE_P(on_1_2_and_3_nodes, dropped_replies, ::testing::Values(1, 2, 3));

// A fresh client's first command used to wait for the connect and the handshake inside its
// node_timeout. Behind a password the AUTH round trip comes first (commands wait for it), so
// with 100 ms each way a first SET is answered about 200 ms after the acquire starts: over a
// 150 ms node_timeout, every vote was lost. The first attempt now waits for the connections
// (up to connect_timeout), and its node_timeout covers only the SET's own round trip.
TEST_F(proxied_test, a_fresh_clients_first_acquire_does_not_pay_for_the_handshake) {
    for (int node = 1; node <= 5; ++node) {
        nodes.proxy(node).set_latency(100ms);
    }
    auto c = proxied_config();
    for (auto& address : c.nodes) {
        // The default user has no password: AUTH default <anything> passes, and comes first.
        address = "redis://default:any@" + address;
    }
    blocking_client client(c);
    auto o = options();
    o.node_timeout = 150ms;
    o.retry.max_attempts = 1;
    std::error_code ec;
    auto r = client.acquire("fresh", o, ec);
    ASSERT_FALSE(ec) << r.message;
    EXPECT_GE(count(r.votes, node_outcome::granted), 3u);
    client.release(r.lock, ec);
    EXPECT_FALSE(ec);
    EXPECT_TRUE(all_keys_gone(2s)) << keys_everywhere();
}

TEST_F(proxied_test, latency_beyond_the_ttl_never_yields_a_stale_lock) {
    blocking_client client(proxied_config());
    std::error_code ec;
    auto warm = client.acquire("warm", options(), ec);
    ASSERT_FALSE(ec) << warm.message;
    client.release(warm.lock, ec);

    auto o = options(200ms);
    o.node_timeout = 500ms; // the validity horizon, not the node timeout, bounds the wait
    nodes.proxy(1).set_latency(300ms);
    auto one_slow = client.acquire("slow", o, ec);
    ASSERT_FALSE(ec) << one_slow.message;
    EXPECT_EQ(one_slow.votes[0].outcome, node_outcome::pending) << "decided without node 1";
    EXPECT_GT(one_slow.lock.remaining(), 0ms);
    client.release(one_slow.lock, ec);

    for (int node = 2; node <= 3; ++node) {
        nodes.proxy(node).set_latency(300ms);
    }
    const auto start = clock_type::now();
    auto majority_slow = client.acquire("slow", o, ec);
    EXPECT_EQ(ec, errc::validity_expired) << majority_slow.message;
    EXPECT_FALSE(majority_slow.lock.held());
    EXPECT_LT(since(start), 200ms + 300ms) << "gave up at the validity horizon";
    // Every copy is gone once the TTL has run out, released or expired.
    EXPECT_TRUE(all_keys_gone(2s));
}

TEST_F(proxied_test, connections_cut_in_the_middle_of_each_operation) {
    blocking_client client(proxied_config());
    std::error_code ec;
    auto warm = client.acquire("warm", options(), ec);
    ASSERT_FALSE(ec) << warm.message;
    client.release(warm.lock, ec);
    for (int node = 1; node <= 5; ++node) {
        nodes.proxy(node).set_latency(40ms);
    }
    auto cut_soon = [&](std::vector<int> which) {
        return std::async(std::launch::async, [&, which] {
            std::this_thread::sleep_for(15ms);
            for (int node : which) {
                nodes.proxy(node).reset_connections();
            }
        });
    };
    auto o = options(2s);
    o.node_timeout = 200ms;

    // Acquire: two of five cut after the SETs went out still leaves a quorum.
    auto cutting = cut_soon({1, 2});
    auto r = client.acquire("cut", o, ec);
    cutting.wait();
    ASSERT_FALSE(ec) << r.message;
    EXPECT_EQ(r.votes[0].error, errc::connection_failed);
    EXPECT_EQ(count(r.votes, node_outcome::granted), 3u);

    // Extend: cut on three; the two left cannot make a quorum.
    std::this_thread::sleep_for(100ms); // the cut connections come back
    cutting = cut_soon({3, 4, 5});
    auto extended = client.extend(r.lock, 2s, ec);
    cutting.wait();
    EXPECT_EQ(ec, errc::quorum_unreachable) << extended.message;

    // Release: cut on one; the rest release, and the cut node's copy expires by its TTL.
    std::this_thread::sleep_for(100ms);
    cutting = cut_soon({1});
    auto released = client.release(r.lock, ec);
    cutting.wait();
    EXPECT_GE(released.released, 2u) << released.message;
    EXPECT_TRUE(all_keys_gone(3s));

    // A failed acquire cut on a majority: the reachable nodes are cleaned up at once.
    std::this_thread::sleep_for(100ms);
    cutting = cut_soon({1, 2, 3});
    auto failed = client.acquire("cut-majority", o, ec);
    cutting.wait();
    EXPECT_EQ(ec, errc::quorum_unreachable) << failed.message;
    EXPECT_FALSE(inspector(4).get("cut-majority"));
    EXPECT_FALSE(inspector(5).get("cut-majority"));
    EXPECT_TRUE(all_keys_gone(3s)) << "copies on the cut nodes expire by their TTL";
}

TEST_F(nodes_test, a_node_paused_during_extend_does_not_stop_the_quorum) {
    blocking_client client(config());
    std::error_code ec;
    auto r = client.acquire("extend-paused", options(2s), ec);
    ASSERT_FALSE(ec) << r.message;
    ASSERT_TRUE(eventually([] { return keys_everywhere() == 5; }));
    topology::pause(2);
    auto extended = client.extend(r.lock, 30s, ec);
    ASSERT_FALSE(ec) << extended.message;
    EXPECT_NE(extended.votes[1].outcome, node_outcome::granted);
    EXPECT_GT(inspector(1).pttl("extend-paused"), 20000);
    topology::resume(2);
    // Its PEXPIRE waited in the socket and runs now, in order.
    EXPECT_TRUE(eventually([] { return inspector(2).pttl("extend-paused") > 20000; }));
    client.release(extended.lock, ec);
    EXPECT_TRUE(all_keys_gone());
}

TEST_F(proxied_test, a_client_frozen_between_sending_and_reading_gets_no_stale_lock) {
    io_thread io;
    client c(io.executor(), proxied_config());
    // Warm the connections so that the SETs go out at once.
    settled<acquire_result> warmed;
    c.async_acquire("warm", options(), warmed);
    auto [warm_error, warm] = warmed.get();
    ASSERT_FALSE(warm_error) << warm.message;
    c.async_release(warm.lock, asio::use_future).get();
    ASSERT_TRUE(all_keys_gone());
    for (int node = 1; node <= 5; ++node) {
        nodes.proxy(node).set_latency(150ms);
    }

    auto o = options(200ms);
    o.node_timeout = 1s; // only the validity horizon (195 ms) bounds the attempt
    settled<acquire_result> pending;
    c.async_acquire("frozen", o, pending);
    // Once the SETs have landed on a quorum, the replies are 150 ms away (the proxies delay
    // replies only). Freeze the client's only thread then, for longer than the TTL, as a GC
    // pause or SIGSTOP of the process would. Waiting for the keys, not for a fixed time, keeps
    // the freeze after the sends however slowly the client runs (a sanitizer build).
    const auto landed = [] {
        int copies = 0;
        for (int node = 1; node <= 5; ++node) {
            copies += inspector(node).get("frozen") ? 1 : 0;
        }
        return copies >= 3;
    };
    ASSERT_TRUE(eventually(landed, 2s));
    asio::post(io.context(), [] { std::this_thread::sleep_for(400ms); });
    auto [error, r] = pending.get();
    EXPECT_EQ(error, errc::validity_expired) << r.message;
    EXPECT_FALSE(r.lock.held()) << "a lock " << r.lock.remaining().count() << " ns from expiry";
    EXPECT_TRUE(all_keys_gone());
}

TEST_F(nodes_test, readonly_busy_and_noperm_are_votes_with_their_text) {
    topology::stop(4);
    topology::stop(5);
    const auto no_keys_left = [] {
        return inspector(1).dbsize() + inspector(2).dbsize() + inspector(3).dbsize() == 0;
    };
    blocking_client client(config());
    std::error_code ec;

    // READONLY: node 2 made a replica of node 1.
    inspector replica(2);
    ASSERT_EQ(replica.run({"REPLICAOF", topology::host(1), std::to_string(topology::port(1))}),
              "OK");
    auto readonly = client.acquire("replicated", options(), ec);
    EXPECT_EQ(ec, errc::quorum_unreachable);
    EXPECT_EQ(readonly.votes[1].error, errc::server_error);
    EXPECT_TRUE(readonly.votes[1].server_message.starts_with("READONLY"))
        << readonly.votes[1].server_message;
    // Node 1's cleanup reaches the replica through replication, before it is let go.
    EXPECT_TRUE(eventually(no_keys_left));
    replica.run({"REPLICAOF", "NO", "ONE"});

    // BUSY: node 2 runs a long script.
    ASSERT_EQ(replica.run({"CONFIG", "SET", "busy-reply-threshold", "50"}), "OK");
    auto script = std::async(std::launch::async, [] {
        inspector(2).run({"EVAL",
                          "local s = redis.call('TIME') while true do local n = redis.call('TIME') "
                          "if (n[1] - s[1]) * 1000000 + (n[2] - s[2]) > 600000 then break end end "
                          "return 1",
                          "0"});
    });
    std::this_thread::sleep_for(150ms);
    auto busy = client.acquire("busy", options(), ec);
    script.wait();
    replica.run({"CONFIG", "SET", "busy-reply-threshold", "5000"});
    EXPECT_EQ(ec, errc::quorum_unreachable);
    EXPECT_EQ(busy.votes[1].error, errc::server_error);
    EXPECT_TRUE(busy.votes[1].server_message.starts_with("BUSY")) << busy.votes[1].server_message;
    EXPECT_TRUE(eventually(no_keys_left));

    // NOPERM: on node 2 the client's ACL user may only touch other keys.
    ASSERT_EQ(replica.run({"ACL", "SETUSER", "narrow", "on", ">pw", "~other:*", "+@all"}), "OK");
    auto c = config();
    c.nodes[1] = "redis://narrow:pw@" + c.nodes[1];
    blocking_client narrow(c);
    auto noperm = narrow.acquire("locks:denied", options(), ec);
    replica.run({"ACL", "DELUSER", "narrow"});
    EXPECT_EQ(ec, errc::quorum_unreachable);
    EXPECT_EQ(noperm.votes[1].error, errc::server_error);
    EXPECT_TRUE(noperm.votes[1].server_message.starts_with("NOPERM"))
        << noperm.votes[1].server_message;
    EXPECT_TRUE(eventually(no_keys_left));
}

} // namespace
} // namespace redlock::test
