// No server: the costs the library adds around the network.
#include "core/acquire_fsm.hpp"
#include "runtime/token.hpp"
#include "transport/commands.hpp"

#include <benchmark/benchmark.h>

#include <hiredis/hiredis.h>

namespace {

using namespace std::chrono_literals;
namespace d = redlock::detail;

void acquire_decision(benchmark::State& state) {
    redlock::lock_options options;
    const auto nodes = static_cast<std::size_t>(state.range(0));
    const d::clock::time_point now{100s};
    for (auto _ : state) {
        d::acquire_fsm fsm(nodes, options, [] { return std::uint64_t{7}; });
        auto a = fsm.start(now);
        for (std::size_t n = 0; n < nodes && a.what != d::acquire_action::kind::done; ++n) {
            a = fsm.on_set_reply(1, n, redlock::node_outcome::granted, now + 1ms);
        }
        benchmark::DoNotOptimize(a);
    }
}
BENCHMARK(acquire_decision)->Arg(1)->Arg(3)->Arg(5)->Arg(7);

void token_generation(benchmark::State& state) {
    d::token_source tokens;
    for (auto _ : state) {
        benchmark::DoNotOptimize(tokens.next());
    }
}
BENCHMARK(token_generation);

void set_command_formatting(benchmark::State& state) {
    const std::string key = "orders:sku-1", token = "0123456789abcdef0123456789abcdef";
    const std::string ttl = "30000";
    for (auto _ : state) {
        const auto cmd = d::set_nx_px(key, token, ttl);
        const char* argv[7];
        std::size_t lengths[7];
        for (std::size_t i = 0; i < cmd.args.size(); ++i) {
            argv[i] = cmd.args[i].data();
            lengths[i] = cmd.args[i].size();
        }
        char* wire = nullptr;
        const int n =
            redisFormatCommandArgv(&wire, static_cast<int>(cmd.args.size()), argv, lengths);
        benchmark::DoNotOptimize(n);
        redisFreeCommand(wire);
    }
}
BENCHMARK(set_command_formatting);

} // namespace

BENCHMARK_MAIN();
