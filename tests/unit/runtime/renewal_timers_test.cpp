// The one timer a client's watchdogs share: order, cancellation, and who holds whom.
#include "runtime/renewal_timers.hpp"

#include "transport/asio_time_source.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>

#include <gtest/gtest.h>

#include <vector>

namespace {

using namespace std::chrono_literals;
using redlock::detail::clock;

struct recorder final : redlock::detail::timed {
    recorder(std::vector<int>& log, int id)
        : log_(log)
        , id_(id) {}
    void on_due() override { log_.push_back(id_); }
    std::vector<int>& log_;
    int id_;
};

TEST(renewal_timers, fire_in_deadline_order_and_cancelled_ones_never) {
    boost::asio::io_context io;
    redlock::detail::asio_time_source time(boost::asio::make_strand(io.get_executor()));
    auto timers = std::make_shared<redlock::detail::renewal_timers>(time);
    std::vector<int> fired;
    const auto now = clock::now();
    auto late = std::make_shared<recorder>(fired, 3);
    auto early = std::make_shared<recorder>(fired, 1);
    auto cancelled = std::make_shared<recorder>(fired, 2);
    timers->schedule(now + 30ms, late);
    timers->schedule(now + 10ms, early);
    auto entry = timers->schedule(now + 20ms, cancelled);
    EXPECT_EQ(cancelled.use_count(), 2) << "a waiting entry holds its target";
    timers->cancel(entry);
    EXPECT_EQ(cancelled.use_count(), 1) << "and lets go of it when cancelled";
    io.run_for(200ms);
    EXPECT_EQ(fired, (std::vector<int>{1, 3}));
    EXPECT_EQ(late.use_count(), 1) << "fired entries are gone";
}

TEST(renewal_timers, an_earlier_entry_rearms_and_clear_drops_everything) {
    boost::asio::io_context io;
    redlock::detail::asio_time_source time(boost::asio::make_strand(io.get_executor()));
    auto timers = std::make_shared<redlock::detail::renewal_timers>(time);
    std::vector<int> fired;
    const auto now = clock::now();
    timers->schedule(now + 10s, std::make_shared<recorder>(fired, 9));
    timers->schedule(now + 5ms, std::make_shared<recorder>(fired, 1));
    io.run_for(100ms);
    EXPECT_EQ(fired, (std::vector<int>{1})) << "did not wait for the 10 s entry";
    auto held = std::make_shared<recorder>(fired, 2);
    timers->schedule(now + 20s, held);
    timers->clear();
    EXPECT_EQ(held.use_count(), 1);
    io.restart();
    EXPECT_EQ(io.run_for(50ms), 1u) << "only the cancelled wait's completion is left";
}

} // namespace
