// The topology's verbs as faults (compose/local-nodes.sh): a killed node stays down until it
// is started, on either backend; and on the container topology (REDLOCK_TOPOLOGY=containers)
// the network faults, made inside a node's own network namespace: a partition that drops
// every packet, so that a client waits for answers that never come instead of being
// refused. Local processes share the host's loopback and have no such fault (the fault
// proxy cuts them per client in faults_test.cpp): the network tests are skipped there.
#include "support/fixture.hpp"

#include <thread>

namespace redlock::test {
namespace {

using namespace std::chrono_literals;

bool answers(int node) {
    try {
        return inspector(node).run({"PING"}) == "PONG";
    } catch (const std::exception&) {
        return false;
    }
}

TEST_F(nodes_test, a_killed_node_stays_down_until_it_is_started) {
    inspector(2).run({"SET", "before", "1"});
    topology::kill(2);
    // No restart policy brings it back, on either backend.
    std::this_thread::sleep_for(1500ms);
    EXPECT_FALSE(answers(2));
    topology::restart(2);
    EXPECT_TRUE(answers(2));
    EXPECT_EQ(inspector(2).get("before"), std::nullopt) << "a restart without persistence is empty";
}

TEST_F(nodes_test, a_restart_is_empty_even_after_a_save) {
    auto look = inspector(3);
    look.run({"SET", "saved", "1"});
    // A test may turn persistence on; the restart must still forget everything.
    ASSERT_EQ(look.run({"SAVE"}), "OK");
    topology::restart(3);
    EXPECT_EQ(inspector(3).get("saved"), std::nullopt);
}

class network_faults_test : public nodes_test {
protected:
    void SetUp() override {
        if (!topology::containers()) {
            GTEST_SKIP() << "network faults need REDLOCK_TOPOLOGY=containers: local nodes "
                            "share the host's loopback (faults_test.cpp cuts them per client "
                            "with the fault proxy)";
        }
        nodes_test::SetUp();
    }
    void TearDown() override {
        if (topology::containers()) {
            nodes_test::TearDown();
        }
    }
};

TEST_F(network_faults_test, a_partitioned_minority_times_out_and_the_majority_grants) {
    blocking_client client(config());
    std::error_code ec;
    // Connected first: the partition then cuts established connections, not new ones.
    auto warm = client.acquire("warm", options(), ec);
    ASSERT_FALSE(ec) << warm.message;
    client.release(warm.lock, ec);
    ASSERT_TRUE(all_keys_gone());

    topology::partition(4);
    topology::partition(5);
    EXPECT_FALSE(answers(4)) << "a partitioned node must not answer";
    auto r = client.acquire("cut", options(2s), ec);
    ASSERT_FALSE(ec) << r.message;
    EXPECT_EQ(count(r.votes, node_outcome::granted), 3u);
    EXPECT_NE(r.votes[3].outcome, node_outcome::granted);
    EXPECT_NE(r.votes[4].outcome, node_outcome::granted);
    auto released = client.release(r.lock, ec);
    EXPECT_FALSE(ec) << released.message;

    topology::heal(4);
    topology::heal(5);
    EXPECT_TRUE(answers(4) && answers(5));
    // The cut connections may still deliver their SET once healed: the TTL bounds it.
    EXPECT_TRUE(all_keys_gone(5s)) << keys_everywhere();
    // The healed nodes take the client's locks again (the acquire decides at a quorum, so
    // their SET is looked for on them rather than in the votes). A key of its own per try: a
    // try's SET may reach a node still reconnecting after the release gave up on it.
    int tries = 0;
    EXPECT_TRUE(eventually(
        [&] {
            std::error_code again;
            const std::string key = "healed:" + std::to_string(++tries);
            auto all = client.acquire(key, options(), again);
            if (again) {
                return false;
            }
            const auto token = all.lock.token();
            const bool landed = eventually(
                [&] { return inspector(4).get(key) == token && inspector(5).get(key) == token; },
                1s);
            client.release(all.lock, again);
            return landed;
        },
        10s))
        << "the client reaches the healed nodes again (" << tries << " tries)";
}

TEST_F(network_faults_test, a_partitioned_majority_refuses_the_lock_without_hanging) {
    blocking_client client(config());
    std::error_code ec;
    auto warm = client.acquire("warm", options(), ec);
    ASSERT_FALSE(ec) << warm.message;
    client.release(warm.lock, ec);
    for (int node : {1, 2, 3}) {
        topology::partition(node);
    }
    const auto start = clock_type::now();
    auto r = client.acquire("minority", options(2s), ec);
    EXPECT_EQ(ec, errc::quorum_unreachable) << r.message;
    EXPECT_LT(clock_type::now() - start, 2s) << "decided by node_timeout, not by TCP";
    EXPECT_LE(count(r.votes, node_outcome::granted), 2u);
    for (int node : {1, 2, 3}) {
        topology::heal(node);
    }
    // What reached the minority was undone; what reaches the majority late expires.
    EXPECT_TRUE(all_keys_gone(5s)) << keys_everywhere();
}

TEST_F(network_faults_test, a_delayed_node_misses_its_vote) {
    if (!topology::delay(5, 300ms)) {
        GTEST_SKIP() << "this kernel has no tc netem (CONFIG_NET_SCH_NETEM): no delay fault";
    }
    blocking_client client(config());
    std::error_code ec;
    auto warm = client.acquire("warm", options(), ec); // the handshakes are not what is timed
    ASSERT_FALSE(ec) << warm.message;
    client.release(warm.lock, ec);
    auto o = options(2s);
    o.node_timeout = default_node_timeout();
    auto r = client.acquire("slow", o, ec);
    ASSERT_FALSE(ec) << r.message;
    EXPECT_NE(r.votes[4].outcome, node_outcome::granted) << "300 ms is beyond node_timeout";
    client.release(r.lock, ec);
    topology::heal(5);
    EXPECT_TRUE(all_keys_gone(5s)) << keys_everywhere();
}

} // namespace
} // namespace redlock::test
