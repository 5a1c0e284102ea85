#include "support/fault_proxy.hpp"
#include "support/fixture.hpp"

#include "transport/scripts.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_future.hpp>

#include <future>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

namespace redlock::test {
namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;

/// Records the loss signal: when, and why.
struct loss_probe {
    std::mutex mutex;
    std::optional<std::error_code> reason;
    clock_type::time_point at{};

    watchdog::loss_handler handler() {
        return [this](boost::system::error_code why) {
            std::lock_guard guard(mutex);
            reason = why;
            at = clock_type::now();
        };
    }
    std::optional<std::error_code> get() {
        std::lock_guard guard(mutex);
        return reason;
    }
};

TEST_F(nodes_test, watchdog_keeps_a_lock_alive_past_several_ttls) {
    blocking_client client(config());
    std::error_code ec;
    auto held = client.acquire("renewed", options(300ms), ec);
    ASSERT_FALSE(ec);
    loss_probe probe;
    std::optional<watchdog> dog(std::in_place, client.async_client(), held.lock, renewal_options{},
                                probe.handler());
    std::this_thread::sleep_for(1200ms); // four TTLs
    EXPECT_FALSE(probe.get().has_value());
    EXPECT_FALSE(dog->lost());
    EXPECT_GE(dog->renewals(), 8u) << "every ttl/3";
    EXPECT_GT(dog->valid_until(), clock_type::now());
    for (int node = 1; node <= 5; ++node) {
        inspector look(node);
        EXPECT_EQ(look.get("renewed"), held.lock.token()) << "node " << node;
        EXPECT_GT(look.pttl("renewed"), 0);
    }
    std::promise<void> stopped;
    dog->async_stop([&] { stopped.set_value(); });
    stopped.get_future().wait();
    auto released = client.release(dog->current(), ec);
    EXPECT_FALSE(ec) << released.message;
    EXPECT_GE(released.released, 3u) << "completes at quorum; the rest within the 250 ms below";
    dog.reset();
    std::this_thread::sleep_for(250ms);
    EXPECT_EQ(keys_everywhere(), 0) << "no renewal after stop recreated anything";
}

TEST_F(nodes_test, watchdog_reports_loss_when_a_majority_is_paused) {
    blocking_client client(config());
    std::error_code ec;
    auto held = client.acquire("paused-renewal", options(400ms), ec);
    ASSERT_FALSE(ec);
    loss_probe probe;
    watchdog dog(client.async_client(), held.lock, renewal_options{}, probe.handler());
    std::this_thread::sleep_for(150ms);
    const auto trusted_until = dog.valid_until();
    topology::pause_majority();
    ASSERT_TRUE(eventually([&] { return probe.get().has_value(); }, 3s));
    EXPECT_EQ(*probe.get(), errc::lock_lost);
    EXPECT_TRUE(dog.lost());
    // Told no later than the deadline it last had, give or take scheduling.
    EXPECT_LT(probe.at, dog.valid_until() + 100ms);
    EXPECT_GE(dog.valid_until(), trusted_until);
}

TEST_F(nodes_test, watchdog_reports_loss_when_the_key_was_taken_over_and_never_resurrects_it) {
    blocking_client client(config());
    std::error_code ec;
    auto held = client.acquire("taken", options(600ms), ec);
    ASSERT_FALSE(ec);
    ASSERT_TRUE(eventually([] { return keys_everywhere() == 5; }));
    loss_probe probe;
    renewal_options renewal;
    renewal.recreate_missing = true; // even then, another token is never touched
    watchdog dog(client.async_client(), held.lock, renewal, probe.handler());
    for (int node = 1; node <= 5; ++node) {
        inspector(node).run({"SET", "taken", "someone-else", "PX", "10000"});
    }
    ASSERT_TRUE(eventually([&] { return probe.get().has_value(); }, 2s));
    EXPECT_EQ(*probe.get(), errc::lock_lost);
    for (int node = 1; node <= 5; ++node) {
        EXPECT_EQ(inspector(node).get("taken"), "someone-else");
    }
}

// Issue 22 (section 5): a watchdog with recreate_missing wrote every key back within 1.5 s
// of "lock state deleted on 5 of 5 nodes", so the forced release did nothing and nobody was
// told. The force release wins: the key stays gone and the holder hears of the loss.
TEST_F(nodes_test, a_force_release_wins_over_a_watchdog_that_recreates_missing_keys) {
    blocking_client client(config());
    std::error_code ec;
    auto held = client.acquire("forced", options(600ms), ec);
    ASSERT_FALSE(ec) << held.message;
    ASSERT_TRUE(eventually([] { return keys_everywhere() == 5; }));
    loss_probe probe;
    renewal_options renewal;
    renewal.recreate_missing = true;
    watchdog dog(client.async_client(), held.lock, renewal, probe.handler());
    ASSERT_TRUE(eventually([&] { return dog.renewals() >= 1; }));

    // An operator's forced release, from another client.
    io_thread io;
    redlock::client operator_client(io.executor(), config());
    const auto result =
        operator_client.async_force_release({"forced"}, 500ms, asio::use_future).get();
    EXPECT_EQ(result.released, 5u) << result.message;

    ASSERT_TRUE(eventually([&] { return probe.get().has_value(); }, 2s))
        << "the holder is told at its next renewal (every 200 ms here)";
    EXPECT_EQ(*probe.get(), errc::lock_lost);
    EXPECT_TRUE(dog.lost());
    std::this_thread::sleep_for(1500ms);
    EXPECT_EQ(keys_everywhere(), 0) << "a renewal wrote the force-released key back";
}

TEST_F(nodes_test, renewal_recreates_a_key_lost_by_a_restart_only_when_asked) {
    blocking_client client(config());
    std::error_code ec;
    auto plain = client.acquire("plain", options(600ms), ec);
    ASSERT_FALSE(ec);
    auto healing = client.acquire("healing", options(600ms), ec);
    ASSERT_FALSE(ec);
    renewal_options recreate;
    recreate.recreate_missing = true;
    watchdog plain_dog(client.async_client(), plain.lock);
    watchdog healing_dog(client.async_client(), healing.lock, recreate);
    topology::restart(1); // empty: both keys gone from node 1
    inspector look(1);
    EXPECT_TRUE(eventually([&] { return look.get("healing") == healing.lock.token(); }, 3s));
    EXPECT_FALSE(look.get("plain").has_value()) << "off by default";
    EXPECT_FALSE(plain_dog.lost()) << "four of five still renew";
}

// Regression (issue 12, defect 5): a renewal answered NOSCRIPT after its round was decided
// was sent again as EVAL, by then behind the release that followed: with recreate_missing
// it wrote the released key back.
TEST_F(nodes_test, no_renewal_is_sent_again_behind_the_release) {
    blocking_client client(config());
    std::error_code ec;
    auto held = client.acquire("resent", options(3s), ec);
    ASSERT_FALSE(ec) << held.message;
    // Node 1 forgets the extend script but keeps the release script, then stalls: its
    // renewal waits in the socket, answered NOSCRIPT only after the release has run.
    inspector(1).run({"SCRIPT", "FLUSH"});
    inspector(1).run({"SCRIPT", "LOAD", std::string(detail::release_script.text)});
    topology::pause(1);
    renewal_options renewal;
    renewal.interval = 200ms;
    renewal.recreate_missing = true;
    std::optional<watchdog> dog(std::in_place, client.async_client(), held.lock, renewal);
    ASSERT_TRUE(eventually([&] { return dog->renewals() >= 1; })) << "four nodes renew";
    std::promise<void> stopped;
    dog->async_stop([&] { stopped.set_value(); });
    stopped.get_future().wait();
    auto released = client.release(dog->current(), ec);
    EXPECT_GE(released.released, 3u) << "a quorum of the four running nodes";
    topology::resume(1);
    // Two sequential acquires: the second one's SET leaves after the first one's reply,
    // so after every reply node 1 owed before it, NOSCRIPT included, was handled.
    for (int i = 0; i < 2; ++i) {
        auto probe = client.acquire("probe", options(), ec);
        ASSERT_FALSE(ec) << probe.message;
        client.release(probe.lock, ec);
    }
    EXPECT_EQ(inspector(1).get("resent"), std::nullopt) << "the key was written back";
}

// Found by the review of issue 12's change: with the drain, the operations waiting for the
// last replies were the client's last owners, and the last reply freed the client, and its
// connection, inside hiredis' callback, which then used the freed connection (ASan, valgrind).
TEST_F(nodes_test, a_client_destroyed_with_commands_in_flight_outlives_their_replies) {
    asio::io_context io;
    auto single = config();
    single.nodes.resize(1);
    auto owner = std::make_unique<client>(io.get_executor(), single);
    std::optional<std::error_code> outcome;
    owner->async_acquire("in-flight", options(),
                         [&](boost::system::error_code ec, acquire_result) { outcome = ec; });
    asio::post(io, [&] { owner.reset(); });
    io.run();
    ASSERT_TRUE(outcome.has_value());
    EXPECT_EQ(*outcome, errc::cancelled);
    EXPECT_EQ(keys_everywhere(), 0) << "the cancelled acquire's cleanup was drained";
}

// Regression (issue 12, defect 8): a completion handler ran inside hiredis' reply parsing
// (dispatched from the reply callback), so a handler that threw unwound through C code and
// abandoned the replies behind its own in the same read. Handlers are posted: the exception
// leaves io_context::run(), every reply is handled, and the client carries on.
TEST_F(nodes_test, a_throwing_handler_leaves_through_run_and_the_client_carries_on) {
    asio::io_context io;
    auto single = config();
    single.nodes.resize(1); // both replies come on one connection, in one read
    client c(io.get_executor(), single);
    std::optional<lock> first;
    std::optional<std::error_code> second_error;
    std::optional<lock> second;
    c.async_acquire("throwing", options(), [&](boost::system::error_code ec, acquire_result r) {
        if (!ec) {
            first = r.lock;
        }
        throw std::runtime_error("handler failed");
    });
    c.async_acquire("behind-it", options(), [&](boost::system::error_code ec, acquire_result r) {
        second_error = ec;
        if (!ec) {
            second = r.lock;
        }
    });
    EXPECT_THROW(io.run(), std::runtime_error);
    io.restart();
    io.run_for(1s);
    ASSERT_TRUE(first.has_value());
    ASSERT_TRUE(second_error.has_value()) << "the reply behind the throwing handler's was lost";
    EXPECT_FALSE(*second_error) << "granted by the node, not timed out";

    std::error_code release_error = make_error_code(errc::cancelled);
    std::size_t released = 0;
    for (const auto& held : {*first, *second}) {
        c.async_release(held, [&](boost::system::error_code ec, release_result r) {
            release_error = ec;
            released += r.released;
        });
    }
    io.restart();
    io.run_for(1s);
    EXPECT_FALSE(release_error);
    EXPECT_EQ(released, 2u);
    EXPECT_EQ(keys_everywhere(), 0);
}

TEST_F(nodes_test, client_shutdown_ends_renewal_with_cancelled) {
    loss_probe probe;
    std::optional<watchdog> dog;
    {
        blocking_client client(config());
        std::error_code ec;
        auto held = client.acquire("shutdown", options(5s), ec);
        ASSERT_FALSE(ec);
        dog.emplace(client.async_client(), held.lock, renewal_options{}, probe.handler());
    }
    ASSERT_TRUE(probe.get().has_value());
    EXPECT_EQ(*probe.get(), errc::cancelled);
    EXPECT_TRUE(dog->lost());
}

// Regression (issue 12, defect 11): shutting a client down dropped the commands still in
// its buffers, so a release (or a cleanup) issued just before the teardown never reached
// the nodes and the keys stayed for their whole TTL.
TEST_F(nodes_test, a_release_issued_as_the_client_is_torn_down_still_reaches_every_node) {
    asio::io_context io;
    std::optional<client> owner(std::in_place, io.get_executor(), config());
    bool acquired = false;
    owner->async_acquire(
        "teardown", options(30s), [&](boost::system::error_code ec, acquire_result r) {
            acquired = !ec;
            if (ec) {
                return;
            }
            owner->async_release(r.lock, [](boost::system::error_code, release_result) {});
            owner.reset();
        });
    io.run(); // returns once the shutdown drained: bounded by node_timeout
    ASSERT_TRUE(acquired);
    EXPECT_EQ(keys_everywhere(), 0) << "the release went out before the connections closed";
}

TEST_F(nodes_test, a_release_sent_while_the_connections_are_still_being_made_is_drained_too) {
    // The releasing client has never talked to the nodes: its release waits for the
    // connections (and their handshake) when the client goes, and must still reach them.
    asio::io_context io;
    std::optional<client> owner(std::in_place, io.get_executor(), config());
    std::optional<client> releaser(std::in_place, io.get_executor(), config());
    bool acquired = false;
    auto patient = options(30s);
    patient.node_timeout = 2s; // the drain's bound: generous for a loaded sanitizer run
    owner->async_acquire(
        "teardown-connecting", patient, [&](boost::system::error_code ec, acquire_result r) {
            acquired = !ec;
            owner.reset();
            if (ec) {
                return;
            }
            releaser->async_release(r.lock, [](boost::system::error_code, release_result) {});
            releaser.reset();
        });
    io.run(); // returns once both clients closed
    ASSERT_TRUE(acquired);
    EXPECT_EQ(keys_everywhere(), 0) << "the held-back release went out before the client closed";
}

TEST_F(nodes_test, with_lock_coroutine_returns_the_value_and_releases) {
    io_thread io;
    std::optional<client> async(std::in_place, io.executor(), config());
    auto run = [&]() -> asio::awaitable<locked<int>> {
        co_return co_await with_lock(*async, "with", options(300ms), renewal_options{},
                                     [&](const watchdog& dog) -> asio::awaitable<int> {
                                         asio::steady_timer wait(co_await asio::this_coro::executor,
                                                                 700ms);
                                         co_await wait.async_wait(asio::use_awaitable);
                                         EXPECT_FALSE(dog.lost());
                                         EXPECT_GE(dog.renewals(), 3u);
                                         EXPECT_EQ(keys_everywhere(), 5);
                                         co_return 42;
                                     });
    };
    auto result = asio::co_spawn(io.context(), run(), asio::use_future).get();
    EXPECT_FALSE(result.error) << result.message;
    EXPECT_EQ(result.value, 42);
    EXPECT_TRUE(all_keys_gone());
    async.reset();
}

TEST_F(nodes_test, with_lock_coroutine_cancels_the_work_on_loss) {
    io_thread io;
    std::optional<client> async(std::in_place, io.executor(), config());
    std::atomic<bool> work_cancelled{false};
    auto run = [&]() -> asio::awaitable<locked<void>> {
        co_return co_await with_lock(
            *async, "lost-work", options(400ms), renewal_options{},
            [&](const watchdog&) -> asio::awaitable<void> {
                topology::pause_majority();
                asio::steady_timer forever(co_await asio::this_coro::executor, 30s);
                try {
                    co_await forever.async_wait(asio::use_awaitable);
                } catch (const boost::system::system_error& e) {
                    work_cancelled = e.code() == asio::error::operation_aborted;
                    throw;
                }
            });
    };
    const auto start = clock_type::now();
    auto result = asio::co_spawn(io.context(), run(), asio::use_future).get();
    EXPECT_EQ(result.error, errc::lock_lost) << result.message;
    EXPECT_TRUE(work_cancelled);
    EXPECT_LT(since(start), 5s) << "the work stopped at the loss, not after 30 s";
    async.reset();
}

TEST_F(nodes_test, with_lock_coroutine_releases_on_exception_and_rethrows) {
    io_thread io;
    std::optional<client> async(std::in_place, io.executor(), config());
    auto run = [&]() -> asio::awaitable<locked<void>> {
        co_return co_await with_lock(*async, "throws", options(), renewal_options{},
                                     [](const watchdog&) -> asio::awaitable<void> {
                                         throw std::runtime_error("business failure");
                                         co_return;
                                     });
    };
    auto future = asio::co_spawn(io.context(), run(), asio::use_future);
    EXPECT_THROW(future.get(), std::runtime_error);
    EXPECT_TRUE(all_keys_gone());
    async.reset();
}

TEST_F(nodes_test, with_lock_blocking_success_exception_and_loss) {
    blocking_client client(config());
    auto ok =
        client.with_lock("b-ok", options(300ms), {}, [](const watchdog& dog, std::stop_token) {
            std::this_thread::sleep_for(600ms);
            return dog.renewals();
        });
    EXPECT_FALSE(ok.error) << ok.message;
    ASSERT_TRUE(ok.value.has_value());
    EXPECT_GE(*ok.value, 2u);
    EXPECT_TRUE(all_keys_gone());

    EXPECT_THROW(
        client.with_lock("b-throw", options(), {},
                         [](const watchdog&, std::stop_token) { throw std::logic_error("boom"); }),
        std::logic_error);
    EXPECT_TRUE(all_keys_gone());

    bool saw_stop = false;
    auto lost =
        client.with_lock("b-lost", options(400ms), {}, [&](const watchdog&, std::stop_token stop) {
            topology::pause_majority();
            for (int i = 0; i < 500 && !stop.stop_requested(); ++i) {
                std::this_thread::sleep_for(10ms);
            }
            saw_stop = stop.stop_requested();
        });
    EXPECT_EQ(lost.error, errc::lock_lost) << lost.message;
    EXPECT_TRUE(saw_stop);
}

TEST_F(nodes_test, bad_renewal_options_are_refused_before_anything_is_locked) {
    blocking_client client(config());
    renewal_options bad;
    bad.interval = -1ms;
    bool ran = false;
    auto r = client.with_lock("never", options(), bad,
                              [&](const watchdog&, std::stop_token) { ran = true; });
    EXPECT_EQ(r.error, errc::invalid_argument);
    EXPECT_NE(r.message.find("interval"), std::string::npos) << r.message;
    EXPECT_FALSE(ran);
    EXPECT_EQ(keys_everywhere(), 0);

    std::error_code ec;
    auto held = client.acquire("held", options(), ec);
    ASSERT_FALSE(ec);
    try {
        watchdog dog(client.async_client(), held.lock, bad);
        ADD_FAILURE() << "a watchdog with a negative interval";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::invalid_argument);
    }
    client.release(held.lock, ec);
}

/// The classic Redlock double grant: the holder's majority is {1, 2, 3}; node 3 restarts
/// empty and nodes 4 and 5 come up empty, so a second client finds three nodes that say yes.
class quarantine_test : public nodes_test {
protected:
    /// Outlasts a kill and three restarts: about a second locally, a few seconds each on
    /// containers (`docker start` sets up a network namespace and the port forwarding).
    static std::chrono::milliseconds restarts_ttl() { return topology::containers() ? 30s : 3s; }

    lock hold_on_one_two_three(blocking_client& holder) {
        topology::stop(4);
        topology::stop(5);
        std::error_code ec;
        auto held = holder.acquire("double-grant", options(restarts_ttl()), ec);
        EXPECT_FALSE(ec) << held.message;
        topology::kill(3);
        topology::restart(3);
        topology::restart(4);
        topology::restart(5);
        return held.lock;
    }
};

TEST_F(quarantine_test, off_a_restarted_majority_grants_the_lock_twice) {
    blocking_client first(config());
    auto held = hold_on_one_two_three(first);
    blocking_client second(config()); // quarantine off
    std::error_code ec;
    auto again = second.acquire("double-grant", options(restarts_ttl()), ec);
    EXPECT_FALSE(ec) << "the double grant this test documents";
    EXPECT_GT(held.remaining(), 0ms) << "while the first holder's lock is still valid";
}

TEST_F(quarantine_test, on_the_restarted_nodes_votes_do_not_count) {
    blocking_client first(config());
    auto held = hold_on_one_two_three(first);
    auto guarded = config();
    guarded.quarantine.enabled = true;
    blocking_client second(guarded);
    std::error_code ec;
    auto refused = second.acquire("double-grant", options(restarts_ttl()), ec);
    // Without the quarantine the restarted nodes would have granted: it alone decided.
    EXPECT_EQ(ec, errc::nodes_quarantined) << refused.message;
    EXPECT_NE(refused.message.find("quarantined: node restarted "), std::string::npos)
        << refused.message;
    EXPECT_GT(held.remaining(), 0ms);
    // The attempt is decided the moment a quorum is out of reach: the restarted nodes that
    // answered by then were quarantined, the others are still pending.
    std::size_t quarantined = 0;
    for (std::size_t node : {2u, 3u, 4u}) {
        if (refused.votes[node].outcome == node_outcome::pending) {
            continue;
        }
        ++quarantined;
        EXPECT_EQ(refused.votes[node].error, errc::node_quarantined) << node;
        EXPECT_NE(refused.votes[node].server_message.find("count again in"), std::string::npos);
    }
    EXPECT_GE(quarantined, 1u);
    EXPECT_TRUE(eventually([] { return inspector(4).dbsize() == 0; }))
        << "the refused attempt cleaned up the keys it set";
}

/// An ACL user allowed everything but INFO on every node, for as long as this lives.
class user_without_info {
public:
    user_without_info() {
        for (int node = 1; node <= static_cast<int>(topology::size()); ++node) {
            EXPECT_EQ(
                inspector(node).run({"ACL", "SETUSER", name, "on", ">pw", "~*", "+@all", "-info"}),
                "OK");
        }
    }
    ~user_without_info() {
        for (int node = 1; node <= static_cast<int>(topology::size()); ++node) {
            inspector(node).run({"ACL", "DELUSER", name});
        }
    }
    user_without_info(const user_without_info&) = delete;
    user_without_info& operator=(const user_without_info&) = delete;

    static client_config connecting_as_it(client_config c) {
        for (auto& node : c.nodes) {
            node = std::string("redis://") + name + ":pw@" + node;
        }
        return c;
    }

private:
    static constexpr const char* name = "no-info";
};

TEST_F(quarantine_test, nodes_that_refuse_info_get_no_votes_while_the_quarantine_is_on) {
    user_without_info user;
    auto guarded = user_without_info::connecting_as_it(config());
    guarded.quarantine.enabled = true;
    std::error_code ec;
    {
        blocking_client client(guarded);
        auto refused = client.acquire("blind", options(), ec);
        EXPECT_EQ(ec, errc::quorum_unreachable) << refused.message;
        std::size_t blind = 0;
        for (const auto& vote : refused.votes) {
            if (vote.outcome == node_outcome::pending) {
                continue; // decided without it
            }
            ++blind;
            EXPECT_EQ(vote.error, errc::restarts_undetectable) << vote.node;
            EXPECT_TRUE(vote.server_message.starts_with(
                "INFO refused: restarts and evictions cannot be detected"))
                << vote.server_message;
        }
        EXPECT_GE(blind, 3u);
        EXPECT_TRUE(all_keys_gone()) << "the refused attempt cleaned up the keys it set";
    }
    auto unguarded = guarded;
    unguarded.quarantine.enabled = false;
    unguarded.eviction.accept_evicting_nodes = true; // INFO tells the memory policy too
    blocking_client client(unguarded);
    auto granted = client.acquire("blind", options(), ec);
    EXPECT_FALSE(ec) << "the user chose to live without restart detection: " << granted.message;
    client.release(granted.lock, ec);
}

/// The defaults users get: a client whose own locks are short still waits out the longest
/// lock another client may hold on the restarted node (client_config::fleet_max_ttl), not its
/// own ttl. Before, B counted node 3 once its own 1 s ttl had passed: a double grant.
TEST_F(quarantine_test, a_short_ttl_client_waits_out_the_fleet_maximum_after_a_restart) {
    topology::stop(4);
    topology::stop(5);
    blocking_client a(config());
    std::error_code ec;
    auto held = a.acquire("fleet", options(30s), ec);
    ASSERT_FALSE(ec) << held.message;
    topology::restart(3);
    topology::restart(4);
    topology::restart(5);
    std::this_thread::sleep_for(2s);

    client_config defaults;
    defaults.nodes = topology::addresses();
    blocking_client b(defaults);
    auto refused = b.acquire("fleet", options(1s), ec);
    EXPECT_EQ(ec, errc::nodes_quarantined) << refused.message;
    EXPECT_GT(held.lock.remaining(), 0ms) << "A's lock stands";
    a.release(held.lock, ec);
}

/// An address that comes to reach another server (a failover to a replica, a DNS or VIP
/// change) is a restart as far as the locks it granted go, but the new server's uptime is
/// long. The quarantine runs the fleet maximum from the moment the link saw the other run_id,
/// also across the INFO refreshes that follow (each 1 s, each reporting that long uptime):
/// before, the first refresh placed the "restart" at the new server's own start and its votes
/// counted again after one second.
TEST_F(quarantine_test, an_address_that_moves_to_a_long_running_server_waits_out_the_maximum) {
    ASSERT_TRUE(every_node_up_for(4s)) << "the servers must be older than the maximum";
    fault_proxy moving("127.0.0.1", static_cast<std::uint16_t>(topology::port(1)));
    auto guarded = config();
    guarded.quarantine.enabled = true;
    guarded.fleet_max_ttl = 3s;
    // Node 3 is down: the moving address decides every quorum.
    guarded.nodes = {moving.address(), topology::addresses()[1], topology::addresses()[2]};
    topology::stop(3);
    blocking_client client(guarded);
    std::error_code ec;
    auto before = client.acquire("moving", options(1s), ec);
    ASSERT_FALSE(ec) << "the old server is long up: " << before.message;
    client.release(before.lock, ec);

    moving.retarget(static_cast<std::uint16_t>(topology::port(4)));
    // The first acquire may still write to the cut connection; the link reconnects lazily,
    // and the quarantine runs from the reconnect that shows the other run_id.
    acquire_result refused;
    ASSERT_TRUE(eventually([&] {
        refused = client.acquire("moving", options(1s), ec);
        return refused.votes[0].error != errc::connection_failed;
    }));
    const auto seen = std::chrono::steady_clock::now();
    EXPECT_EQ(ec, errc::nodes_quarantined) << refused.message;
    EXPECT_EQ(refused.votes[0].error, errc::node_quarantined) << refused.votes[0].server_message;

    // Past two refreshes of the new server, whose uptime is well above the maximum.
    std::this_thread::sleep_for(2200ms);
    auto still = client.acquire("moving", options(1s), ec);
    ASSERT_LT(std::chrono::steady_clock::now() - seen, 3s) << "too slow to test";
    EXPECT_EQ(ec, errc::nodes_quarantined)
        << "counted again after the refreshes: " << still.message;
    EXPECT_EQ(still.votes[0].error, errc::node_quarantined) << still.votes[0].server_message;

    // The maximum plus drift has passed since the move was seen: it counts.
    std::this_thread::sleep_for(3s + 500ms - (std::chrono::steady_clock::now() - seen));
    auto o = options(1s);
    o.retry = {}; // the default retries: the ceilings are read once more past the maximum
    auto later = client.acquire("moving", o, ec);
    EXPECT_FALSE(ec) << later.message;
    EXPECT_EQ(inspector(4).get("moving"), later.lock.token()) << "granted by the new server";
    client.release(later.lock, ec);
}

TEST_F(quarantine_test, votes_count_again_after_the_fleet_maximum) {
    // Each restart takes a second or more on a busy machine (several on containers): the
    // maximum outlasts all three.
    const auto maximum = topology::containers() ? 20s : 6s;
    const auto first_restart = std::chrono::steady_clock::now();
    topology::restart(1);
    topology::restart(2);
    topology::restart(3);
    auto guarded = config();
    guarded.quarantine.enabled = true;
    guarded.fleet_max_ttl = maximum;
    blocking_client client(guarded);
    std::error_code ec;
    auto early = client.acquire("later", options(500ms), ec);
    EXPECT_LT(std::chrono::steady_clock::now() - first_restart, maximum) << "too slow to test";
    EXPECT_EQ(ec, errc::nodes_quarantined) << early.message;
    // Whole seconds of uptime, rounded down: a restart may be placed up to 1 s late.
    std::this_thread::sleep_for(maximum + 1200ms);
    // Past the maximum the other nodes' ceilings are read once more (at the restarted nodes'
    // next INFO, or at their first vote) before they count: a first attempt may meet that
    // read on its way, so this one retries as acquires do by default.
    auto o = options(500ms);
    o.retry = {};
    auto later = client.acquire("later", o, ec);
    EXPECT_FALSE(ec) << later.message;
}

} // namespace
} // namespace redlock::test
