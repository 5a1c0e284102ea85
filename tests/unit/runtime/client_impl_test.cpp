#include "runtime/client_impl.hpp"

#include "client/client_access.hpp"
#include "redlock/watchdog.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using redlock::detail::clock;

/// Time that moves only when the test says; timers never fire (every round here is decided
/// by its replies), but hold their function until cancelled, as real ones do.
struct manual_time final : redlock::detail::time_source {
    struct idle_alarm final : redlock::detail::alarm {
        void arm(clock::time_point, std::function<void()> fn) override { fn_ = std::move(fn); }
        void cancel() override { const auto dropped = std::exchange(fn_, nullptr); }
        std::function<void()> fn_;
    };
    explicit manual_time(const clock::time_point& now)
        : now_(now) {}
    clock::time_point now() const override { return now_; }
    std::unique_ptr<redlock::detail::alarm> make_alarm() override {
        return std::make_unique<idle_alarm>();
    }
    const clock::time_point& now_;
};

/// A node that keeps what it is sent until the test answers: SET with OK and scripts with 1,
/// or, when it refuses, with nil and 0.
class scripted_link final : public redlock::detail::node_link {
public:
    explicit scripted_link(redlock::node_address address)
        : address_(std::move(address)) {}

    void send(const redlock::detail::command& cmd,
              const std::shared_ptr<redlock::detail::reply_target>& target,
              std::uint64_t tag) override {
        sent_.push_back({std::string(cmd.args[0]), target, tag});
        ++sent_count_;
    }
    void shutdown(std::chrono::milliseconds) override { sent_.clear(); }
    void expect_replies_within(std::chrono::milliseconds patience) override {
        patience_ = patience;
    }
    std::chrono::milliseconds patience() const { return patience_; }
    std::optional<clock::time_point> started_at() const noexcept override { return started_at_; }
    std::optional<clock::time_point> restart_seen_at() const noexcept override {
        return restart_seen_at_;
    }
    const redlock::node_address& address() const noexcept override { return address_; }
    std::string_view run_id() const noexcept override { return run_id_; }
    std::string_view restarts_undetectable() const noexcept override { return undetectable_; }
    std::string_view eviction_risk() const noexcept override { return eviction_risk_; }
    std::string_view quarantine_cause() const noexcept override { return quarantine_cause_; }
    std::string_view clock_steps_undetectable() const noexcept override { return {}; }
    void allow_clock_drift(double rate) override { clock_drift_ = rate; }
    double clock_drift() const { return clock_drift_; }

    bool has_sent() const { return !sent_.empty(); }

    /// Answers everything sent so far.
    void answer_all() {
        static char ok[] = "OK";
        static char noscript[] = "NOSCRIPT No matching script. Please use EVAL.";
        for (auto& s : std::exchange(sent_, {})) {
            redisReply reply{};
            if (always_noscript_ && s.name != "SET") {
                reply.type = REDIS_REPLY_ERROR;
                reply.str = noscript;
                reply.len = sizeof noscript - 1;
                s.target->on_reply(s.tag, redlock::detail::node_reply{{}, &reply, noscript});
                continue;
            }
            if (refuses_) {
                if (s.name == "SET") {
                    reply.type = REDIS_REPLY_NIL;
                } else {
                    reply.type = REDIS_REPLY_INTEGER;
                    reply.integer = 0;
                }
            } else if (s.name == "SET") {
                reply.type = REDIS_REPLY_STATUS;
                reply.str = ok;
                reply.len = 2;
            } else {
                reply.type = REDIS_REPLY_INTEGER;
                reply.integer = 1;
            }
            s.target->on_reply(s.tag, redlock::detail::node_reply{{}, &reply, {}});
        }
    }

    std::optional<clock::time_point> started_at_;
    std::optional<clock::time_point> restart_seen_at_;
    std::string run_id_;
    std::string undetectable_;
    std::string eviction_risk_;
    std::string quarantine_cause_;
    double clock_drift_ = 0;
    std::chrono::milliseconds patience_{0};
    bool refuses_ = false;
    /// Answers every script with NOSCRIPT, EVAL included (a broken or hostile node).
    bool always_noscript_ = false;
    std::size_t sent_count_ = 0;

private:
    struct sent {
        std::string name;
        std::shared_ptr<redlock::detail::reply_target> target;
        std::uint64_t tag;
    };
    redlock::node_address address_;
    std::deque<sent> sent_;
};

/// A real client over three scripted nodes and a manual clock, run by the test's thread.
class scripted_client {
public:
    explicit scripted_client(redlock::client_config config = {}) {
        redlock::detail::environment env;
        env.make_time = [this](const boost::asio::any_io_executor&) {
            return std::make_unique<manual_time>(now_);
        };
        env.make_link = [this](const boost::asio::any_io_executor&, redlock::node_address address,
                               const redlock::client_config&) {
            auto link = std::make_unique<scripted_link>(std::move(address));
            links_.push_back(link.get());
            return link;
        };
        env.next_token = [n = 0]() mutable { return "token-" + std::to_string(++n); };
        std::vector<redlock::node_address> addresses(3);
        for (std::size_t i = 0; i < addresses.size(); ++i) {
            addresses[i].host = "10.0.0." + std::to_string(i + 1);
        }
        impl_ = redlock::detail::client_impl::create(io_.get_executor(), std::move(config),
                                                     std::move(addresses), std::move(env));
        client_.reset(
            new redlock::client(redlock::detail::client_access::make(io_.get_executor(), impl_)));
    }
    ~scripted_client() {
        client_.reset();
        io_.poll();
    }

    /// Starts an acquire and answers what it sends, leaving it wherever that gets it.
    void
    start_acquire(const redlock::lock_options& options,
                  std::function<void(boost::system::error_code, redlock::acquire_result)> done) {
        client_->async_acquire("k", options, std::move(done));
        answer();
    }

    std::pair<boost::system::error_code, redlock::acquire_result>
    try_acquire(const redlock::lock_options& options) {
        std::pair<boost::system::error_code, redlock::acquire_result> outcome;
        bool done = false;
        client_->async_acquire("k", options,
                               [&](boost::system::error_code ec, redlock::acquire_result r) {
                                   outcome = {ec, std::move(r)};
                                   done = true;
                               });
        answer();
        EXPECT_TRUE(done);
        return outcome;
    }

    redlock::lock acquire(const redlock::lock_options& options) {
        auto [ec, result] = try_acquire(options);
        EXPECT_FALSE(ec) << result.message;
        return result.lock;
    }

    std::pair<boost::system::error_code, redlock::extend_result>
    try_extend(const redlock::lock& held, std::chrono::milliseconds ttl) {
        std::optional<std::pair<boost::system::error_code, redlock::extend_result>> outcome;
        client_->async_extend(held, ttl,
                              [&](boost::system::error_code ec, redlock::extend_result r) {
                                  outcome.emplace(ec, std::move(r));
                              });
        answer();
        EXPECT_TRUE(outcome);
        return outcome ? std::move(*outcome)
                       : std::pair<boost::system::error_code, redlock::extend_result>{};
    }

    redlock::lock extend(const redlock::lock& held, std::chrono::milliseconds ttl) {
        auto [ec, result] = try_extend(held, ttl);
        EXPECT_FALSE(ec) << result.message;
        return result.lock;
    }

    redlock::client& api() { return *client_; }

    /// Starts a release; `rounds` times, every node answers what it was sent.
    void release(const redlock::lock& held, int rounds) {
        client_->async_release(held, [](boost::system::error_code, redlock::release_result) {});
        for (int i = 0; i < rounds; ++i) {
            io_.poll();
            io_.restart();
            for (auto* link : links_) {
                link->answer_all();
            }
        }
        io_.poll();
        io_.restart();
    }

    /// Node `node` restarts now, as its link would find out on reconnecting.
    void restart(std::size_t node) {
        links_.at(node)->started_at_ = now_;
        links_.at(node)->restart_seen_at_ = now_;
    }
    scripted_link& link(std::size_t node) { return *links_.at(node); }
    std::optional<std::chrono::milliseconds> quarantine_left(std::size_t node) {
        return impl_->quarantine_left(node, now_);
    }

    clock::time_point now_{clock::duration(std::chrono::hours(1))};

private:
    /// Answers until nothing more is sent (a failed attempt's cleanups, too).
    void answer() {
        io_.poll();
        io_.restart();
        while (std::any_of(links_.begin(), links_.end(),
                           [](const scripted_link* l) { return l->has_sent(); })) {
            for (auto* link : links_) {
                link->answer_all();
            }
            io_.poll();
            io_.restart();
        }
    }

    boost::asio::io_context io_;
    std::vector<scripted_link*> links_;
    std::shared_ptr<redlock::detail::client_impl> impl_;
    std::unique_ptr<redlock::client> client_;
};

/// A client with the default settings but for fleet_max_ttl.
redlock::client_config with_fleet_max(std::chrono::milliseconds fleet_max_ttl) {
    redlock::client_config config;
    config.fleet_max_ttl = fleet_max_ttl;
    return config;
}

TEST(quarantine, lasts_the_fleet_maximum_whatever_ttl_this_client_uses) {
    // Another client may hold a 60 s lock on the restarted node: this one's 1 s locks say
    // nothing of it.
    scripted_client c;
    redlock::lock_options options;
    options.ttl = 1s;
    c.acquire(options);
    c.restart(0);
    // The default maximum, 60 s, + 1 % + 2 ms.
    EXPECT_EQ(c.quarantine_left(0), 60602ms);
    c.now_ += 60601ms;
    EXPECT_EQ(c.quarantine_left(0), 1ms);
    c.now_ += 1ms;
    EXPECT_FALSE(c.quarantine_left(0));
}

TEST(quarantine, lasts_the_fleet_maximum_for_a_client_that_took_no_lock) {
    // status, release, a watchdog on a lock acquired elsewhere: all weigh the same restart.
    scripted_client c(with_fleet_max(5s));
    c.restart(1);
    EXPECT_EQ(c.quarantine_left(1), 5052ms);
    EXPECT_FALSE(c.quarantine_left(0)) << "never restarted";
}

TEST(quarantine, uses_the_drift_settings_of_the_locks_in_use) {
    scripted_client c(with_fleet_max(1s));
    redlock::lock_options options;
    options.ttl = 1s;
    options.clock_drift_factor = 0.5;
    options.drift_allowance = 100ms;
    c.acquire(options);
    c.restart(2);
    // 1 s + 0.5 x 1 s + 100 ms; the default factor and allowance would give 1.012 s.
    EXPECT_EQ(c.quarantine_left(2), 1600ms);
}

TEST(fleet_max_ttl, refuses_an_acquire_or_extend_above_it) {
    scripted_client c(with_fleet_max(10s));
    redlock::lock_options options;
    options.ttl = 10001ms;
    auto [refused, why] = c.try_acquire(options);
    EXPECT_EQ(refused, redlock::errc::invalid_argument);
    EXPECT_NE(why.message.find("fleet_max_ttl"), std::string::npos) << why.message;
    options.ttl = 10s;
    const auto held = c.acquire(options);
    auto [not_extended, said] = c.try_extend(held, 11s);
    EXPECT_EQ(not_extended, redlock::errc::invalid_argument);
    EXPECT_NE(said.message.find("--max-ttl"), std::string::npos) << said.message;
    c.extend(held, 10s);
}

TEST(fleet_max_ttl, a_watchdog_refuses_to_renew_a_lock_above_it) {
    // A lock acquired by a client with a larger maximum, or built from a token.
    scripted_client c(with_fleet_max(10s));
    redlock::lock_options options;
    options.ttl = 20s;
    const redlock::lock foreign(std::string("k"), "token-x", redlock::lock::clock::now() + 20s,
                                options);
    try {
        redlock::watchdog dog(c.api(), foreign);
        ADD_FAILURE() << "renewals would set a 20 s ttl";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), redlock::errc::invalid_argument);
        EXPECT_NE(std::string(e.what()).find("fleet_max_ttl"), std::string::npos) << e.what();
    }
}

TEST(client_shutdown, ends_an_acquire_sleeping_between_attempts) {
    // Then only the op's own timer owns it, and shutdown reaches it through a plain pointer.
    std::optional<std::error_code> outcome;
    {
        scripted_client c;
        for (std::size_t node = 0; node < 3; ++node) {
            c.link(node).refuses_ = true;
        }
        redlock::lock_options options;
        options.retry.max_attempts = 3;
        c.start_acquire(
            options, [&](boost::system::error_code ec, redlock::acquire_result) { outcome = ec; });
        EXPECT_FALSE(outcome) << "refused everywhere, it sleeps before its second attempt";
    } // the client goes, and shuts down
    EXPECT_EQ(outcome, std::optional<std::error_code>(redlock::errc::cancelled));
}

redlock::lock_options one_attempt() {
    redlock::lock_options options;
    options.retry.max_attempts = 1;
    return options;
}

TEST(duplicate_node, a_second_address_of_one_server_does_not_vote_again) {
    redlock::client_config config;
    config.quarantine.enabled = false; // the check must not depend on it
    scripted_client c(config);
    c.link(0).run_id_ = "aaaa";
    c.link(1).run_id_ = "aaaa"; // another name for node 0's server
    c.link(2).run_id_ = "bbbb";
    c.link(2).refuses_ = true;
    auto [ec, result] = c.try_acquire(one_attempt());
    EXPECT_TRUE(ec) << "one server and a refusal are no majority of three";
    ASSERT_EQ(result.votes.size(), 3u);
    EXPECT_EQ(result.votes[0].outcome, redlock::node_outcome::granted);
    EXPECT_EQ(result.votes[1].error, redlock::errc::duplicate_node);
    EXPECT_EQ(result.votes[1].server_message, "same server as 10.0.0.1:6379 (run_id aaaa)");
}

TEST(duplicate_node, counts_again_once_it_reaches_another_server) {
    scripted_client c;
    c.link(0).run_id_ = "aaaa";
    c.link(1).run_id_ = "aaaa";
    c.link(2).run_id_ = "bbbb";
    EXPECT_EQ(c.try_acquire(one_attempt()).second.votes[1].error, redlock::errc::duplicate_node);
    c.link(1).run_id_ = "cccc"; // the alias now resolves elsewhere
    auto [ec, result] = c.try_acquire(one_attempt());
    EXPECT_FALSE(ec) << result.message;
    EXPECT_EQ(result.votes[1].outcome, redlock::node_outcome::granted);
}

TEST(restarts_undetectable, the_nodes_grants_do_not_count_with_the_quarantine_on) {
    scripted_client c;
    c.link(1).undetectable_ = "INFO refused: restarts and evictions cannot be detected (NOPERM)";
    c.link(2).undetectable_ = "INFO refused: restarts and evictions cannot be detected (NOPERM)";
    auto [ec, result] = c.try_acquire(one_attempt());
    EXPECT_EQ(ec, redlock::errc::quorum_unreachable);
    EXPECT_EQ(result.votes[0].outcome, redlock::node_outcome::granted);
    for (std::size_t node : {1, 2}) {
        EXPECT_EQ(result.votes[node].error, redlock::errc::restarts_undetectable);
        EXPECT_EQ(result.votes[node].server_message,
                  "INFO refused: restarts and evictions cannot be detected (NOPERM)");
    }
}

TEST(restarts_undetectable, the_nodes_grants_count_with_the_quarantine_off_and_evictions_accepted) {
    redlock::client_config config;
    config.quarantine.enabled = false;
    config.eviction.accept_evicting_nodes = true;
    scripted_client c(config);
    c.link(0).undetectable_ = "INFO refused: restarts and evictions cannot be detected (NOPERM)";
    c.link(1).undetectable_ = "INFO refused: restarts and evictions cannot be detected (NOPERM)";
    auto [ec, result] = c.try_acquire(one_attempt());
    EXPECT_FALSE(ec) << result.message;
}

TEST(restarts_undetectable, the_nodes_grants_do_not_count_with_the_eviction_veto_on) {
    // INFO refused hides the memory policy too: the quarantine off is not enough.
    redlock::client_config config;
    config.quarantine.enabled = false;
    scripted_client c(config);
    c.link(0).undetectable_ = "INFO refused: restarts and evictions cannot be detected (NOPERM)";
    c.link(1).undetectable_ = "INFO refused: restarts and evictions cannot be detected (NOPERM)";
    auto [ec, result] = c.try_acquire(one_attempt());
    EXPECT_EQ(ec, redlock::errc::quorum_unreachable);
    EXPECT_EQ(result.votes[0].error, redlock::errc::restarts_undetectable);
}

TEST(eviction_veto, a_node_that_can_evict_keys_does_not_vote_by_default) {
    scripted_client c;
    c.link(1).eviction_risk_ = "can evict keys: maxmemory-policy volatile-ttl";
    c.link(2).eviction_risk_ = "can evict keys: maxmemory-policy allkeys-lru";
    auto [ec, result] = c.try_acquire(one_attempt());
    EXPECT_EQ(ec, redlock::errc::quorum_unreachable);
    EXPECT_EQ(result.votes[0].outcome, redlock::node_outcome::granted);
    EXPECT_EQ(result.votes[1].error, redlock::errc::node_can_evict);
    EXPECT_EQ(result.votes[1].server_message, "can evict keys: maxmemory-policy volatile-ttl");
    EXPECT_EQ(result.votes[2].error, redlock::errc::node_can_evict);
}

TEST(clock_step, quarantines_the_node_as_a_restart_would_and_says_why) {
    scripted_client c;
    // What node_connection does on a step: started_at now, restart_seen_at untouched.
    for (const std::size_t node : {1, 2}) {
        c.link(node).started_at_ = c.now_;
        c.link(node).quarantine_cause_ = "clock stepped by +1500 ms";
    }
    EXPECT_EQ(c.quarantine_left(1), 60602ms) << "as long as after a restart";
    auto [ec, result] = c.try_acquire(one_attempt());
    EXPECT_TRUE(ec) << "two of three nodes do not count";
    EXPECT_EQ(result.votes[1].error, redlock::errc::node_quarantined);
    EXPECT_EQ(result.votes[1].server_message,
              "clock stepped by +1500 ms 0.0 s ago, votes count again in 60.6 s");
    c.link(1).quarantine_cause_.clear();
    c.link(1).restart_seen_at_ = c.now_;
    auto [again, restarted] = c.try_acquire(one_attempt());
    EXPECT_EQ(restarted.votes[1].server_message,
              "node restarted 0.0 s ago, votes count again in 60.6 s");
}

TEST(clock_step, the_links_allow_the_largest_drift_factor_in_use) {
    scripted_client c;
    EXPECT_EQ(c.link(0).clock_drift_, 0) << "the links start at the default themselves";
    redlock::lock_options options;
    options.clock_drift_factor = 0.05;
    c.acquire(options);
    EXPECT_EQ(c.link(0).clock_drift_, 0.05);
    options.clock_drift_factor = 0.02;
    c.acquire(options);
    EXPECT_EQ(c.link(2).clock_drift_, 0.05) << "only grows, as the quarantine's drift";
}

TEST(eviction_veto, an_evicting_node_votes_when_the_user_accepts_it) {
    redlock::client_config config;
    config.eviction.accept_evicting_nodes = true;
    scripted_client c(config);
    c.link(1).eviction_risk_ = "can evict keys: maxmemory-policy volatile-ttl";
    c.link(2).eviction_risk_ = "can evict keys: maxmemory-policy volatile-ttl";
    auto [ec, result] = c.try_acquire(one_attempt());
    EXPECT_FALSE(ec) << result.message;
}

} // namespace

// Found by the review of issue 12's change: a node answering NOSCRIPT even to EVAL had the
// same command sent again for ever (thousands a second), holding the operation and the
// client alive.
TEST(noscript, a_command_is_sent_again_at_most_once) {
    scripted_client c;
    const auto held = c.acquire({});
    auto& broken = c.link(0);
    broken.always_noscript_ = true;
    const auto before = broken.sent_count_;
    c.release(held, 10);
    EXPECT_EQ(broken.sent_count_ - before, 2u) << "EVALSHA, then EVAL once";
    EXPECT_FALSE(broken.has_sent());
}

TEST(reply_patience, is_four_times_the_longest_node_timeout_and_never_under_a_second) {
    scripted_client c;
    redlock::lock_options options;
    options.node_timeout = 50ms;
    c.acquire(options);
    EXPECT_EQ(c.link(0).patience(), 1s) << "4 x 50 ms is under the floor";
    options.node_timeout = 400ms;
    c.acquire(options);
    for (std::size_t node = 0; node < 3; ++node) {
        EXPECT_EQ(c.link(node).patience(), 1600ms);
    }
    options.node_timeout = 100ms;
    c.acquire(options);
    EXPECT_EQ(c.link(2).patience(), 1600ms) << "the longest node_timeout in use still counts";
}
