#include "support/fixture.hpp"

#include <thread>

namespace redlock::test {
namespace {

using namespace std::chrono_literals;

TEST_F(nodes_test, release_deletes_every_copy_and_counts_them) {
    blocking_client client(config());
    std::error_code ec;
    auto r = client.acquire("release-me", options(), ec);
    ASSERT_FALSE(ec);
    ASSERT_TRUE(eventually([] { return keys_everywhere() == 5; }));
    auto released = client.release(r.lock, ec);
    EXPECT_FALSE(ec) << released.message;
    // Complete at a quorum of deletes; the other nodes' deletes finish in the background.
    EXPECT_GE(released.released, 3u);
    EXPECT_EQ(count(released.votes, node_outcome::granted), released.released);
    EXPECT_EQ(count(released.votes, node_outcome::pending), 5u - released.released);
    EXPECT_TRUE(all_keys_gone());
}

TEST_F(nodes_test, release_with_a_wrong_token_leaves_the_holders_key_intact) {
    blocking_client client(config());
    std::error_code ec;
    auto held = client.acquire("owned", options(), ec);
    ASSERT_FALSE(ec);
    ASSERT_TRUE(eventually([] { return keys_everywhere() == 5; }));

    // What the incident's unconditional DEL did: a former holder releasing by key alone.
    lock impostor("owned", "00000000000000000000000000000000", held.lock.valid_until(),
                  held.lock.options());
    auto released = client.release(impostor, ec);
    EXPECT_EQ(ec, errc::lock_lost) << "a quorum answered, none held that token";
    EXPECT_EQ(released.released, 0u);
    EXPECT_GE(count(released.votes, node_outcome::refused), 3u) << "decided at three refusals";
    EXPECT_EQ(count(released.votes, node_outcome::granted), 0u);
    client.inspect("owned", ec); // every node has answered the release by then
    for (int node = 1; node <= 5; ++node) {
        EXPECT_EQ(inspector(node).get("owned"), held.lock.token()) << "node " << node;
    }
}

TEST_F(nodes_test, releasing_an_expired_lock_is_one_quick_round) {
    blocking_client client(config());
    std::error_code ec;
    auto held = client.acquire("short", options(100ms), ec);
    ASSERT_FALSE(ec);
    std::this_thread::sleep_for(200ms);
    const auto start = clock_type::now();
    auto released = client.release(held.lock, ec);
    EXPECT_EQ(ec, errc::lock_lost);
    EXPECT_EQ(released.released, 0u);
    EXPECT_LT(since(start), 1s) << "no retrying after the lock is gone (node-redlock #309)";
}

TEST_F(nodes_test, release_never_deletes_the_next_holders_lock) {
    blocking_client client(config());
    std::error_code ec;
    auto first = client.acquire("stock", options(100ms), ec);
    ASSERT_FALSE(ec);
    std::this_thread::sleep_for(150ms); // first holder overran its TTL
    auto second = client.acquire("stock", options(), ec);
    ASSERT_FALSE(ec) << second.message;
    auto late = client.release(first.lock, ec);
    EXPECT_EQ(ec, errc::lock_lost);
    EXPECT_EQ(late.released, 0u);
    ASSERT_TRUE(eventually([&] { return keys_everywhere() == 5; }));
    for (int node = 1; node <= 5; ++node) {
        EXPECT_EQ(inspector(node).get("stock"), second.lock.token());
    }
}

TEST_F(nodes_test, extend_pushes_the_expiry_on_every_node_from_its_own_start) {
    blocking_client client(config());
    std::error_code ec;
    auto held = client.acquire("extend-me", options(2s), ec);
    ASSERT_FALSE(ec);
    const auto before = clock_type::now();
    auto extended = client.extend(held.lock, 30s, ec);
    ASSERT_FALSE(ec) << extended.message;
    ASSERT_TRUE(extended.lock.held());
    EXPECT_EQ(extended.lock.token(), held.lock.token());
    EXPECT_GE(extended.lock.valid_until(), before + 30s - 302ms);
    EXPECT_LE(extended.lock.valid_until(), clock_type::now() + 30s - 302ms);
    EXPECT_EQ(extended.lock.options().ttl, 30s);
    for (int node = 1; node <= 5; ++node) {
        inspector look(node);
        EXPECT_TRUE(eventually([&] { return look.pttl("extend-me") > 20000; })) << node;
        EXPECT_LE(look.pttl("extend-me"), 30000);
    }
}

TEST_F(nodes_test, extend_by_a_non_owner_is_lock_lost_and_changes_nothing) {
    blocking_client client(config());
    std::error_code ec;
    auto held = client.acquire("not-yours", options(5s), ec);
    ASSERT_FALSE(ec);
    ASSERT_TRUE(eventually([] { return keys_everywhere() == 5; }));
    lock impostor("not-yours", "ffffffffffffffffffffffffffffffff", held.lock.valid_until(),
                  held.lock.options());
    auto r = client.extend(impostor, 60s, ec);
    EXPECT_EQ(ec, errc::lock_lost) << r.message;
    EXPECT_FALSE(r.lock.held());
    for (int node = 1; node <= 5; ++node) {
        EXPECT_LE(inspector(node).pttl("not-yours"), 5000) << "untouched expiry";
    }
}

TEST_F(nodes_test, an_expired_lock_is_never_extended) {
    blocking_client client(config());
    std::error_code ec;
    auto held = client.acquire("gone", options(50ms), ec);
    ASSERT_FALSE(ec);
    std::this_thread::sleep_for(100ms);
    // Another client takes it; an extend by the first must not revive the first.
    auto other = client.acquire("gone", options(), ec);
    ASSERT_FALSE(ec);
    auto r = client.extend(held.lock, 10s, ec);
    EXPECT_EQ(ec, errc::lock_lost);
    EXPECT_EQ(count(r.votes, node_outcome::pending), 5u) << "refused locally, nothing sent";
    for (int node = 1; node <= 5; ++node) {
        inspector look(node);
        ASSERT_TRUE(eventually([&] { return look.get("gone").has_value(); }));
        EXPECT_EQ(look.get("gone"), other.lock.token());
    }
}

TEST_F(nodes_test, extend_with_minority_down_succeeds_and_with_majority_down_fails) {
    blocking_client client(config());
    std::error_code ec;
    auto held = client.acquire("ext-faults", options(), ec);
    ASSERT_FALSE(ec);
    topology::stop(1);
    topology::stop(2);
    auto ok = client.extend(held.lock, ec);
    EXPECT_FALSE(ec) << ok.message;
    topology::stop(3);
    auto failed = client.extend(held.lock, ec);
    EXPECT_EQ(ec, errc::quorum_unreachable) << failed.message;
    EXPECT_FALSE(failed.lock.held());
}

} // namespace
} // namespace redlock::test
