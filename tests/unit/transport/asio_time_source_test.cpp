// The production alarm: a wake-up of an earlier arming never reaches the new one.
#include "transport/asio_time_source.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

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

} // namespace
