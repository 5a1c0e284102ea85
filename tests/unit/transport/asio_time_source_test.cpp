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
#include <thread>
#include <utility>
#include <vector>

namespace {

using namespace std::chrono_literals;
using redlock::detail::clock;

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

TEST(asio_alarm, fires_once_and_cancel_forgets) {
    boost::asio::io_context io;
    redlock::detail::asio_time_source time(boost::asio::make_strand(io.get_executor()));
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

TEST(asio_alarm, may_be_rearmed_and_destroyed_from_its_own_function) {
    boost::asio::io_context io;
    redlock::detail::asio_time_source time(boost::asio::make_strand(io.get_executor()));
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
TEST(asio_alarm, alarms_of_one_source_fire_in_time_order_each_at_its_time) {
    boost::asio::io_context io;
    redlock::detail::asio_time_source time(boost::asio::make_strand(io.get_executor()));
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
TEST(asio_alarm, nothing_is_left_waiting_once_every_alarm_is_cancelled) {
    boost::asio::io_context io;
    redlock::detail::asio_time_source time(boost::asio::make_strand(io.get_executor()));
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
TEST(asio_alarm, an_alarm_armed_for_now_from_a_function_runs_on_a_later_wake_up) {
    boost::asio::io_context io;
    redlock::detail::asio_time_source time(boost::asio::make_strand(io.get_executor()));
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

} // namespace
