// The production alarm: a wake-up of an earlier arming never reaches the new one.
#include "transport/asio_time_source.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace {

using namespace std::chrono_literals;
using redlock::detail::clock;

/// An io_context and one time source on a strand of it, run by the test's thread.
class asio_alarm_queue : public ::testing::Test {
protected:
    boost::asio::io_context io;
    redlock::detail::asio_time_source time{boost::asio::make_strand(io.get_executor())};
};

// Regression (issue 12, defect 6): steady_timer::expires_at cancels only a wait that has
// not fired yet. A wait that already fired and sits queued behind the strand's current
// handler still runs, with success, after the re-arming: it was taken for the new deadline
// (a fenced acquire failed at a phase-1 deadline, a backoff was cut short).
TEST(asio_alarm, a_wake_up_already_queued_when_rearmed_is_dropped) {
    boost::asio::io_context io;
    auto strand = boost::asio::make_strand(io.get_executor());
    redlock::detail::asio_time_source time(strand);
    auto alarm = time.make_alarm();
    std::atomic<int> first{0};
    std::atomic<int> second{0};
    boost::asio::post(strand, [&] {
        alarm->arm(clock::now(), [&] { ++first; });
        // Another thread runs the reactor meanwhile: the expired wait is queued to the
        // strand behind this handler.
        std::this_thread::sleep_for(50ms);
        alarm->arm(clock::now() + 1h, [&] { ++second; });
    });
    std::thread helper([&] { io.run_for(300ms); });
    io.run_for(300ms);
    helper.join();
    EXPECT_EQ(first, 0) << "re-armed before it could run";
    EXPECT_EQ(second, 0) << "an earlier arming's wake-up must not run the new function";
}

TEST_F(asio_alarm_queue, fires_once_and_cancel_forgets) {
    auto fired = time.make_alarm();
    auto cancelled = time.make_alarm();
    int runs = 0;
    int cancelled_runs = 0;
    fired->arm(clock::now() + 1ms, [&] { ++runs; });
    cancelled->arm(clock::now() + 1ms, [&] { ++cancelled_runs; });
    cancelled->cancel();
    io.run_for(100ms);
    EXPECT_EQ(runs, 1);
    EXPECT_EQ(cancelled_runs, 0);
}

TEST_F(asio_alarm_queue, may_be_rearmed_and_destroyed_from_its_own_function) {
    auto alarm = time.make_alarm();
    int runs = 0;
    alarm->arm(clock::now(), [&] {
        ++runs;
        alarm->arm(clock::now(), [&] {
            ++runs;
            alarm.reset();
        });
    });
    io.run_for(100ms);
    EXPECT_EQ(runs, 2);
    EXPECT_EQ(alarm, nullptr);
}

// All the alarms of a source share one timer, moved only ever earlier; each still fires at
// its own time, in time order, and a cancelled one never.
TEST_F(asio_alarm_queue, alarms_of_one_source_fire_in_time_order_each_at_its_time) {
    const auto start = clock::now();
    std::vector<std::pair<int, clock::duration>> fired;
    std::vector<std::unique_ptr<redlock::detail::alarm>> alarms;
    const int delays_ms[] = {40, 10, 30, 20, 50};
    for (int i = 0; i < 5; ++i) {
        alarms.push_back(time.make_alarm());
        alarms.back()->arm(start + std::chrono::milliseconds(delays_ms[i]),
                           [&, i] { fired.emplace_back(i, clock::now() - start); });
    }
    alarms[3]->cancel();               // the 20 ms one
    alarms[1]->arm(start + 60ms, [&] { // the earliest, moved past the others
        fired.emplace_back(1, clock::now() - start);
    });
    io.run();
    ASSERT_EQ(fired.size(), 4u);
    const int order[] = {2, 0, 4, 1};
    const auto due = [&](int i) { return i == 1 ? 60ms : std::chrono::milliseconds(delays_ms[i]); };
    for (std::size_t k = 0; k < 4; ++k) {
        EXPECT_EQ(fired[k].first, order[k]);
        EXPECT_GE(fired[k].second, due(fired[k].first)) << "never early";
    }
}

// A timer left waiting for nothing would hold the caller's io_context::run() until it ends.
TEST_F(asio_alarm_queue, nothing_is_left_waiting_once_every_alarm_is_cancelled) {
    auto a = time.make_alarm();
    auto b = time.make_alarm();
    a->arm(clock::now() + 1h, [] {});
    b->arm(clock::now() + 2h, [] {});
    b->cancel();
    a->arm(clock::now() + 3h, [] {}); // moved later: the wait for the first hour stays
    a->cancel();
    const auto start = clock::now();
    io.run();
    EXPECT_LT(clock::now() - start, 1s);
}

// A function that arms an alarm for now (its own or another) does not run it in the same
// wake-up: a function re-arming itself for now cannot hold the strand.
TEST_F(asio_alarm_queue, an_alarm_armed_for_now_from_a_function_runs_on_a_later_wake_up) {
    auto alarm = time.make_alarm();
    int runs = 0;
    std::function<void()> again = [&] {
        if (++runs < 1000) {
            alarm->arm(clock::now(), again);
        }
    };
    alarm->arm(clock::now(), again);
    std::size_t handlers = 0;
    while (runs < 1000 && io.run_one_for(1s) > 0) {
        ++handlers;
    }
    EXPECT_EQ(runs, 1000);
    EXPECT_GE(handlers, 1000u) << "one wake-up per run";
}

TEST(asio_alarm, the_source_and_every_alarm_may_go_from_inside_a_function) {
    boost::asio::io_context io;
    auto time = std::make_unique<redlock::detail::asio_time_source>(
        boost::asio::make_strand(io.get_executor()));
    auto first = time->make_alarm();
    auto second = time->make_alarm();
    int runs = 0;
    first->arm(clock::now(), [&] {
        ++runs;
        second.reset();
        time.reset();
        first.reset();
    });
    second->arm(clock::now(), [&] { ++runs; });
    io.run();
    EXPECT_EQ(runs, 1) << "the second went with its owner before its turn";
}

// An exception out of one alarm's function leaves io_context::run() (Asio lets it through;
// the caller may run() again): a user's logger that throws, called from node_connection's
// timeouts, or bad_alloc building a message. The other alarms of the source must still wake.
TEST_F(asio_alarm_queue, a_function_that_throws_does_not_strand_the_other_alarms) {
    auto thrower = time.make_alarm();
    auto same_wake_up = time.make_alarm();
    auto later = time.make_alarm();
    int same_runs = 0;
    int later_runs = 0;
    const auto start = clock::now();
    thrower->arm(start, [] { throw std::runtime_error("the logger threw"); });
    same_wake_up->arm(start, [&] { ++same_runs; });
    later->arm(start + 20ms, [&] { ++later_runs; });
    EXPECT_THROW(io.run(), std::runtime_error);
    io.restart();
    io.run_for(500ms);
    EXPECT_EQ(same_runs, 1) << "due in the wake-up that threw, never woken again";
    EXPECT_EQ(later_runs, 1) << "no wait is left for it";
}

// An arming for a time already past (a deadline computed earlier) files the entry before
// every entry that is due: an alarm that keeps re-arming itself for a past instant from its
// own function must not keep the other due alarms of the source from running.
TEST_F(asio_alarm_queue, an_alarm_rearmed_for_the_past_does_not_starve_a_due_one) {
    auto spinner = time.make_alarm();
    auto due = time.make_alarm();
    const auto past = clock::now() - 1s;
    int spins = 0;
    int spins_before_due = -1;
    std::function<void()> spin = [&] {
        if (++spins < 1000 && spins_before_due < 0) {
            spinner->arm(past, spin);
        }
    };
    spinner->arm(past, spin);
    due->arm(clock::now(), [&] { spins_before_due = spins; });
    io.run();
    EXPECT_GE(spins_before_due, 0);
    EXPECT_LE(spins_before_due, 3) << "starved while the other alarm kept re-arming";
}

// An alarm armed with an empty function (as one whose function became empty while arm()
// replaced it: the old function's destructor cancelled it) is skipped, never called.
TEST_F(asio_alarm_queue, an_empty_function_is_not_called) {
    auto alarm = time.make_alarm();
    alarm->arm(clock::now(), std::function<void()>());
    EXPECT_NO_THROW(io.run());
}

// The alarms outlive the source, keep working, and the last one going cancels the wait.
TEST(asio_alarm, alarms_outliving_the_source_still_fire_and_let_run_return) {
    boost::asio::io_context io;
    auto time = std::make_unique<redlock::detail::asio_time_source>(
        boost::asio::make_strand(io.get_executor()));
    auto a = time->make_alarm();
    auto b = time->make_alarm();
    time.reset();
    int runs = 0;
    a->arm(clock::now() + 5ms, [&] {
        ++runs;
        b->arm(clock::now() + 1h, [] {});
        b.reset(); // the last entry goes with it: nothing may be left waiting
    });
    const auto start = clock::now();
    io.run();
    EXPECT_EQ(runs, 1);
    EXPECT_LT(clock::now() - start, 1s);
}

// A stale wake-up (queued behind the strand's current handler) of one alarm does not run
// another alarm re-armed for later in the meantime, nor the re-armed one.
TEST(asio_alarm, a_queued_wake_up_runs_nothing_rearmed_for_later) {
    boost::asio::io_context io;
    auto strand = boost::asio::make_strand(io.get_executor());
    redlock::detail::asio_time_source time(strand);
    auto a = time.make_alarm();
    auto b = time.make_alarm();
    std::atomic<int> early{0};
    boost::asio::post(strand, [&] {
        a->arm(clock::now(), [&] { ++early; });
        b->arm(clock::now() + 1ms, [&] { ++early; });
        std::this_thread::sleep_for(50ms); // both due, the wake-up queued behind this
        a->arm(clock::now() + 1h, [&] { ++early; });
        b->arm(clock::now() + 2h, [&] { ++early; });
    });
    std::thread helper([&] { io.run_for(300ms); });
    io.run_for(300ms);
    helper.join();
    EXPECT_EQ(early, 0);
}

} // namespace
