// The convenience calls (blocking acquire, try_lock, scoped_lock, both with_lock forms) take
// what client::async_acquire takes: one key or several (a braced list included) and every
// lock option. A scoped_lock may renew its lock while it is held.
#include "support/fixture.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <future>
#include <optional>
#include <thread>

namespace redlock::test {
namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;

const std::vector<std::string> both{"conv:a", "conv:b"};

/// Nodes holding `token` under every key of `keys`.
int nodes_holding(const std::vector<std::string>& keys, const std::string& token) {
    int holding = 0;
    for (int node = 1; node <= 5; ++node) {
        bool all = true;
        for (const auto& key : keys) {
            all = all && inspector(node).get(key) == token;
        }
        holding += all ? 1 : 0;
    }
    return holding;
}

TEST_F(nodes_test, the_blocking_calls_take_a_braced_list_of_keys) {
    blocking_client client(config());
    std::error_code ec;
    auto pair = client.acquire({"conv:b", "conv:a"}, options(), ec);
    ASSERT_FALSE(ec) << pair.message;
    EXPECT_EQ(pair.lock.keys(), both);
    // Granted at a quorum: the last nodes' SETs may still be on their way.
    EXPECT_TRUE(eventually([&] { return nodes_holding(both, pair.lock.token()) == 5; }))
        << nodes_holding(both, pair.lock.token()) << " nodes hold both keys";

    // Either key alone is taken: try_lock and scoped_lock see the set's hold on it.
    auto refused = client.try_lock("conv:b", 2s, 0ms, 0, ec);
    EXPECT_FALSE(refused);
    EXPECT_EQ(ec, errc::contention);
    scoped_lock blocked(client, {"conv:a", "conv:c"}, options(), ec);
    EXPECT_FALSE(blocked.owns_lock());
    EXPECT_EQ(ec, errc::contention);

    client.release(pair.lock, ec);
    EXPECT_FALSE(ec);
    {
        scoped_lock guard(client, {"conv:a", "conv:c"}, options(), ec);
        ASSERT_TRUE(guard.owns_lock()) << ec.message();
        EXPECT_EQ(guard.get().keys(), (std::vector<std::string>{"conv:a", "conv:c"}));
    }
    auto ran = client.with_lock({"conv:b", "conv:a"}, options(), {},
                                [&](const watchdog& dog, std::stop_token) {
                                    const auto token = dog.current().token();
                                    eventually([&] { return nodes_holding(both, token) == 5; });
                                    return nodes_holding(both, token);
                                });
    EXPECT_FALSE(ran.error) << ran.message;
    EXPECT_EQ(ran.value, 5) << "both keys on all five nodes while the work ran";
    EXPECT_TRUE(all_keys_gone());
}

TEST_F(nodes_test, try_lock_takes_every_lock_option) {
    blocking_client client(config());
    std::error_code ec;
    auto fenced = options();
    fenced.fencing = true;
    auto first = client.try_lock({"conv:f"}, fenced, ec);
    ASSERT_TRUE(first) << ec.message();
    EXPECT_GT(first->fencing_token(), 0u);
    client.release(*first, ec);
    auto second = client.try_lock("conv:f", fenced, ec);
    ASSERT_TRUE(second) << ec.message();
    EXPECT_GT(second->fencing_token(), first->fencing_token());
    client.release(*second, ec);

    // Shared: two readers at once, a writer refused meanwhile.
    auto shared = options();
    shared.mode = lock_mode::shared;
    auto reader_1 = client.try_lock("conv:s", shared, ec);
    auto reader_2 = client.try_lock("conv:s", shared, ec);
    ASSERT_TRUE(reader_1 && reader_2) << ec.message();
    EXPECT_FALSE(client.try_lock("conv:s", options(), ec));
    EXPECT_EQ(ec, errc::contention);
    client.release(*reader_1, ec);
    client.release(*reader_2, ec);
    EXPECT_TRUE(eventually([] {
        int left = 0;
        for (int node = 1; node <= 5; ++node) {
            left += inspector(node).run({"EXISTS", "conv:s", "conv:f"}) == "0" ? 0 : 1;
        }
        return left == 0;
    })) << "every reader and holder released (the fencing counter stays: it has no TTL)";
}

TEST_F(nodes_test, the_coroutine_calls_take_a_braced_list_of_keys) {
    io_thread io;
    std::optional<client> async(std::in_place, io.executor(), config());
    auto acquire_pair = [&]() -> asio::awaitable<acquire_result> {
        // Inside a coroutine, where a braced list must survive the co_await too.
        co_return co_await async->async_acquire({"conv:b", "conv:a"}, options(),
                                                asio::use_awaitable);
    };
    auto acquired = asio::co_spawn(io.context(), acquire_pair(), asio::use_future).get();
    EXPECT_EQ(acquired.lock.keys(), both);
    async->async_release(acquired.lock, asio::use_future).get();

    auto run = [&]() -> asio::awaitable<locked<int>> {
        co_return co_await with_lock(
            *async, {"conv:a", "conv:b"}, options(), renewal_options{},
            [&](const watchdog& dog) -> asio::awaitable<int> {
                // Granted at a quorum: the last nodes' SETs may
                // still be on their way (a loaded machine).
                const auto token = dog.current().token();
                asio::steady_timer pause(co_await asio::this_coro::executor);
                for (int i = 0; i < 60 && nodes_holding(both, token) != 5; ++i) {
                    pause.expires_after(50ms);
                    co_await pause.async_wait(asio::use_awaitable);
                }
                co_return nodes_holding(both, token);
            });
    };
    auto result = asio::co_spawn(io.context(), run(), asio::use_future).get();
    EXPECT_FALSE(result.error) << result.message;
    EXPECT_EQ(result.value, 5) << "both keys on all five nodes while the work ran";
    EXPECT_TRUE(all_keys_gone());
    async.reset();
}

TEST_F(nodes_test, a_renewing_scoped_lock_outlives_its_ttl_and_stops_with_the_guard) {
    blocking_client client(config());
    std::error_code ec;
    std::string token;
    {
        scoped_lock guard(client, both, options(400ms), renewal_options{}, ec);
        ASSERT_TRUE(guard.owns_lock()) << ec.message();
        token = guard.get().token();
        std::this_thread::sleep_for(1200ms); // three TTLs
        EXPECT_FALSE(guard.lost());
        EXPECT_FALSE(guard.stop_token().stop_requested());
        EXPECT_EQ(nodes_holding(both, token), 5) << "renewed past its TTL";
        EXPECT_GT(guard.get().remaining(), 0ms);
    }
    EXPECT_TRUE(all_keys_gone());
    std::this_thread::sleep_for(600ms);
    EXPECT_EQ(keys_everywhere(), 0) << "no renewal after the release wrote a key back";
}

TEST_F(nodes_test, a_renewing_scoped_lock_signals_a_loss_through_its_stop_token) {
    blocking_client client(config());
    std::error_code ec;
    scoped_lock guard(client, "conv:lost", options(400ms), renewal_options{}, ec);
    ASSERT_TRUE(guard.owns_lock()) << ec.message();
    EXPECT_TRUE(guard.stop_token().stop_possible());
    topology::pause_majority();
    EXPECT_TRUE(eventually([&] { return guard.stop_token().stop_requested(); }, 3s));
    EXPECT_TRUE(guard.lost());
    topology::resume_majority();
    guard.release(ec);
    EXPECT_EQ(ec, errc::lock_lost);
    EXPECT_FALSE(guard.owns_lock());
    EXPECT_TRUE(all_keys_gone());
}

TEST_F(nodes_test, a_scoped_lock_with_unusable_renewal_options_takes_nothing) {
    blocking_client client(config());
    std::error_code ec;
    renewal_options bad;
    bad.interval = -1ms;
    scoped_lock guard(client, "conv:bad", options(), bad, ec);
    EXPECT_EQ(ec, errc::invalid_argument);
    EXPECT_FALSE(guard.owns_lock());
    EXPECT_EQ(keys_everywhere(), 0);
}

} // namespace
} // namespace redlock::test
