#include "support/history.hpp"
#include "support/settled.hpp"

#include <redlock/client.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <fcntl.h>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>
#include <time.h>
#include <unistd.h>

namespace redlock::test {

namespace {

std::int64_t monotonic_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::int64_t to_ns(std::chrono::steady_clock::time_point t) {
    // libstdc++'s steady_clock is CLOCK_MONOTONIC.
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

std::string counter_path(const std::string& dir, const std::string& key) {
    return dir + "/" + key + ".counter";
}

/// The unprotected read-modify-write: read, think, write. Only the lock makes it safe.
void increment(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT, 0644);
    if (fd < 0) {
        throw std::runtime_error("cannot open " + path);
    }
    char buffer[32] = {};
    const auto got = ::pread(fd, buffer, sizeof buffer - 1, 0);
    const long long seen = got > 0 ? std::atoll(buffer) : 0;
    std::this_thread::sleep_for(std::chrono::microseconds(300));
    const auto text = std::to_string(seen + 1) + "\n";
    const bool written =
        ::pwrite(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size());
    ::close(fd);
    if (!written) {
        throw std::runtime_error("cannot write " + path);
    }
}

} // namespace

contender_outcome run_contenders(const contender_options& o, unsigned threads) {
    client_config config;
    config.nodes = o.nodes;
    config.quarantine.enabled = o.quarantine;
    // Every contender of these keys, in this process and the others, locks with o.ttl.
    config.fleet_max_ttl = o.ttl;
    config.reconnect_delay_initial = std::chrono::milliseconds(20);
    config.reconnect_delay_max = std::chrono::milliseconds(200);
    boost::asio::io_context io;
    auto work = boost::asio::make_work_guard(io);
    std::thread io_thread([&] { io.run(); });
    auto client = std::make_unique<redlock::client>(io.get_executor(), config);
    std::mutex mutex;
    contender_outcome outcome;
    const auto until = std::chrono::steady_clock::now() + o.run_for;
    std::vector<std::thread> workers;
    for (unsigned t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            std::mt19937 random(o.seed * 1000 + t);
            std::uniform_int_distribution<std::size_t> pick(0, o.keys.size() - 1);
            lock_options lo;
            lo.ttl = o.ttl;
            lo.retry.max_attempts = 0;
            lo.retry.wait_budget = std::chrono::milliseconds(500);
            lo.retry.backoff_initial = std::chrono::milliseconds(1);
            lo.retry.backoff_max = std::chrono::milliseconds(10);
            std::vector<grant_record> mine;
            std::uint64_t failures = 0;
            while (std::chrono::steady_clock::now() < until) {
                const auto& key = o.keys[pick(random)];
                settled<acquire_result> acquired;
                client->async_acquire(key, lo, acquired);
                auto [ec, r] = acquired.get();
                if (ec) {
                    failures += ec == errc::contention ? 0 : 1;
                    continue;
                }
                grant_record g;
                g.key = key;
                g.granted_ns = monotonic_ns();
                if (std::chrono::steady_clock::now() < r.lock.valid_until()) {
                    increment(counter_path(o.counter_dir, key));
                    g.incremented = true;
                }
                g.ended_ns = std::min(monotonic_ns(), to_ns(r.lock.valid_until()));
                // Not waited for, as a service would not: the interval ended when the
                // release was sent, and a slow node must not hold the next grant back.
                client->async_release(r.lock, [](boost::system::error_code, release_result) {});
                mine.push_back(g);
            }
            std::lock_guard<std::mutex> guard(mutex);
            outcome.grants.insert(outcome.grants.end(), mine.begin(), mine.end());
            outcome.failures += failures;
        });
    }
    for (auto& w : workers) {
        w.join();
    }
    client.reset(); // releases still in flight complete with cancelled; their keys expire
    work.reset();
    io_thread.join();
    return outcome;
}

void write_history(const std::string& path, const std::vector<grant_record>& grants) {
    std::ofstream out(path);
    for (const auto& g : grants) {
        out << g.key << ' ' << g.granted_ns << ' ' << g.ended_ns << ' ' << g.incremented << '\n';
    }
}

std::vector<grant_record> read_history(const std::string& path) {
    std::vector<grant_record> grants;
    std::ifstream in(path);
    grant_record g;
    while (in >> g.key >> g.granted_ns >> g.ended_ns >> g.incremented) {
        grants.push_back(g);
    }
    return grants;
}

std::vector<std::string> overlapping_grants(std::vector<grant_record> grants) {
    std::sort(grants.begin(), grants.end(), [](const grant_record& a, const grant_record& b) {
        return a.key != b.key ? a.key < b.key : a.granted_ns < b.granted_ns;
    });
    std::vector<std::string> found;
    for (std::size_t i = 1; i < grants.size(); ++i) {
        const auto& before = grants[i - 1];
        const auto& after = grants[i];
        if (before.key == after.key && after.granted_ns < before.ended_ns) {
            std::ostringstream text;
            text << after.key << ": granted at " << after.granted_ns
                 << " ns while the holder since " << before.granted_ns << " ns relied on it until "
                 << before.ended_ns << " ns";
            found.push_back(text.str());
        }
    }
    return found;
}

long long read_counter(const std::string& counter_dir, const std::string& key) {
    std::ifstream in(counter_path(counter_dir, key));
    long long value = 0;
    in >> value;
    return value;
}

} // namespace redlock::test
