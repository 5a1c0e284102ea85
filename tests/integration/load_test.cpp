// The incident's load: 200 concurrent contenders (its `hey -c 200`) on one client and five
// nodes, 40,000 lock cycles (2,000 under a sanitizer): nothing fails but by contention,
// nothing leaks, and the client's heap stays flat.
#include "support/fixture.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <future>
#include <malloc.h>
#include <map>
#include <mutex>
#include <thread>

namespace redlock::test {
namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;

/// Heap in use, in KiB: unlike the resident set, it does not move with how the allocator
/// keeps freed pages.
long heap_kib() {
    const auto info = ::mallinfo2();
    return static_cast<long>((info.uordblks + info.hblkhd) / 1024);
}

TEST_F(nodes_test, two_hundred_contenders_forty_thousand_cycles_no_leak) {
    if (topology::containers()) {
        GTEST_SKIP() << "measures the client over 40,000 cycles: through Docker's port "
                        "forwarder every round trip costs more and the run outlasts its 120 s";
    }
    constexpr int contenders = 200;
    const long target = sanitized() ? 2000 : 40000;
    io_thread io;
    client c(io.executor(), config());
    std::atomic<long> cycles{0};
    std::mutex mutex;
    std::map<std::string, int> errors;

    auto contender = [&](int id, long until) -> asio::awaitable<void> {
        constexpr auto as_tuple = asio::as_tuple(asio::use_awaitable);
        lock_options o;
        o.ttl = 5s;
        o.retry.max_attempts = 0;
        o.retry.wait_budget = 10s;
        // What this test judges is leaks and that only contention fails a cycle: 200
        // contenders on a busy machine (CI compiles beside it) read their own replies late,
        // which the default node_timeout counts as a node's silence, so give the nodes the
        // time a slow client needs to read them.
        o.node_timeout = 1s;
        if (sanitized()) {
            o.retry.wait_budget = 120s; // a sanitized client is slower still
        }
        o.retry.backoff_initial = 1ms;
        o.retry.backoff_max = 20ms;
        // Half of them on one hot key, as the incident's buyers on one SKU; the other half
        // four per key on 25 more.
        const std::string key = id % 2 == 0 ? "load:hot" : "load:" + std::to_string(id % 50);
        while (cycles.load() < until) {
            auto [acquire_error, acquired] = co_await c.async_acquire(key, o, as_tuple);
            if (acquire_error) {
                std::lock_guard<std::mutex> guard(mutex);
                ++errors[acquire_error.message() + ": " + acquired.message];
                continue;
            }
            auto [release_error, released] = co_await c.async_release(acquired.lock, as_tuple);
            if (release_error) {
                std::lock_guard<std::mutex> guard(mutex);
                ++errors["release " + release_error.message() + ": " + released.message];
            }
            cycles.fetch_add(1);
        }
    };
    // Every contender runs until `until` cycles are done; then nothing is in flight but
    // the last releases' background deletes, which the pause lets land or time out (it
    // outlasts the node timeout: a delete still waiting holds its round's memory, which read
    // as 70 KiB of growth on a loaded machine when the pause was 200 ms).
    auto run_until = [&](long until) {
        std::atomic<int> finished{0};
        std::promise<void> all_done;
        for (int id = 0; id < contenders; ++id) {
            asio::co_spawn(io.executor(), contender(id, until), [&](std::exception_ptr) {
                if (finished.fetch_add(1) + 1 == contenders) {
                    all_done.set_value();
                }
            });
        }
        ASSERT_EQ(all_done.get_future().wait_for(300s), std::future_status::ready);
        std::this_thread::sleep_for(1200ms);
    };
    run_until(target / 4);
    const long heap_warm = heap_kib();
    run_until(target);
    const long heap_end = heap_kib();

    EXPECT_GE(cycles.load(), target);
    std::string seen;
    for (const auto& [what, count] : errors) {
        seen += std::to_string(count) + " x " + what + "\n";
    }
    EXPECT_TRUE(errors.empty()) << "with retries, contention alone never fails a cycle:\n" << seen;
    EXPECT_TRUE(all_keys_gone()) << "every cycle released every copy";
    if (!sanitized()) {
        // Both measured at rest, 30,000 cycles apart: anything kept per cycle (an entry of
        // a map: 32 bytes at least) would add a megabyte. What does move is the allocator's
        // and the containers' bookkeeping: 5-50 KiB here, 70 KiB once in CI's loaded chroot,
        // and it levels off (710, 728, 732, 735 KiB after 10,000, 40,000, 80,000 and
        // 120,000 cycles, 2026-12-05).
        EXPECT_LE(heap_end, heap_warm + 128) << heap_warm << " KiB -> " << heap_end;
    }
    std::printf("load: %ld cycles by %d contenders, heap at rest %ld KiB after a quarter, "
                "%ld KiB at the end\n",
                cycles.load(), contenders, heap_warm, heap_end);
}

} // namespace
} // namespace redlock::test
