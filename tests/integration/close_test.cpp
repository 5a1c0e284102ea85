// client::close() against the five nodes, and the completion tokens on real outcomes.
#include "support/fixture.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/system/system_error.hpp>

#include <atomic>
#include <future>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

namespace redlock::test {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

/// io.run() on a thread of its own; finished() says whether it returned.
class runner {
public:
    explicit runner(asio::io_context& io)
        : done_(std::async(std::launch::async, [&io] { io.run(); })) {}
    bool finished_within(std::chrono::milliseconds limit) {
        return done_.wait_for(limit) == std::future_status::ready;
    }

private:
    std::future<void> done_;
};

TEST_F(nodes_test, run_returns_after_close_of_a_client_that_held_locks_and_a_watchdog) {
    asio::io_context io;
    client locks(io.get_executor(), config());
    std::promise<boost::system::error_code> told;
    std::optional<watchdog> dog;
    std::atomic<bool> held{false};
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
            // Throwing tokens: a failure here would end the coroutine with an exception.
            auto kept = co_await locks.async_acquire("close:kept", options(), asio::use_awaitable);
            auto other =
                co_await locks.async_acquire("close:released", options(), asio::use_awaitable);
            co_await locks.async_release(other.lock, asio::use_awaitable);
            dog.emplace(locks, kept.lock, renewal_options{},
                        [&](boost::system::error_code why) { told.set_value(why); });
            held = true;
        },
        asio::detached);
    runner run(io);
    ASSERT_TRUE(eventually([&] { return held.load(); }));
    EXPECT_FALSE(run.finished_within(100ms)) << "the connections keep run() busy until close()";
    locks.close();
    ASSERT_TRUE(run.finished_within(3s)) << "run() must return once the client is closed";
    auto why = told.get_future();
    ASSERT_EQ(why.wait_for(0s), std::future_status::ready) << "the watchdog's holder was told";
    EXPECT_EQ(why.get(), errc::cancelled);
    EXPECT_TRUE(dog->lost());
    // close() releases nothing: the kept lock expires by its TTL, the released one is gone.
    EXPECT_EQ(inspector(1).get("close:released"), std::nullopt);
    EXPECT_NE(inspector(1).get("close:kept"), std::nullopt);
}

TEST_F(nodes_test, a_cleanup_queued_by_close_still_reaches_paused_nodes) {
    asio::io_context io;
    client locks(io.get_executor(), config());
    // Connections up first, so that the SETs below are written at once. The acquire is
    // issued before run() starts: with no work yet, run() would return at once.
    auto warming = locks.async_acquire("close:warm", options(), asio::use_future);
    runner run(io);
    auto warm = warming.get();
    locks.async_release(warm.lock, asio::use_future).get();

    topology::pause_majority();
    auto o = options(30s);
    o.node_timeout = 2s; // the drain waits this long for the paused nodes' answers
    settled<acquire_result> pending;
    locks.async_acquire("close:interrupted", o, pending);
    std::this_thread::sleep_for(100ms); // nodes 4 and 5 granted; 1 to 3 hold the SET unread
    EXPECT_FALSE(pending.ready());
    locks.close();
    const auto [error, result] = pending.get();
    EXPECT_EQ(error, errc::cancelled) << result.message;
    std::this_thread::sleep_for(300ms);
    topology::resume_majority();
    // run() returns only once the cleanups were answered: every copy of the key is gone by
    // then, on the nodes that granted and on those that ran the SET late.
    ASSERT_TRUE(run.finished_within(3s));
    EXPECT_EQ(keys_everywhere(), 0) << "a cleanup queued by close() did not reach its node";
}

// Sixteen acquires of one key wait in one client while another client holds it: close()
// ends each of them once, with cancelled. Each one that leaves sets off the next (moved up,
// it wakes on the release it heard, and finds the client closed): a waiter used after it
// was freed crashed this 3 runs of 3 before the fix (found by the simulation's lanes, seed
// 40578844).
TEST_F(nodes_test, close_ends_every_waiter_queued_for_a_key_in_the_client) {
    asio::io_context io;
    client holder(io.get_executor(), config());
    client waiters(io.get_executor(), config());
    auto o = options(5s);
    o.retry.max_attempts = 100;
    o.retry.backoff_initial = 1000ms;
    o.retry.backoff_max = 2000ms;
    auto holding = holder.async_acquire("close:queue", o, asio::use_future);
    runner run(io);
    const auto held = holding.get();
    std::vector<settled<acquire_result>> pending(16);
    for (auto& waiting : pending) {
        waiters.async_acquire("close:queue", o, waiting);
    }
    std::this_thread::sleep_for(400ms);
    for (const auto& waiting : pending) {
        EXPECT_FALSE(waiting.ready()) << "the key is held: all of them wait";
    }
    waiters.close();
    for (const auto& waiting : pending) {
        const auto [error, result] = waiting.get();
        EXPECT_EQ(error, errc::cancelled) << result.message;
    }
    holder.async_release(held.lock, asio::use_future).get();
    holder.close();
    ASSERT_TRUE(run.finished_within(3s));
    EXPECT_EQ(keys_everywhere(), 0);
}

/// Counts every node reply the client reports, and those with an error.
struct reply_counter : metrics_observer {
    std::atomic<int> replies{0};
    std::atomic<int> errors{0};
    void on_node_reply(std::size_t, std::error_code error, std::chrono::microseconds) override {
        ++replies;
        errors += error ? 1 : 0;
    }
};

TEST_F(nodes_test, a_release_completes_at_quorum_and_close_lets_its_late_delete_finish) {
    asio::io_context io;
    auto c = config();
    auto counter = std::make_shared<reply_counter>();
    c.metrics = counter;
    client locks(io.get_executor(), c);
    auto o = options(30s);
    o.node_timeout = 2s; // the drain waits this long for the paused node's answer
    auto acquiring = locks.async_acquire("close:late-delete", o, asio::use_future);
    runner run(io);
    const auto got = acquiring.get();
    ASSERT_TRUE(eventually([] { return keys_everywhere() == 5; }));
    const int acquire_replies = counter->replies.load();

    topology::pause(5);
    const auto start = std::chrono::steady_clock::now();
    const auto released = locks.async_release(got.lock, asio::use_future).get();
    EXPECT_LT(std::chrono::steady_clock::now() - start, 1s) << "not node 5's timeout";
    EXPECT_GE(released.released, 3u);
    EXPECT_EQ(released.votes[4].outcome, node_outcome::pending);

    // Closed while node 5 still holds the delete unread: the drain waits for its answer.
    locks.close();
    std::this_thread::sleep_for(300ms);
    EXPECT_FALSE(run.finished_within(0ms)) << "close() let the connections go too early";
    topology::resume(5);
    ASSERT_TRUE(run.finished_within(3s));
    EXPECT_EQ(inspector(5).get("close:late-delete"), std::nullopt)
        << "the late delete did not reach node 5 before the client closed";
    EXPECT_EQ(counter->replies.load(), acquire_replies + 5)
        << "the late vote reaches the metrics observer";
    EXPECT_EQ(counter->errors.load(), 0);
}

TEST_F(nodes_test, close_from_another_thread_while_operations_are_in_flight) {
    asio::io_context io;
    auto guard = asio::make_work_guard(io);
    std::vector<std::thread> threads;
    for (int i = 0; i < 2; ++i) {
        threads.emplace_back([&] { io.run(); });
    }
    client locks(io.get_executor(), config());
    std::atomic<int> issued{0}, completed{0}, closed{0};
    std::atomic<bool> stop{false};
    std::vector<std::thread> users;
    for (int u = 0; u < 4; ++u) {
        users.emplace_back([&, u] {
            auto o = options(2s);
            for (int i = 0; !stop; ++i) {
                ++issued;
                const auto key = "close:busy:" + std::to_string(u) + ":" + std::to_string(i % 8);
                locks.async_acquire(key, o, [&](boost::system::error_code ec, acquire_result r) {
                    closed += ec == errc::client_closed ? 1 : 0;
                    if (!ec) {
                        // The release may itself come after close(): client_closed, the key
                        // expires by its TTL.
                        ++issued;
                        locks.async_release(r.lock, [&](boost::system::error_code, release_result) {
                            ++completed;
                        });
                    }
                    ++completed;
                });
                std::this_thread::sleep_for(1ms);
            }
        });
    }
    std::this_thread::sleep_for(300ms);
    std::thread closer([&] { locks.close(); });
    closer.join();
    std::this_thread::sleep_for(50ms);
    stop = true;
    for (auto& t : users) {
        t.join();
    }
    locks.close(); // again: nothing happens
    guard.reset();
    for (auto& t : threads) {
        t.join(); // run() returned on both threads
    }
    EXPECT_EQ(completed.load(), issued.load()) << "every handler ran exactly once";
    EXPECT_GT(closed.load(), 0) << "operations started after close() were refused";
    EXPECT_TRUE(all_keys_gone(4s));
}

TEST_F(nodes_test, use_future_returns_the_result_and_throws_the_error) {
    io_thread io;
    client first(io.executor(), config());
    client second(io.executor(), config());
    const auto got = first.async_acquire("tokens:future", options(), asio::use_future).get();
    EXPECT_TRUE(got.lock.held());
    auto contended = second.async_acquire("tokens:future", options(), asio::use_future);
    try {
        contended.get();
        ADD_FAILURE() << "contention must throw through use_future";
    } catch (const boost::system::system_error& e) {
        EXPECT_EQ(e.code(), errc::contention);
    }
    const auto released = first.async_release(got.lock, asio::use_future).get();
    EXPECT_GE(released.released, topology::size() / 2 + 1);
}

TEST_F(nodes_test, use_awaitable_throws_on_contention_and_as_tuple_does_not) {
    io_thread io;
    client first(io.executor(), config());
    client second(io.executor(), config());
    const auto got = first.async_acquire("tokens:await", options(), asio::use_future).get();
    auto outcome = asio::co_spawn(
        io.context(),
        [&]() -> asio::awaitable<std::pair<boost::system::error_code, boost::system::error_code>> {
            boost::system::error_code thrown;
            try {
                co_await second.async_acquire("tokens:await", options(), asio::use_awaitable);
            } catch (const boost::system::system_error& e) {
                thrown = e.code();
            }
            auto [returned, result] = co_await second.async_acquire(
                "tokens:await", options(), asio::as_tuple(asio::use_awaitable));
            co_return std::pair(thrown, returned);
        },
        asio::use_future);
    const auto [thrown, returned] = outcome.get();
    EXPECT_EQ(thrown, errc::contention);
    EXPECT_EQ(returned, errc::contention);
    first.async_release(got.lock, asio::use_future).get();
}

TEST_F(nodes_test, destroying_a_blocking_client_waits_for_a_with_lock_on_another_thread) {
    auto locks = std::make_unique<blocking_client>(config());
    std::atomic<bool> working{false};
    std::optional<locked<void>> outcome;
    std::thread holder([&] {
        outcome = locks->with_lock("close:destroyed", options(10s), renewal_options{},
                                   [&](const watchdog&, std::stop_token stop) {
                                       working = true;
                                       while (!stop.stop_requested()) {
                                           std::this_thread::sleep_for(1ms);
                                       }
                                       std::this_thread::sleep_for(50ms); // finishing touches
                                   });
    });
    ASSERT_TRUE(eventually([&] { return working.load(); }));
    locks.reset(); // while the work still runs: its stop token is requested, then it returns
    holder.join();
    ASSERT_TRUE(outcome);
    EXPECT_EQ(outcome->error, errc::cancelled) << outcome->message;
}

} // namespace
} // namespace redlock::test
