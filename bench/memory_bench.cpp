// Client memory per held lock (watchdog included) and resident-set flatness over many
// acquire+release cycles, against the nodes in REDLOCK_NODES.
//   redlock_memory_bench [locks=100000] [cycles=1000000]
// Prints one JSON object.
#include <redlock/redlock.hpp>

#include <boost/asio/io_context.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <malloc.h>
#include <memory>
#include <sstream>
#include <unistd.h>

namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;

/// Bytes the allocator has handed out and not been given back.
long heap_bytes() {
    const auto info = ::mallinfo2();
    return static_cast<long>(info.uordblks + info.hblkhd);
}

long resident_bytes() {
    std::ifstream statm("/proc/self/statm");
    long pages = 0, resident = 0;
    statm >> pages >> resident;
    return resident * ::sysconf(_SC_PAGESIZE);
}

std::vector<std::string> nodes() {
    const char* env = std::getenv("REDLOCK_NODES");
    std::stringstream list(env && *env ? env
                                       : "127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003,"
                                         "127.0.0.1:7004,127.0.0.1:7005");
    std::vector<std::string> out;
    for (std::string item; std::getline(list, item, ',');) {
        out.push_back(item);
    }
    return out;
}

/// Keeps `concurrency` operations in flight until `total` have been started.
void pipelined(asio::io_context& io, std::size_t total, std::size_t concurrency,
               const std::function<void(std::size_t, std::function<void()>)>& start_one) {
    std::size_t started = 0, finished = 0;
    std::function<void()> next = [&] {
        if (started == total) {
            return;
        }
        start_one(started++, [&] {
            ++finished;
            next();
        });
    };
    for (std::size_t i = 0; i < concurrency && i < total; ++i) {
        next();
    }
    io.restart();
    while (finished < total) {
        io.run_one();
    }
}

} // namespace

int main(int argc, char** argv) {
    const std::size_t locks = argc > 1 ? std::stoul(argv[1]) : 100000;
    const std::size_t cycles = argc > 2 ? std::stoul(argv[2]) : 1000000;
    asio::io_context io;
    redlock::client_config config;
    config.nodes = nodes();
    config.quarantine.enabled = false;
    // The locks are held for the whole measurement; no other client takes these keys.
    config.fleet_max_ttl = 600s;
    redlock::client client(io.get_executor(), config);
    redlock::lock_options options;
    options.ttl = 600s;
    options.node_timeout = 2s;
    options.retry.max_attempts = 1;

    // Warm: connections and allocator pools exist before the baseline.
    pipelined(io, 1000, 64, [&](std::size_t i, std::function<void()> done) {
        client.async_acquire("mem:warm:" + std::to_string(i), options,
                             [&, done](boost::system::error_code, redlock::acquire_result r) {
                                 client.async_release(r.lock, [done](auto, auto) { done(); });
                             });
    });

    const long before = resident_bytes();
    const long heap_before = heap_bytes();
    std::vector<redlock::lock> held(locks);
    std::size_t failed = 0;
    pipelined(io, locks, 256, [&](std::size_t i, std::function<void()> done) {
        client.async_acquire("mem:held:" + std::to_string(i), options,
                             [&, i, done](boost::system::error_code ec, redlock::acquire_result r) {
                                 failed += ec ? 1 : 0;
                                 held[i] = std::move(r.lock);
                                 done();
                             });
    });
    io.restart();
    io.run_for(std::chrono::milliseconds(500)); // late replies: their operations end
    const long heap_locks = heap_bytes();
    std::vector<std::unique_ptr<redlock::watchdog>> dogs;
    dogs.reserve(locks);
    for (auto& l : held) {
        dogs.push_back(std::make_unique<redlock::watchdog>(client, l));
    }
    io.restart();
    io.poll(); // let every watchdog start
    const long with_locks = resident_bytes();
    const long heap_with_dogs = heap_bytes();

    for (auto& dog : dogs) {
        dog.reset();
    }
    pipelined(io, locks, 256, [&](std::size_t i, std::function<void()> done) {
        client.async_release(held[i], [done](auto, auto) { done(); });
    });
    held.clear();
    held.shrink_to_fit();
    // Give the held phase's memory back to the system: else the cycles run inside what malloc
    // kept of it, and a leak of up to that size would not show in the resident set.
    ::malloc_trim(0);

    long at_tenth = 0;
    long heap_at_tenth = 0;
    long peak = 0;
    pipelined(io, cycles, 64, [&](std::size_t i, std::function<void()> done) {
        if (i == cycles / 10) {
            at_tenth = resident_bytes();
            heap_at_tenth = heap_bytes();
        }
        if (i % 50000 == 0) {
            peak = std::max(peak, resident_bytes());
        }
        client.async_acquire("mem:cycle:" + std::to_string(i % 64), options,
                             [&, done](boost::system::error_code ec, redlock::acquire_result r) {
                                 failed += ec ? 1 : 0;
                                 client.async_release(r.lock, [done](auto, auto) { done(); });
                             });
    });
    const long at_end = resident_bytes();
    const long heap_at_end = heap_bytes();
    const auto per_lock = [&](long from, long to) {
        return static_cast<double>(to - from) / static_cast<double>(locks);
    };
    std::printf("{\"locks\": %zu, \"heap_bytes_per_lock\": %.1f, "
                "\"heap_bytes_per_watchdog\": %.1f, \"heap_bytes_per_held_lock\": %.1f, ",
                locks, per_lock(heap_before, heap_locks), per_lock(heap_locks, heap_with_dogs),
                per_lock(heap_before, heap_with_dogs));
    std::printf("\"bytes_per_held_lock\": %.1f, \"cycles\": %zu, "
                "\"rss_at_10pct_kib\": %ld, \"rss_at_end_kib\": %ld, \"rss_peak_kib\": %ld, "
                "\"rss_growth_pct\": %.2f, \"heap_at_10pct_kib\": %ld, \"heap_at_end_kib\": %ld, "
                "\"failed\": %zu}\n",
                static_cast<double>(with_locks - before) / static_cast<double>(locks), cycles,
                at_tenth / 1024, at_end / 1024, std::max(peak, at_end) / 1024,
                100.0 * static_cast<double>(at_end - at_tenth) / static_cast<double>(at_tenth),
                heap_at_tenth / 1024, heap_at_end / 1024, failed);
    return failed == 0 ? 0 : 1;
}
