#include "support/fixture.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <future>
#include <optional>
#include <thread>

namespace redlock::test {
namespace {

using namespace std::chrono_literals;

TEST_F(nodes_test, acquire_sets_the_same_token_with_the_ttl_on_every_node) {
    blocking_client client(config());
    std::error_code ec;
    const auto before = clock_type::now();
    // Often the first test after the nodes start: a new client connects to all five within
    // this acquire, which a sanitized build on a loaded machine did not do in 50 ms (CI-like
    // run, 4 nodes late). What it checks is the grant, not the speed.
    auto o = options(10s);
    o.node_timeout = 1s;
    auto r = client.acquire("orders:sku-1", o, ec);
    ASSERT_FALSE(ec) << r.message;
    ASSERT_TRUE(r.lock.held());
    EXPECT_EQ(r.attempts, 1u);
    EXPECT_EQ(r.lock.token().size(), 32u);
    EXPECT_GT(r.lock.valid_until(), before + 10s - 102ms - 1s);
    EXPECT_LE(r.lock.valid_until(), clock_type::now() + 10s - 102ms);
    EXPECT_GE(count(r.votes, node_outcome::granted), 3u);

    // The quorum decides; the stragglers land moments later. Every node ends with our token.
    for (int node = 1; node <= 5; ++node) {
        inspector look(node);
        ASSERT_TRUE(eventually([&] { return look.get("orders:sku-1").has_value(); }));
        EXPECT_EQ(look.get("orders:sku-1"), r.lock.token()) << "node " << node;
        const auto pttl = look.pttl("orders:sku-1");
        EXPECT_GT(pttl, 9000);
        EXPECT_LE(pttl, 10000);
    }
}

TEST_F(nodes_test, a_second_client_meets_contention_and_overwrites_nothing) {
    blocking_client first(config());
    blocking_client second(config());
    std::error_code ec;
    auto held = first.acquire("inventory", options(), ec);
    ASSERT_FALSE(ec) << held.message;

    auto other = second.acquire("inventory", options(), ec);
    EXPECT_EQ(ec, errc::contention) << other.message;
    EXPECT_FALSE(other.lock.held());
    EXPECT_GE(count(other.votes, node_outcome::refused), 3u);
    EXPECT_NE(other.message.find("held by another"), std::string::npos) << other.message;

    for (int node = 1; node <= 5; ++node) {
        inspector look(node);
        ASSERT_TRUE(eventually([&] { return look.get("inventory").has_value(); }));
        EXPECT_EQ(look.get("inventory"), held.lock.token()) << "node " << node;
    }
}

TEST_F(nodes_test, retries_until_the_holder_releases) {
    blocking_client holder(config());
    blocking_client waiter(config());
    std::error_code ec;
    auto held = holder.acquire("handoff", options(), ec);
    ASSERT_FALSE(ec);

    std::thread releaser([&] {
        std::this_thread::sleep_for(150ms);
        std::error_code release_ec;
        holder.release(held.lock, release_ec);
    });
    auto o = options();
    o.retry.max_attempts = 0;
    o.retry.wait_budget = 5s;
    o.retry.backoff_initial = 10ms;
    o.retry.backoff_max = 50ms;
    auto got = waiter.acquire("handoff", o, ec);
    releaser.join();
    ASSERT_FALSE(ec) << got.message;
    EXPECT_GT(got.attempts, 1u);
    EXPECT_NE(got.lock.token(), held.lock.token());
}

TEST_F(nodes_test, minority_down_still_acquires) {
    topology::stop(2);
    topology::stop(4);
    blocking_client client(config());
    std::error_code ec;
    auto r = client.acquire("minority", options(), ec);
    ASSERT_FALSE(ec) << r.message;
    EXPECT_EQ(count(r.votes, node_outcome::granted), 3u);
    EXPECT_EQ(r.votes[1].error, errc::connection_failed);
    EXPECT_FALSE(r.votes[1].server_message.empty()) << "the connection's own error text";
    for (int node : {1, 3, 5}) {
        EXPECT_EQ(inspector(node).get("minority"), r.lock.token());
    }
}

TEST_F(nodes_test, majority_down_fails_fast_and_leaves_no_key) {
    topology::stop(1);
    topology::stop(2);
    topology::stop(3);
    blocking_client client(config());
    auto o = options();
    o.node_timeout = 3s; // failing fast must not mean waiting for the timeout
    std::error_code ec;
    const auto start = clock_type::now();
    auto r = client.acquire("majority", o, ec);
    EXPECT_EQ(ec, errc::quorum_unreachable) << r.message;
    EXPECT_LT(since(start), 1500ms);
    EXPECT_NE(r.message.find(topology::addresses()[0]), std::string::npos) << r.message;
    for (int node : {4, 5}) {
        inspector look(node);
        EXPECT_EQ(look.dbsize(), 0) << "node " << node << " kept a key of a failed acquire";
    }
}

TEST_F(nodes_test, a_paused_node_does_not_delay_a_successful_acquire) {
    auto o = options();
    o.node_timeout = 3s;
    blocking_client client(config());
    std::error_code ec;
    // Connect first so that the pause hits an established connection.
    auto warm = client.acquire("warm", o, ec);
    ASSERT_FALSE(ec);
    client.release(warm.lock, ec);

    topology::pause(5);
    const auto start = clock_type::now();
    auto r = client.acquire("paused-node", o, ec);
    const auto took = since(start);
    ASSERT_FALSE(ec) << r.message;
    EXPECT_LT(took, 1500ms) << "decided at quorum, not at node 5's timeout";
    EXPECT_EQ(r.votes[4].outcome, node_outcome::pending);

    // Release while node 5 is still paused: its SET and then its DEL wait in line. The
    // release completes at the quorum of deletes, without node 5's timeout.
    const auto release_start = clock_type::now();
    auto released = client.release(r.lock, ec);
    EXPECT_LT(since(release_start), 1500ms) << "decided at quorum, not at node 5's timeout";
    EXPECT_FALSE(ec) << released.message;
    EXPECT_GE(released.released, 3u);
    EXPECT_EQ(released.votes[4].outcome, node_outcome::pending)
        << "its delete is still on its way: neither deleted nor timed out";
    topology::resume(5);
    inspector look(5);
    EXPECT_TRUE(eventually([&] { return look.dbsize() == 0; }))
        << "the late SET on node 5 must be cleaned up";
}

TEST_F(nodes_test, paused_majority_times_out_and_its_late_sets_are_cleaned_up) {
    blocking_client client(config());
    std::error_code ec;
    auto warm = client.acquire("warm", options(), ec);
    ASSERT_FALSE(ec);
    client.release(warm.lock, ec);

    topology::pause_majority();
    auto o = options();
    o.node_timeout = 200ms;
    const auto start = clock_type::now();
    auto r = client.acquire("paused-majority", o, ec);
    EXPECT_EQ(ec, errc::quorum_unreachable) << r.message;
    EXPECT_GE(since(start), 200ms);
    EXPECT_EQ(r.votes[0].error, errc::node_timeout);
    topology::resume_majority();
    EXPECT_TRUE(all_keys_gone())
        << "SETs that landed after the timeout are deleted by the queued cleanup";
}

TEST_F(nodes_test, ttl_too_short_for_the_round_trip_is_validity_expired) {
    blocking_client client(config());
    std::error_code ec;
    auto warm = client.acquire("warm", options(), ec);
    ASSERT_FALSE(ec);
    client.release(warm.lock, ec);

    // Three nodes answer only after the whole TTL has gone by.
    topology::pause(3);
    topology::pause(4);
    topology::pause(5);
    auto o = options(40ms);
    o.node_timeout = 2s;
    auto r = client.acquire("short-ttl", o, ec);
    EXPECT_EQ(ec, errc::validity_expired) << r.message;
    EXPECT_FALSE(r.lock.held());
    for (int node : {3, 4, 5}) {
        topology::resume(node);
    }
    EXPECT_TRUE(all_keys_gone());
}

TEST_F(nodes_test, cancelling_an_acquire_cleans_up_every_node) {
    io_thread io;
    std::optional<client> async(std::in_place, io.executor(), config());
    topology::pause_majority();
    auto o = options();
    o.node_timeout = 5s;
    boost::asio::cancellation_signal cancel;
    std::promise<std::error_code> outcome;
    const auto start = clock_type::now();
    // The signal is emitted on the client's executor, as cancellation slots require.
    boost::asio::post(io.executor(), [&] {
        async->async_acquire("cancelled", o,
                             boost::asio::bind_cancellation_slot(
                                 cancel.slot(), [&](boost::system::error_code ec, acquire_result) {
                                     outcome.set_value(ec);
                                 }));
    });
    std::this_thread::sleep_for(100ms);
    boost::asio::post(io.executor(),
                      [&] { cancel.emit(boost::asio::cancellation_type::terminal); });
    auto result = outcome.get_future();
    ASSERT_EQ(result.wait_for(3s), std::future_status::ready);
    EXPECT_EQ(result.get(), errc::cancelled);
    EXPECT_LT(since(start), 2s) << "cancellation does not wait for the paused nodes";
    topology::resume_majority();
    EXPECT_TRUE(all_keys_gone()) << "the paused nodes ran SET then the queued cleanup";
    async.reset();
}

TEST_F(nodes_test, hundreds_of_concurrent_acquires_pipeline_on_five_connections) {
    io_thread io;
    std::optional<client> async(std::in_place, io.executor(), config());
    constexpr int locks = 300;
    std::atomic<int> acquired{0}, released{0}, finished{0};
    std::promise<void> all_done;
    auto one_finished = [&] {
        if (++finished == locks) {
            all_done.set_value();
        }
    };
    // About pipelining, not latency: 300 commands queued behind the first connect and its
    // handshake may wait longer than the default 50 ms on a loaded sanitizer build.
    auto o = options();
    o.node_timeout = 1s;
    for (int i = 0; i < locks; ++i) {
        async->async_acquire(
            "many:" + std::to_string(i), o, [&](boost::system::error_code ec, acquire_result r) {
                EXPECT_FALSE(ec) << r.message;
                if (ec) {
                    one_finished();
                    return;
                }
                ++acquired;
                async->async_release(r.lock, [&](boost::system::error_code rec, release_result rr) {
                    EXPECT_FALSE(rec) << rr.message;
                    released += rec ? 0 : 1;
                    one_finished();
                });
            });
    }
    ASSERT_EQ(all_done.get_future().wait_for(20s), std::future_status::ready);
    EXPECT_EQ(acquired, locks);
    EXPECT_EQ(released, locks);
    EXPECT_TRUE(all_keys_gone());
    async.reset();
}

TEST_F(nodes_test, mutual_exclusion_across_threads_loses_no_increment) {
    blocking_client client(config());
    constexpr int threads = 6;
    constexpr int rounds = 25;
    long long counter = 0; // deliberately unprotected except by the lock
    std::atomic<int> inside{0}, overlaps{0}, failures{0};
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&] {
            for (int i = 0; i < rounds; ++i) {
                auto o = options(5s);
                o.retry.max_attempts = 0;
                o.retry.wait_budget = 20s;
                o.retry.backoff_initial = 1ms;
                o.retry.backoff_max = 20ms;
                std::error_code ec;
                scoped_lock guard(client, "counter", o, ec);
                if (!guard) {
                    ++failures;
                    continue;
                }
                if (inside.fetch_add(1) != 0) {
                    ++overlaps;
                }
                const long long seen = counter;
                std::this_thread::sleep_for(200us);
                counter = seen + 1;
                inside.fetch_sub(1);
            }
        });
    }
    for (auto& w : workers) {
        w.join();
    }
    EXPECT_EQ(failures, 0);
    EXPECT_EQ(overlaps, 0);
    EXPECT_EQ(counter, threads * rounds);
    EXPECT_TRUE(all_keys_gone()) << "every scoped_lock released at scope end";
}

} // namespace
} // namespace redlock::test
