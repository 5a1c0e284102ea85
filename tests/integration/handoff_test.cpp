#include "support/fixture.hpp"
#include "support/hostile_server.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <atomic>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

namespace redlock::test {
namespace {

using namespace std::chrono_literals;

/// How sleeping acquires woke.
struct wake_counter final : metrics_observer {
    std::atomic<std::uint64_t> by_release{0};
    std::atomic<std::uint64_t> by_backoff{0};
    void on_acquire_wake(bool early) override { ++(early ? by_release : by_backoff); }
};

/// The holders of one key as observed by the one process holding them all: from the grant's
/// completion to the release's start. Exclusion is a property of these intervals, not of the
/// return codes.
struct holder_log {
    std::mutex mutex;
    std::vector<std::pair<clock_type::time_point, clock_type::time_point>> held;

    /// Whether two intervals overlap.
    bool overlapping() {
        std::lock_guard guard(mutex);
        auto sorted = held;
        std::sort(sorted.begin(), sorted.end());
        for (std::size_t i = 1; i < sorted.size(); ++i) {
            if (sorted[i].first < sorted[i - 1].second) {
                return true;
            }
        }
        return false;
    }
};

/// Whether `node` (1-5) has no subscriber connection subscribed to anything.
bool no_subscriptions(int node) {
    inspector n(node);
    return eventually([&] { return n.run({"CLIENT", "LIST", "TYPE", "pubsub"}).empty(); });
}

/// `waiters` loops on one client, each acquiring `key` (retrying after `backoff`), holding it
/// for 200 us, releasing, and again, until `until`. Returns once every loop stopped.
void hand_off(client& c, const std::string& key, int waiters, clock_type::time_point until,
              std::chrono::milliseconds backoff, holder_log& log, std::atomic<int>& grants) {
    constexpr auto hold = 200us;
    lock_options o;
    o.ttl = 10s;
    o.retry.max_attempts = 0;
    o.retry.wait_budget = 30s;
    o.retry.backoff_initial = backoff;
    o.retry.backoff_max = backoff;
    std::promise<void> all_done;
    std::atomic<int> running{waiters};
    auto loop = std::make_shared<std::function<void()>>();
    *loop = [&, o, loop_weak = std::weak_ptr(loop)] {
        if (clock_type::now() >= until) {
            if (--running == 0) {
                all_done.set_value();
            }
            return;
        }
        c.async_acquire(key, o, [&, loop_weak](boost::system::error_code ec, acquire_result r) {
            auto again = loop_weak.lock();
            ASSERT_FALSE(ec) << ec.message();
            const auto granted = clock_type::now();
            ++grants;
            std::this_thread::sleep_for(hold);
            const auto released = clock_type::now();
            {
                std::lock_guard guard(log.mutex);
                log.held.emplace_back(granted, released);
            }
            c.async_release(r.lock,
                            [again](boost::system::error_code, release_result) { (*again)(); });
        });
    };
    for (int w = 0; w < waiters; ++w) {
        (*loop)();
    }
    all_done.get_future().wait();
}

TEST_F(nodes_test, sixteen_waiters_hand_one_key_over_by_notification) {
    auto c = config();
    auto wakes = std::make_shared<wake_counter>();
    c.metrics = wakes;
    holder_log log;
    std::atomic<int> grants{0};
    {
        io_thread io;
        client cl(io.executor(), c);
        // A backoff so long that polling alone would grant at most 16 x 1.5 s / 250 ms = 96
        // times.
        hand_off(cl, "handoff", 16, clock_type::now() + 1500ms, 500ms, log, grants);
    }
    EXPECT_FALSE(log.overlapping());
    // Under a sanitizer (several times slower) still well above polling's 96.
    EXPECT_GT(grants.load(), sanitized() ? 150 : 300);
    // Nearly every sleep ends with a release heard, not with the backoff running out.
    EXPECT_GT(wakes->by_release.load(), 10 * wakes->by_backoff.load())
        << wakes->by_release << " by release, " << wakes->by_backoff << " by backoff, " << grants
        << " grants";
    EXPECT_TRUE(all_keys_gone());
}

// Issue 22 (section 5): one client's waiter for {a, b} (b held elsewhere) sat at the head of
// a's local queue, and the same client's waiter for a alone slept out its backoff while a was
// free: 277-780 ms after the release instead of 1-7 ms. A release wakes a waiter that can use
// it; arrival order holds among the waiters that want the same keys.
TEST_F(nodes_test, a_waiter_for_more_keys_does_not_hold_back_one_that_can_use_a_release) {
    blocking_client other(config());
    std::error_code ec;
    auto held_a = other.acquire("family:a", options(20s), ec);
    ASSERT_FALSE(ec) << held_a.message;
    auto held_b = other.acquire("family:b", options(20s), ec);
    ASSERT_FALSE(ec) << held_b.message;

    io_thread io;
    client cl(io.executor(), config());
    lock_options wait; // the defaults, waiting
    wait.retry.max_attempts = 0;
    wait.retry.wait_budget = 20s;
    std::promise<acquire_result> both_done;
    auto both = both_done.get_future();
    cl.async_acquire(
        std::vector<std::string>{"family:a", "family:b"}, wait,
        [&](boost::system::error_code, acquire_result r) { both_done.set_value(std::move(r)); });
    std::this_thread::sleep_for(300ms); // the waiter for both is queued on a first
    std::mutex mutex;
    std::vector<std::pair<int, clock_type::time_point>> granted;
    std::vector<lock> locks;
    std::promise<void> alone_done;
    for (int w = 0; w < 2; ++w) {
        cl.async_acquire("family:a", wait, [&, w](boost::system::error_code e, acquire_result r) {
            std::lock_guard guard(mutex);
            EXPECT_FALSE(e) << r.message;
            granted.emplace_back(w, clock_type::now());
            locks.push_back(r.lock);
            if (granted.size() == 1) {
                // Held a little, then handed to the next waiter for a alone.
                cl.async_release(r.lock, [](boost::system::error_code, release_result) {});
            } else {
                alone_done.set_value();
            }
        });
        std::this_thread::sleep_for(50ms); // arrival order: waiter 0, then waiter 1
    }
    // Long enough for every waiter's backoff to reach its 500 ms cap.
    std::this_thread::sleep_for(1500ms);
    const auto released = clock_type::now();
    other.release(held_a.lock, ec);
    ASSERT_EQ(alone_done.get_future().wait_for(5s), std::future_status::ready);
    {
        std::lock_guard guard(mutex);
        ASSERT_EQ(granted.size(), 2u);
        EXPECT_EQ(granted[0].first, 0) << "arrival order among the waiters for a alone";
        // Sleeping out the backoff (drawn from 250-500 ms with the subscriptions in force)
        // would take far longer; a release heard takes a few round trips.
        EXPECT_LT(granted[0].second - released, 150ms);
        EXPECT_LT(granted[1].second - granted[0].second, 150ms);
    }
    // The waiter for both still waits for b; it gets both once b is free too.
    EXPECT_EQ(both.wait_for(0s), std::future_status::timeout);
    cl.async_release(locks[1], boost::asio::use_future).get();
    other.release(held_b.lock, ec);
    ASSERT_EQ(both.wait_for(5s), std::future_status::ready);
    const auto got = both.get();
    EXPECT_EQ(got.lock.keys().size(), 2u) << got.message;
    cl.async_release(got.lock, boost::asio::use_future).get();
    EXPECT_TRUE(all_keys_gone());
}

// One client's acquires of a key are served in the order they were called, and the
// younger ones' backoffs poll for the oldest: here the key frees silently (another client's
// lock expires; no keyspace notifications), the oldest waiter has a 30 s backoff, the younger
// one a 10-50 ms backoff and a 2 s budget. The oldest is granted within a few of the younger
// one's backoffs after the expiry, not after its own 30 s; the younger one gets the key
// once the oldest lets it go. (Before, the younger one was granted first, or, deferring to
// the oldest without polling for it, ran out its budget having asked no node.)
TEST_F(nodes_test, a_younger_waiters_backoff_polls_for_the_oldest_of_its_client) {
    blocking_client holder(config());
    blocking_client waiters(config());
    std::error_code ec;
    auto short_lock = options(400ms);
    const auto held = holder.acquire("handoff:silent", short_lock, ec);
    ASSERT_FALSE(ec) << held.message;
    const auto start = clock_type::now();
    auto slow = options(5s);
    slow.retry.max_attempts = 3;
    slow.retry.backoff_initial = 30s;
    slow.retry.backoff_max = 30s;
    auto oldest = std::async(std::launch::async, [&] {
        std::error_code failed;
        auto got = waiters.acquire("handoff:silent", slow, failed);
        const auto granted_after = clock_type::now() - start;
        if (!failed) {
            waiters.release(got.lock, failed);
        }
        return std::pair{failed, granted_after};
    });
    std::this_thread::sleep_for(20ms);
    auto quick = options(5s);
    quick.retry.max_attempts = 0;
    quick.retry.wait_budget = 2s;
    quick.retry.backoff_initial = 10ms;
    quick.retry.backoff_max = 50ms;
    auto younger = waiters.acquire("handoff:silent", quick, ec);
    const auto [oldest_failed, oldest_after] = oldest.get();
    ASSERT_FALSE(oldest_failed) << oldest_failed.message();
    EXPECT_LT(oldest_after, 1500ms) << "the key was free from about 400 ms on";
    ASSERT_FALSE(ec) << younger.message;
    EXPECT_GE(younger.attempts, 1u);
    waiters.release(younger.lock, ec);
}

// An exclusive acquire behind an older waiter of its client, with too little of its wait
// budget for one backoff, waits what is left and ends without an attempt: attempting, it
// could only be served ahead of the older one (the simulation's seed 934212157225, where a
// pause had spent the budget, granted it ahead of two).
TEST_F(nodes_test, a_budget_too_short_to_wait_behind_an_older_waiter_ends_without_an_attempt) {
    blocking_client holder(config());
    blocking_client waiters(config());
    std::error_code ec;
    const auto held = holder.acquire("handoff:hasty", options(5s), ec);
    ASSERT_FALSE(ec) << held.message;
    auto patient = options(5s);
    patient.retry.max_attempts = 0;
    patient.retry.wait_budget = 5s;
    auto oldest = std::async(std::launch::async, [&] {
        std::error_code failed;
        auto got = waiters.acquire("handoff:hasty", patient, failed);
        if (!failed) {
            waiters.release(got.lock, failed);
        }
        return failed;
    });
    std::this_thread::sleep_for(100ms); // refused, the oldest waits
    auto hasty = options(5s);
    hasty.retry.max_attempts = 0;
    hasty.retry.backoff_initial = 400ms; // its first sleep would be 200-400 ms
    hasty.retry.backoff_max = 400ms;
    hasty.retry.wait_budget = 100ms;
    const auto ended = waiters.acquire("handoff:hasty", hasty, ec);
    EXPECT_EQ(ec, errc::contention) << ended.message;
    EXPECT_EQ(ended.attempts, 0u) << "no SET sent";
    EXPECT_NE(ended.message.find("no attempt"), std::string::npos) << ended.message;
    EXPECT_NE(ended.message.find("its wait budget ran out, behind 1 older acquire "),
              std::string::npos)
        << ended.message;

    // With the defaults (3 attempts, no budget), each of its backoffs that runs out behind the
    // oldest is one of its attempts, spent by the oldest polling for it.
    auto defaults = options(5s);
    defaults.retry = redlock::retry_options{};
    const auto spent = waiters.acquire("handoff:hasty", defaults, ec);
    EXPECT_EQ(ec, errc::contention) << spent.message;
    EXPECT_EQ(spent.attempts, 0u) << "no SET sent";
    EXPECT_NE(spent.message.find("no attempt: its max_attempts went to polls by the oldest"),
              std::string::npos)
        << spent.message;
    holder.release(held.lock, ec);
    EXPECT_FALSE(oldest.get()) << "the older waiter is served once the key is free";
}

TEST_F(nodes_test, handoff_falls_back_to_backoff_when_subscribers_are_killed) {
    auto c = config();
    auto wakes = std::make_shared<wake_counter>();
    c.metrics = wakes;
    holder_log log;
    std::atomic<int> grants{0};
    std::atomic<bool> killing{true};
    // Every subscriber connection killed again and again: notifications come rarely if ever.
    std::thread killer([&] {
        std::vector<std::unique_ptr<inspector>> nodes;
        for (int n = 1; n <= 5; ++n) {
            nodes.push_back(std::make_unique<inspector>(n));
        }
        while (killing) {
            for (auto& n : nodes) {
                n->run({"CLIENT", "KILL", "TYPE", "pubsub"});
            }
            std::this_thread::sleep_for(2ms);
        }
    });
    {
        io_thread io;
        client cl(io.executor(), c);
        hand_off(cl, "handoff-killed", 16, clock_type::now() + 1500ms, 20ms, log, grants);
    }
    killing = false;
    killer.join();
    EXPECT_FALSE(log.overlapping());
    EXPECT_GT(grants.load(), 16);
    EXPECT_GT(wakes->by_backoff.load(), 0u);
    EXPECT_TRUE(all_keys_gone());
}

TEST_F(nodes_test, readers_waiting_for_a_writer_all_get_in_on_its_release) {
    // Readers share the key: one reader's grant leaves room for the others, so it must not
    // send them back to their backoff (2 s here) as another waiter's grant of an exclusive
    // lock does.
    auto c = config();
    auto wakes = std::make_shared<wake_counter>();
    c.metrics = wakes;
    io_thread io;
    client writer_client(io.executor(), config());
    client readers_client(io.executor(), c);
    lock_options w;
    w.ttl = 30s;
    const auto writer =
        writer_client.async_acquire("rw-handoff", w, boost::asio::use_future).get().lock;
    lock_options r = w;
    r.mode = lock_mode::shared;
    r.retry.max_attempts = 0;
    r.retry.wait_budget = 20s;
    r.retry.backoff_initial = 2s;
    r.retry.backoff_max = 2s;
    constexpr int readers = 8;
    std::vector<std::future<acquire_result>> waiting;
    for (int i = 0; i < readers; ++i) {
        waiting.push_back(readers_client.async_acquire("rw-handoff", r, boost::asio::use_future));
    }
    // Every reader refused, subscribed and asleep on its backoff.
    std::this_thread::sleep_for(300ms);
    const auto released_at = clock_type::now();
    writer_client.async_release(writer, boost::asio::use_future).get();
    std::vector<lock> held;
    for (auto& f : waiting) {
        held.push_back(f.get().lock);
    }
    const auto all_in = clock_type::now() - released_at;
    EXPECT_LT(all_in, 500ms) << wakes->by_release << " woken by release, " << wakes->by_backoff
                             << " by backoff";
    for (auto& l : held) {
        readers_client.async_release(l, boost::asio::use_future).get();
    }
    EXPECT_EQ(keys_everywhere(), 0);
}

TEST_F(nodes_test, handoff_unsubscribes_when_no_one_waits) {
    auto c = config();
    io_thread io;
    client cl(io.executor(), c);
    holder_log log;
    std::atomic<int> grants{0};
    hand_off(cl, "handoff-idle", 4, clock_type::now() + 300ms, 20ms, log, grants);
    // The subscriber connections stay (for the next waiter) but subscribe to nothing: a
    // connection with no subscription left is no pub/sub client any more.
    for (int n = 1; n <= 5; ++n) {
        EXPECT_TRUE(no_subscriptions(n)) << "node " << n;
    }
}

TEST_F(nodes_test, cancelled_and_closed_waiters_leave_no_subscription) {
    auto c = config();
    blocking_client holder(c);
    std::error_code ec;
    auto held = holder.acquire("handoff-held", options(), ec);
    ASSERT_FALSE(ec);
    io_thread io;
    std::optional<client> waiting(std::in_place, io.executor(), c);
    lock_options o;
    o.retry.max_attempts = 0;
    o.retry.wait_budget = 30s;
    o.retry.backoff_initial = 1s;
    o.retry.backoff_max = 1s;
    boost::asio::cancellation_signal cancel;
    std::promise<std::error_code> cancelled;
    std::promise<std::error_code> closed;
    boost::asio::post(io.executor(), [&] {
        waiting->async_acquire("handoff-held", o,
                               boost::asio::bind_cancellation_slot(
                                   cancel.slot(), [&](boost::system::error_code e, acquire_result) {
                                       cancelled.set_value(e);
                                   }));
        waiting->async_acquire("handoff-held", o, [&](boost::system::error_code e, acquire_result) {
            closed.set_value(e);
        });
    });
    // Both wait, subscribed on every node.
    for (int n = 1; n <= 5; ++n) {
        inspector node(n);
        EXPECT_TRUE(eventually([&] {
            return node.run({"CLIENT", "LIST", "TYPE", "pubsub"}).find("sub=2") !=
                   std::string::npos;
        }));
    }
    boost::asio::post(io.executor(),
                      [&] { cancel.emit(boost::asio::cancellation_type::terminal); });
    EXPECT_EQ(cancelled.get_future().get(), errc::cancelled);
    waiting->close();
    EXPECT_EQ(closed.get_future().get(), errc::cancelled);
    waiting.reset();
    for (int n = 1; n <= 5; ++n) {
        EXPECT_TRUE(no_subscriptions(n)) << "node " << n;
    }
    holder.release(held.lock, ec);
    EXPECT_TRUE(all_keys_gone());
}

TEST_F(nodes_test, a_hostile_node_on_the_subscriber_connection_costs_only_its_notifications) {
    for (const auto m : hostile_server::all_modes) {
        SCOPED_TRACE(std::string(hostile_server::name(m)));
        hostile_server first(m);
        hostile_server second(m);
        auto c = config();
        // Three real nodes hold the quorum; two impostors misbehave on every SET and SUBSCRIBE.
        c.nodes.resize(3);
        c.nodes.push_back(first.address());
        c.nodes.push_back(second.address());
        blocking_client holder(c);
        std::error_code ec;
        // The three honest nodes must all grant: give them the time a loaded machine takes.
        auto holding = options();
        holding.node_timeout = 1s;
        auto held = holder.acquire("handoff-hostile", holding, ec);
        ASSERT_FALSE(ec) << held.message;
        blocking_client waiter(c);
        lock_options o;
        o.retry.max_attempts = 0;
        o.retry.wait_budget = 10s;
        o.retry.backoff_initial = 2s;
        o.retry.backoff_max = 2s;
        struct outcome {
            std::error_code acquired;
            std::error_code released;
        };
        auto waited = std::async(std::launch::async, [&] {
            outcome out;
            auto got = waiter.acquire("handoff-hostile", o, out.acquired);
            if (!out.acquired) {
                waiter.release(got.lock, out.released);
            }
            return out;
        });
        EXPECT_TRUE(eventually([&] { return first.lock_commands() + second.lock_commands() > 4; }));
        std::this_thread::sleep_for(100ms);
        holder.release(held.lock, ec);
        // Woken by the three real nodes' notifications, long before the 2 s backoff.
        const auto released = clock_type::now();
        ASSERT_EQ(waited.wait_for(5s), std::future_status::ready);
        const auto out = waited.get();
        EXPECT_FALSE(out.acquired) << out.acquired.message();
        EXPECT_LT(clock_type::now() - released, 1500ms);
        // Impostors that answer OK to every SET are two lying votes: woken by the first real
        // node's notification, the waiter can be granted by that node and the two of them while
        // the holder's deletes are still landing on the other real nodes. Its release then
        // finds its token on one node only and says so. Any other outcome is a fault.
        if (m == hostile_server::mode::unsolicited && out.released == errc::lock_lost) {
            continue;
        }
        EXPECT_FALSE(out.released) << out.released.message();
    }
    EXPECT_TRUE(all_keys_gone());
}

} // namespace
} // namespace redlock::test
