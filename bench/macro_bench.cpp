// Against the five local nodes (REDLOCK_NODES; rediss:// ones trust REDLOCK_TLS_CA): latency
// percentiles, throughput, contention, and a node slowed by +20 ms. Each benchmark runs the
// client's event loop on its own thread, as a single-threaded service would, so no thread hand-off
// is measured.
#include "support/fault_proxy.hpp"
#include "transport/commands.hpp"
#include "transport/scripts.hpp"

#include <redlock/redlock.hpp>

#include <benchmark/benchmark.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include <hiredis/hiredis.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;
using clock_type = std::chrono::steady_clock;

std::vector<std::string> all_nodes() {
    const char* env = std::getenv("REDLOCK_NODES");
    std::stringstream list(env && *env ? env
                                       : "127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003,"
                                         "127.0.0.1:7004,127.0.0.1:7005");
    std::vector<std::string> nodes;
    for (std::string item; std::getline(list, item, ',');) {
        nodes.push_back(item);
    }
    return nodes;
}

redlock::client_config config_for(std::vector<std::string> nodes) {
    redlock::client_config c;
    c.nodes = std::move(nodes);
    // The nodes may have been restarted just before; quarantine is not what is measured.
    c.quarantine.enabled = false;
    // For rediss:// nodes (bench/tls.sh).
    if (const char* ca = std::getenv("REDLOCK_TLS_CA"); ca && *ca) {
        c.tls.ca_file = ca;
    }
    return c;
}

redlock::lock_options once() {
    redlock::lock_options o;
    o.ttl = 30s;
    o.retry.max_attempts = 1;
    return o;
}

/// Runs the loop until `done`.
void run_until(asio::io_context& io, const bool& done) {
    io.restart();
    while (!done) {
        io.run_one();
    }
}

/// p50/p90/p99 in microseconds, as counters; with REDLOCK_BENCH_SAMPLES=dir also every
/// sample, one per line, to dir/<benchmark name>.txt (for the CDF plot).
void report_percentiles(benchmark::State& state, const std::string& name,
                        std::vector<double> samples) {
    if (samples.empty()) {
        return;
    }
    std::sort(samples.begin(), samples.end());
    if (const char* dir = std::getenv("REDLOCK_BENCH_SAMPLES"); dir && *dir) {
        std::ofstream out(std::string(dir) + "/" + name + ".txt");
        for (double v : samples) {
            out << v << "\n";
        }
    }
    auto at = [&](double q) { return samples[static_cast<std::size_t>(q * (samples.size() - 1))]; };
    state.counters["p50_us"] = at(0.50);
    state.counters["p90_us"] = at(0.90);
    state.counters["p99_us"] = at(0.99);
}

double micros(clock_type::duration d) {
    return std::chrono::duration<double, std::micro>(d).count();
}

/// One acquire, timed, on a warm client; `release_too` times the full cycle instead.
template <typename Step>
void sequential(benchmark::State& state, const std::string& name,
                const std::vector<std::string>& nodes, Step step) {
    asio::io_context io;
    redlock::client client(io.get_executor(), config_for(nodes));
    std::vector<double> samples;
    samples.reserve(100000);
    std::uint64_t i = 0;
    // Connect before measuring.
    step(io, client, "bench:warm", [](clock_type::duration) {});
    for (auto _ : state) {
        step(io, client, "bench:seq:" + std::to_string(i++), [&](clock_type::duration d) {
            samples.push_back(micros(d));
            state.SetIterationTime(std::chrono::duration<double>(d).count());
        });
    }
    report_percentiles(state, name, std::move(samples));
}

/// Times the acquire; releases untimed.
auto timed_acquire = [](asio::io_context& io, redlock::client& client, const std::string& key,
                        auto record) {
    bool done = false;
    redlock::lock held;
    const auto start = clock_type::now();
    client.async_acquire(key, once(), [&](boost::system::error_code ec, redlock::acquire_result r) {
        record(clock_type::now() - start);
        if (ec) {
            std::abort();
        }
        held = std::move(r.lock);
        done = true;
    });
    run_until(io, done);
    done = false;
    client.async_release(held,
                         [&](boost::system::error_code, redlock::release_result) { done = true; });
    run_until(io, done);
};

/// Acquires untimed; times the release.
auto timed_release = [](asio::io_context& io, redlock::client& client, const std::string& key,
                        auto record) {
    bool done = false;
    redlock::lock held;
    client.async_acquire(key, once(), [&](boost::system::error_code, redlock::acquire_result r) {
        held = std::move(r.lock);
        done = true;
    });
    run_until(io, done);
    done = false;
    const auto start = clock_type::now();
    client.async_release(held, [&](boost::system::error_code ec, redlock::release_result) {
        record(clock_type::now() - start);
        if (ec) {
            std::abort();
        }
        done = true;
    });
    run_until(io, done);
};

/// Times acquire + release together.
auto timed_cycle = [](asio::io_context& io, redlock::client& client, const std::string& key,
                      auto record) {
    bool done = false;
    const auto start = clock_type::now();
    client.async_acquire(key, once(), [&](boost::system::error_code ec, redlock::acquire_result r) {
        if (ec) {
            std::abort();
        }
        client.async_release(r.lock, [&](boost::system::error_code, redlock::release_result) {
            record(clock_type::now() - start);
            done = true;
        });
    });
    run_until(io, done);
};

std::vector<std::string> first(std::size_t n) {
    auto nodes = all_nodes();
    nodes.resize(std::min(n, nodes.size()));
    return nodes;
}

void uncontended_acquire(benchmark::State& state) {
    sequential(state, "uncontended_acquire_" + std::to_string(state.range(0)),
               first(static_cast<std::size_t>(state.range(0))), timed_acquire);
}
void uncontended_release(benchmark::State& state) {
    sequential(state, "uncontended_release_" + std::to_string(state.range(0)),
               first(static_cast<std::size_t>(state.range(0))), timed_release);
}
void acquire_release_cycle(benchmark::State& state) {
    sequential(state, "acquire_release_cycle_" + std::to_string(state.range(0)),
               first(static_cast<std::size_t>(state.range(0))), timed_cycle);
}
BENCHMARK(uncontended_acquire)
    ->Arg(1)
    ->Arg(3)
    ->Arg(5)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(uncontended_release)
    ->Arg(1)
    ->Arg(3)
    ->Arg(5)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(acquire_release_cycle)
    ->Arg(1)
    ->Arg(3)
    ->Arg(5)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

/// The floor: one SET round trip to one node with plain synchronous hiredis.
void single_set_floor(benchmark::State& state) {
    const auto node = all_nodes().front();
    const auto colon = node.rfind(':');
    redisContext* c =
        redisConnect(node.substr(0, colon).c_str(), std::stoi(node.substr(colon + 1)));
    if (!c || c->err) {
        state.SkipWithError("cannot reach the first node");
        return;
    }
    std::vector<double> samples;
    for (auto _ : state) {
        const auto start = clock_type::now();
        auto* r = static_cast<redisReply*>(redisCommand(c, "SET bench:floor x"));
        const auto d = clock_type::now() - start;
        freeReplyObject(r);
        samples.push_back(micros(d));
        state.SetIterationTime(std::chrono::duration<double>(d).count());
    }
    redisFree(c);
    report_percentiles(state, "single_set_floor", std::move(samples));
}
BENCHMARK(single_set_floor)->UseManualTime()->Unit(benchmark::kMicrosecond);

/// The floor of a quorum round, with nothing of this library in between: the SET NX PX that
/// acquire sends, then the release.lua call that release sends, each written to every node
/// (blocking writes in node order) and done at the quorum's reply, as uncontended_release times
/// its release right after an acquire done at quorum. Acquire and release above these rounds
/// are the library's cost; these rounds above single_set_floor are the nodes' and the
/// machine's. Times the release round; the SET round's p50 is a counter.
void quorum_round_floor(benchmark::State& state) {
    namespace ip = asio::ip;
    using redlock::detail::script_call;
    using redlock::detail::set_nx_px;
    using redlock::detail::wire_bytes;
    const auto nodes = all_nodes();
    const auto& release = redlock::detail::release_script;
    asio::io_context io;
    std::vector<ip::tcp::socket> sockets;
    for (const auto& node : nodes) {
        const auto colon = node.rfind(':');
        // In the node's script cache, as a client connection's handshake leaves it.
        if (auto* c =
                redisConnect(node.substr(0, colon).c_str(), std::stoi(node.substr(colon + 1)))) {
            const std::string text(release.text);
            freeReplyObject(redisCommand(c, "SCRIPT LOAD %b", text.data(), text.size()));
            redisFree(c);
        }
        auto& s = sockets.emplace_back(io);
        boost::system::error_code ec;
        s.connect({ip::make_address(node.substr(0, colon), ec),
                   static_cast<unsigned short>(std::stoi(node.substr(colon + 1)))},
                  ec);
        if (!ec) {
            s.set_option(ip::tcp::no_delay(true), ec);
        }
        if (ec) {
            state.SkipWithError(("cannot reach " + node + ": " + ec.message()).c_str());
            return;
        }
    }
    // Every reply of these commands is one line; a node's replies are counted by their ends.
    std::vector<int> awaited(sockets.size(), 0);
    std::vector<std::array<char, 512>> buffers(sockets.size());
    bool failed = false;
    std::function<void(std::size_t)> read = [&](std::size_t n) {
        sockets[n].async_read_some(
            asio::buffer(buffers[n]), [&, n](boost::system::error_code ec, std::size_t length) {
                const std::string_view got(buffers[n].data(), length);
                if (ec || got.starts_with('-')) {
                    failed = true;
                    return;
                }
                for (auto at = got.find("\r\n"); at != std::string_view::npos;
                     at = got.find("\r\n", at + 2)) {
                    --awaited[n];
                }
                read(n);
            });
    };
    for (std::size_t n = 0; n < sockets.size(); ++n) {
        read(n);
    }
    const auto quorum = static_cast<int>(sockets.size() / 2 + 1);
    auto round = [&](const std::string& command) {
        const auto start = clock_type::now();
        for (std::size_t n = 0; n < sockets.size(); ++n) {
            ++awaited[n];
            boost::system::error_code ec;
            asio::write(sockets[n], asio::buffer(command), ec);
            failed = failed || ec;
        }
        io.restart();
        while (!failed && std::count(awaited.begin(), awaited.end(), 0) < quorum) {
            io.run_one();
        }
        return clock_type::now() - start;
    };
    std::vector<double> set_rounds, release_rounds;
    std::uint64_t i = 0;
    for (auto _ : state) {
        const auto key = "bench:floor:quorum:" + std::to_string(i++);
        // The very commands acquire and release build.
        const std::string keys[] = {key};
        set_rounds.push_back(micros(round(wire_bytes(set_nx_px(key, "token", "30000")))));
        const auto d =
            round(wire_bytes(script_call(release, false, {keys}, {"token", "0123456789abcdef"})));
        release_rounds.push_back(micros(d));
        state.SetIterationTime(std::chrono::duration<double>(d).count());
        if (failed) {
            state.SkipWithError("a node failed a command");
            return;
        }
    }
    std::sort(set_rounds.begin(), set_rounds.end());
    state.counters["set_round_p50_us"] = set_rounds[set_rounds.size() / 2];
    report_percentiles(state, "quorum_round_floor", std::move(release_rounds));
}
BENCHMARK(quorum_round_floor)->UseManualTime()->Unit(benchmark::kMicrosecond);

/// `range(0)` chains, each acquiring and releasing its own key in a loop, for 2 s.
void throughput_distinct_keys(benchmark::State& state) {
    asio::io_context io;
    redlock::client client(io.get_executor(), config_for(all_nodes()));
    const auto chains = static_cast<int>(state.range(0));
    std::uint64_t cycles = 0, failures = 0;
    double seconds = 0;
    for (auto _ : state) {
        const auto until = clock_type::now() + 2s;
        int running = chains;
        bool done = false;
        std::function<void(int)> cycle = [&](int chain) {
            if (clock_type::now() >= until) {
                done = --running == 0;
                return;
            }
            client.async_acquire(
                "bench:tp:" + std::to_string(chain), once(),
                [&, chain](boost::system::error_code ec, redlock::acquire_result r) {
                    if (ec) {
                        ++failures;
                        cycle(chain);
                        return;
                    }
                    client.async_release(
                        r.lock, [&, chain](boost::system::error_code, redlock::release_result) {
                            ++cycles;
                            cycle(chain);
                        });
                });
        };
        const auto start = clock_type::now();
        for (int chain = 0; chain < chains; ++chain) {
            cycle(chain);
        }
        run_until(io, done);
        seconds += std::chrono::duration<double>(clock_type::now() - start).count();
    }
    state.counters["cycles_per_s"] = static_cast<double>(cycles) / seconds;
    state.counters["failures"] = static_cast<double>(failures);
}
BENCHMARK(throughput_distinct_keys)
    ->Arg(1)
    ->Arg(16)
    ->Arg(64)
    ->Arg(256)
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

/// `range(0)` waiters handing one key between them for 2 s: grants per second.
void contended_single_key(benchmark::State& state) {
    asio::io_context io;
    redlock::client client(io.get_executor(), config_for(all_nodes()));
    const auto waiters = static_cast<int>(state.range(0));
    auto options = once();
    options.retry.max_attempts = 0;
    options.retry.wait_budget = 1s;
    options.retry.backoff_initial = 0ms;
    options.retry.backoff_max = 2ms;
    std::uint64_t grants = 0;
    double seconds = 0;
    for (auto _ : state) {
        const auto until = clock_type::now() + 2s;
        int running = waiters;
        bool done = false;
        std::function<void()> wait = [&] {
            if (clock_type::now() >= until) {
                done = --running == 0;
                return;
            }
            client.async_acquire("bench:contended", options,
                                 [&](boost::system::error_code ec, redlock::acquire_result r) {
                                     if (ec) {
                                         wait();
                                         return;
                                     }
                                     ++grants;
                                     client.async_release(r.lock,
                                                          [&](boost::system::error_code,
                                                              redlock::release_result) { wait(); });
                                 });
        };
        const auto start = clock_type::now();
        for (int w = 0; w < waiters; ++w) {
            wait();
        }
        run_until(io, done);
        seconds += std::chrono::duration<double>(clock_type::now() - start).count();
    }
    state.counters["grants_per_s"] = static_cast<double>(grants) / seconds;
}
BENCHMARK(contended_single_key)->Arg(16)->Iterations(1)->Unit(benchmark::kSecond);

/// Counts how sleeping acquires woke.
struct wake_counter final : redlock::metrics_observer {
    std::uint64_t by_release = 0;
    std::uint64_t by_backoff = 0;
    void on_acquire_wake(bool early) override { ++(early ? by_release : by_backoff); }
};

/// Handoff of one key between 16 waiters of one client, each acquiring again as soon as it
/// released; measured in the same run as the baseline, one client's back-to-back
/// acquire+release cycles on a key of its own: eight alternating slices of 250 ms each. range(0) =
/// 1: waiters woken by the nodes' release notifications, default backoff as the fallback; 0: the
/// previous way, polling with a 0-2 ms full-jitter backoff. Counters: grants/s, the ratio to the
/// baseline, wait p50/p99 (call to grant), fairness (grants of the least and most served waiter,
/// Jain's index), and how the sleeping acquires woke.
void handoff_single_key(benchmark::State& state) {
    constexpr int waiters = 16;
    asio::io_context io;
    auto config = config_for(all_nodes());
    auto wakes = std::make_shared<wake_counter>();
    config.metrics = wakes;
    redlock::client client(io.get_executor(), config);
    auto options = once();
    options.retry.max_attempts = 0;
    options.retry.wait_budget = 10s;
    if (const char* stagger = std::getenv("REDLOCK_BENCH_STAGGER_US")) {
        options.retry.handoff_stagger = std::chrono::microseconds(std::atoi(stagger));
    }
    if (state.range(0) == 0) {
        options.retry.wake_on_release = false;
        options.retry.backoff_initial = 0ms;
        options.retry.backoff_max = 2ms;
    }
    std::uint64_t base_cycles = 0, grants = 0, failures = 0;
    double base_seconds = 0, seconds = 0;
    std::vector<double> waits;
    std::vector<std::uint64_t> per_waiter(waiters, 0);
    // Alternating slices, so that both see the same load on a shared machine.
    constexpr int slices = 8;
    constexpr auto slice = 250ms;
    for (auto _ : state) {
        for (int s = 0; s < slices; ++s) {
            {
                bool done = false;
                const auto until = clock_type::now() + slice;
                std::function<void()> cycle = [&] {
                    if (clock_type::now() >= until) {
                        done = true;
                        return;
                    }
                    client.async_acquire(
                        "bench:handoff:base", once(),
                        [&](boost::system::error_code ec, redlock::acquire_result r) {
                            if (ec) {
                                std::abort();
                            }
                            client.async_release(
                                r.lock, [&](boost::system::error_code, redlock::release_result) {
                                    ++base_cycles;
                                    cycle();
                                });
                        });
                };
                const auto start = clock_type::now();
                cycle();
                run_until(io, done);
                base_seconds += std::chrono::duration<double>(clock_type::now() - start).count();
            }
            const auto until = clock_type::now() + slice;
            int running = waiters;
            bool done = false;
            std::function<void(int)> wait = [&](int w) {
                if (clock_type::now() >= until) {
                    done = --running == 0;
                    return;
                }
                const auto called = clock_type::now();
                client.async_acquire(
                    "bench:handoff", options,
                    [&, w, called](boost::system::error_code ec, redlock::acquire_result r) {
                        if (ec) {
                            ++failures;
                            wait(w);
                            return;
                        }
                        waits.push_back(micros(clock_type::now() - called));
                        ++grants;
                        ++per_waiter[w];
                        client.async_release(r.lock, [&, w](boost::system::error_code,
                                                            redlock::release_result) { wait(w); });
                    });
            };
            const auto start = clock_type::now();
            for (int w = 0; w < waiters; ++w) {
                wait(w);
            }
            run_until(io, done);
            seconds += std::chrono::duration<double>(clock_type::now() - start).count();
        }
    }
    const double base_rate = static_cast<double>(base_cycles) / base_seconds;
    const double rate = static_cast<double>(grants) / seconds;
    state.counters["base_cycles_per_s"] = base_rate;
    state.counters["grants_per_s"] = rate;
    state.counters["ratio"] = rate / base_rate;
    state.counters["failures"] = static_cast<double>(failures);
    state.counters["wakes_by_release"] = static_cast<double>(wakes->by_release);
    state.counters["wakes_by_backoff"] = static_cast<double>(wakes->by_backoff);
    const auto [least, most] = std::minmax_element(per_waiter.begin(), per_waiter.end());
    state.counters["grants_least_waiter"] = static_cast<double>(*least);
    state.counters["grants_most_waiter"] = static_cast<double>(*most);
    double sum = 0, squares = 0;
    for (auto g : per_waiter) {
        sum += static_cast<double>(g);
        squares += static_cast<double>(g) * static_cast<double>(g);
    }
    state.counters["jain_fairness"] = squares > 0 ? sum * sum / (waiters * squares) : 0;
    std::sort(waits.begin(), waits.end());
    if (!waits.empty()) {
        auto at = [&](double q) { return waits[static_cast<std::size_t>(q * (waits.size() - 1))]; };
        state.counters["wait_p50_us"] = at(0.50);
        state.counters["wait_p99_us"] = at(0.99);
    }
}
BENCHMARK(handoff_single_key)->Arg(0)->Arg(1)->Iterations(1)->Unit(benchmark::kSecond);

/// Uncontended acquire with the last node behind a proxy adding `range(0)` ms to every reply;
/// 0 is the healthy baseline with the same proxy hop. Releases are not awaited, so that the
/// loop never sleeps for the slow node (a sleeping loop measures wake-up latency instead).
void acquire_one_node_slowed(benchmark::State& state) {
    auto nodes = all_nodes();
    const auto last = nodes.back();
    const auto colon = last.rfind(':');
    redlock::test::fault_proxy proxy(last.substr(0, colon),
                                     static_cast<std::uint16_t>(std::stoi(last.substr(colon + 1))));
    proxy.set_latency(std::chrono::milliseconds(state.range(0)));
    nodes.back() = proxy.address();
    asio::io_context io;
    redlock::client client(io.get_executor(), config_for(nodes));
    std::vector<double> samples;
    std::uint64_t i = 0;
    int releasing = 0;
    auto one = [&](bool timed) {
        bool done = false;
        const auto start = clock_type::now();
        client.async_acquire(
            "bench:slow:" + std::to_string(i++), once(),
            [&](boost::system::error_code ec, redlock::acquire_result r) {
                const auto d = clock_type::now() - start;
                if (ec) {
                    std::abort();
                }
                if (timed) {
                    samples.push_back(micros(d));
                    state.SetIterationTime(std::chrono::duration<double>(d).count());
                }
                ++releasing;
                client.async_release(r.lock, [&](boost::system::error_code,
                                                 redlock::release_result) { --releasing; });
                done = true;
            });
        run_until(io, done);
    };
    one(false);
    for (auto _ : state) {
        one(true);
    }
    io.restart();
    while (releasing > 0) {
        io.run_one();
    }
    report_percentiles(state, "acquire_one_node_slowed_" + std::to_string(state.range(0)),
                       std::move(samples));
}
BENCHMARK(acquire_one_node_slowed)->Arg(0)->Arg(20)->UseManualTime()->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();
