#include "runtime/client_impl.hpp"

#include "client/client_access.hpp"
#include "redlock/watchdog.hpp"
#include "support/manual_time.hpp"

#include <gtest/gtest.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <deque>
#include <malloc.h>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using redlock::detail::clock;

using redlock::test::manual_time;

/// A node that keeps what it is sent until the test answers: SET with OK and scripts with 1,
/// or, when it refuses, with nil and 0.
class scripted_link final : public redlock::detail::node_link {
public:
    explicit scripted_link(redlock::node_address address)
        : address_(std::move(address)) {}

    void send(const redlock::detail::command& cmd,
              const std::shared_ptr<redlock::detail::reply_target>& target,
              std::uint64_t tag) override {
        sent_.push_back({std::string(cmd.args[0]), target, tag, cmd.args.size()});
        ++sent_count_;
    }
    // Batching decides only when a connection writes, and this link writes nothing.
    void begin_batch() override {}
    void end_batch() override {}
    redlock::detail::link_readiness readiness() const noexcept override { return readiness_; }
    void warm_up() override { ++warm_ups_; }
    void on_readiness_changed(std::function<void()> changed) override {
        readiness_changed_ = std::move(changed);
    }
    /// The connection gets to `r`, and says so.
    void become(redlock::detail::link_readiness r) {
        readiness_ = r;
        readiness_changed_();
    }
    redlock::detail::link_readiness readiness_ = redlock::detail::link_readiness::ready;
    std::function<void()> readiness_changed_;
    int warm_ups_ = 0;
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
    std::string_view not_primary() const noexcept override { return not_primary_; }
    std::string_view quarantine_cause() const noexcept override { return quarantine_cause_; }
    std::string_view clock_steps_undetectable() const noexcept override { return {}; }
    std::uint64_t connection_generation() const noexcept override { return 0; }
    void allow_clock_drift(double rate) override { clock_drift_ = rate; }
    void on_server_read(std::function<void()> seen) override { server_read_ = std::move(seen); }
    double clock_drift() const { return clock_drift_; }
    /// What the link does after reading INFO: the test moved started_at_ and says so.
    void read_server() {
        if (server_read_) {
            server_read_();
        }
    }

    bool has_sent() const { return !sent_.empty(); }

    /// Fails the command sent last, as a connection with too many commands waiting does
    /// while the earlier ones stay queued.
    void fail_newest() {
        auto s = sent_.back();
        sent_.pop_back();
        s.target->on_reply(s.tag, redlock::detail::node_reply{redlock::errc::node_backlogged,
                                                              nullptr, "backlogged"});
    }

    /// Answers everything sent so far.
    void answer_all() {
        static char ok[] = "OK";
        static char noscript[] = "NOSCRIPT No matching script. Please use EVAL.";
        for (auto& s : std::exchange(sent_, {})) {
            redisReply reply{};
            if (!ceiling_.empty() && s.name == "EVAL" && s.arguments == 4) {
                // lua/ttl_ceiling_read.lua: EVAL script 1 key.
                std::vector<redisReply> items(ceiling_.size());
                std::vector<redisReply*> pointers;
                for (std::size_t i = 0; i < ceiling_.size(); ++i) {
                    items[i].type = REDIS_REPLY_STRING;
                    items[i].str = ceiling_[i].data();
                    items[i].len = ceiling_[i].size();
                    pointers.push_back(&items[i]);
                }
                reply.type = REDIS_REPLY_ARRAY;
                reply.elements = pointers.size();
                reply.element = pointers.data();
                s.target->on_reply(s.tag, redlock::detail::node_reply{{}, &reply, {}});
                continue;
            }
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
    std::string not_primary_;
    std::string quarantine_cause_;
    double clock_drift_ = 0;
    std::chrono::milliseconds patience_{0};
    bool refuses_ = false;
    /// Answers every script with NOSCRIPT, EVAL included (a broken or hostile node).
    bool always_noscript_ = false;
    std::size_t sent_count_ = 0;
    /// When set, how the node answers a read of its TTL ceiling: its time in milliseconds,
    /// then ttl, until pairs.
    std::vector<std::string> ceiling_;

private:
    std::function<void()> server_read_;
    struct sent {
        std::string name;
        std::shared_ptr<redlock::detail::reply_target> target;
        std::uint64_t tag;
        std::size_t arguments = 0;
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
            return std::make_unique<manual_time>(now_, ticking_, alarms_);
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
    /// Runs what is ready on the client's strand (a watchdog's start), answering nothing.
    void run_ready() {
        io_.poll();
        io_.restart();
    }

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
    /// Every node refuses every SET from now on (the key is held elsewhere).
    void refuse_everywhere() {
        for (auto* link : links_) {
            link->refuses_ = true;
        }
    }
    /// `node` restarts now, its link reads INFO (which sends the ceiling reads), and every
    /// read is answered.
    void restart_read_and_answered(std::size_t node) {
        restart(node);
        link(node).read_server();
        settle();
    }
    /// Node 0 restarts and its INFO is read (the ceiling reads go out); node 1 answers, node
    /// 2's read stays on its way; then 1.5 s pass, past a 1 s maximum.
    void restart_with_node_two_read_on_its_way() {
        restart(0);
        link(0).read_server();
        link(1).answer_all();
        now_ += 1500ms;
    }
    /// Runs and answers whatever the client sends until it sends nothing more.
    void settle() { answer(); }
    /// Nodes 1 and 2 up for an hour, answering a read of their TTL ceiling with `ceiling` (the
    /// node's time in ms, then ttl, until pairs); node 0 known by its run_id, ready to restart.
    void readers_answer(const std::vector<std::string>& ceiling) {
        for (std::size_t node : {1, 2}) {
            auto& reader = link(node);
            reader.run_id_ = "server-" + std::to_string(node);
            reader.started_at_ = now_ - std::chrono::hours(1);
            reader.ceiling_ = ceiling;
        }
        link(0).run_id_ = "server-0";
    }
    std::optional<std::chrono::milliseconds> quarantine_left(std::size_t node) {
        return impl_->quarantine_left(node, now_);
    }
    std::string impl_quarantine_basis(std::size_t node) const {
        return impl_->quarantine_basis(node);
    }

    /// Runs the function of every armed timer that is due now (each once).
    void fire_due_timers() {
        redlock::test::fire_due(alarms_, now_);
        run_ready();
    }

    clock::time_point now_{clock::duration(std::chrono::hours(1))};
    bool ticking_ = false;
    std::vector<manual_time::idle_alarm*> alarms_;

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
    c.settle(); // the other nodes answer the ceiling reads it sent
    c.now_ += 60601ms;
    EXPECT_EQ(c.quarantine_left(0), 1ms);
    c.now_ += 1ms;
    EXPECT_EQ(c.quarantine_left(0), 1ms) << "past the maximum, the ceilings are read once more";
    c.settle();
    EXPECT_FALSE(c.quarantine_left(0));
}

TEST(quarantine, lasts_the_fleet_maximum_for_a_client_that_took_no_lock) {
    // status, release, a watchdog on a lock acquired elsewhere: all weigh the same restart.
    scripted_client c(with_fleet_max(5s));
    c.restart(1);
    EXPECT_EQ(c.quarantine_left(1), 5052ms);
    EXPECT_FALSE(c.quarantine_left(0)) << "never restarted";
}

// Issue 22: the defaults (no learning) still read the other nodes' ceilings when a link
// finds a restart, with no operation running, and a ceiling above this client's maximum (a
// client with a larger one, or a maximum lowered less than the old one ago) holds the node
// out for that long, although nothing asks about the node until the maximum has passed.
TEST(quarantine, a_ceiling_above_the_maximum_read_at_the_restart_outlasts_the_maximum) {
    scripted_client c(with_fleet_max(1s));
    ASSERT_FALSE(redlock::client_config{}.quarantine.learn_from_ttl_ceilings);
    // The node's clock says 1,000,000 ms; a 4 s ttl's entry lasts until 1,008,000.
    c.readers_answer({"1000000", "40", "1001000", "4000", "1008000"});
    c.restart(0);
    c.link(0).read_server(); // INFO read on reconnecting: nothing else is sent or asked
    c.settle();
    c.now_ += 1500ms; // past the 1 s maximum (and drift), first looked at now
    const auto left = c.quarantine_left(0);
    ASSERT_TRUE(left) << "a 4 s lock may stand: the 1 s maximum is not enough";
    EXPECT_EQ(*left, 4000ms + 42ms - 1500ms) << "the ceiling, with drift, from the restart";
    c.settle(); // the reads sent again past the maximum
    c.now_ += *left;
    EXPECT_FALSE(c.quarantine_left(0));
}

// A 1M-schedule soak (seed 800413021): an acquire of a client with a larger maximum was in
// flight when the node restarted; its vote from the node came before the restart, and its
// raise reached a reader just after that reader answered the read. The read sent once this
// client's maximum has passed sees it.
TEST(quarantine, a_raise_that_lands_after_the_first_read_is_seen_by_the_read_past_the_maximum) {
    scripted_client c(with_fleet_max(1s));
    c.readers_answer({"1000000", "40", "1001000"});
    c.restart_read_and_answered(0);
    // The in-flight acquire's 4 s raise lands on node 1 now.
    c.link(1).ceiling_ = {"1000010", "40", "1001000", "4000", "1008010"};
    c.now_ += 1500ms;
    EXPECT_EQ(c.quarantine_left(0), 1ms) << "read once more, and wait for the answers";
    EXPECT_NE(c.impl_quarantine_basis(0).find("TTL ceilings read since the restart"),
              std::string::npos)
        << c.impl_quarantine_basis(0);
    c.settle();
    EXPECT_EQ(c.quarantine_left(0), 4000ms + 42ms - 1500ms) << "the raise seen past the maximum";
}

// Without the read (a ceiling within the maximum), the defaults keep the maximum, not less.
TEST(quarantine, a_ceiling_within_the_maximum_changes_nothing_by_default) {
    scripted_client c(with_fleet_max(5s));
    c.readers_answer({"1000000", "40", "1001000"});
    c.restart_read_and_answered(0);
    EXPECT_EQ(c.quarantine_left(0), 5052ms) << "learning is off: the fleet maximum";
}

// Review 8: readers that answered a ceiling above the maximum and then became ineligible (an
// eviction policy set, INFO refused, a restart) did not unsay it: a lock that long was taken.
TEST(quarantine, a_ceiling_above_the_maximum_counts_though_its_readers_become_ineligible) {
    scripted_client c(with_fleet_max(2s));
    c.readers_answer({"1000000", "4000", "1008000"});
    const auto restart = c.now_;
    c.restart_read_and_answered(0);
    for (std::size_t node : {1, 2}) {
        c.link(node).eviction_risk_ = "can evict keys: maxmemory-policy allkeys-lru";
    }
    c.now_ = restart + 2500ms;
    EXPECT_TRUE(c.quarantine_left(0)) << "the 4 s entries were read; nothing says otherwise";
}

// Review 8: one reader's absurd entry (13 digits, centuries) overflowed the quarantine's end,
// which then ended at once: it is odd now (above max_ttl), and the restart costs the maximum.
TEST(quarantine, an_absurd_ceiling_neither_ends_the_quarantine_nor_makes_it_endless) {
    scripted_client c(with_fleet_max(5s));
    c.readers_answer({"1000000", "40", "1001000"});
    c.link(1).ceiling_ = {"1000000", "9999999999999", "999999999999999"};
    c.restart_read_and_answered(0);
    EXPECT_EQ(c.quarantine_left(0), 5052ms) << "the fleet maximum, from the restart";
}

// Review 8's simulation (seed 538346512082): the one reader holding the old lock's 300 ms
// entry answered 230 ms late, stalled behind other commands, after the lowered maximum, and
// the restarted node counted meanwhile. Past the maximum it waits for the reads on their way.
TEST(quarantine, past_the_maximum_waits_for_the_ceiling_reads_on_their_way) {
    scripted_client c(with_fleet_max(1s));
    c.readers_answer({"1000000", "40", "1001000"});
    c.restart_with_node_two_read_on_its_way();
    const auto left = c.quarantine_left(0);
    ASSERT_TRUE(left) << "node 2 may yet tell of a longer lock";
    EXPECT_NE(c.impl_quarantine_basis(0).find("TTL ceilings read since the restart"),
              std::string::npos)
        << c.impl_quarantine_basis(0);
    c.link(1).answer_all(); // the reads sent again past the maximum, behind node 2's first
    c.link(2).answer_all();
    EXPECT_FALSE(c.quarantine_left(0)) << "every reader answered";
}

// Review of the second read: a first read still on its way when the second is sent keeps
// counting. Its reader's second read may fail at once (a backlogged connection) while the
// first, queued before it, would still tell of a longer lock.
TEST(quarantine, a_first_read_still_on_its_way_counts_though_the_second_fails) {
    scripted_client c(with_fleet_max(1s));
    c.readers_answer({"1000000", "40", "1001000"});
    c.link(2).ceiling_ = {"1000000", "4000", "1008000"};
    c.restart_with_node_two_read_on_its_way();
    EXPECT_EQ(c.quarantine_left(0), 1ms);
    c.link(1).answer_all();
    c.link(2).fail_newest();
    EXPECT_EQ(c.quarantine_left(0), 1ms) << "node 2's first read is still on its way";
    c.link(2).answer_all();
    EXPECT_EQ(c.quarantine_left(0), 4000ms + 42ms - 1500ms) << "and it told of a 4 s lock";
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

TEST(watchdog, keeps_the_lock_it_renews_without_copying_it) {
    // What the holder's lock already holds (keys, token, options) the watchdog shares.
    scripted_client c(with_fleet_max(10s));
    redlock::lock_options options;
    options.ttl = 10s;
    const auto held = c.acquire(options);
    redlock::watchdog dog(c.api(), held);
    const auto current = dog.current();
    EXPECT_EQ(&current.token(), &held.token());
    EXPECT_EQ(&current.keys(), &held.keys());
    EXPECT_EQ(&current.options(), &held.options());
    EXPECT_EQ(current.valid_until(), held.valid_until());
}

TEST(watchdog, costs_under_half_a_kibibyte_of_heap) {
    // docs/performance.md, "Memory": 100,000 held locks with their watchdogs. Measured here
    // on the allocator's own count, the watchdog's part alone (its state, its runner, its
    // entry in the client's renewal timer and in the client's live operations); the
    // acquires are done, the runners started.
    scripted_client c(with_fleet_max(10s));
    redlock::lock_options options;
    options.ttl = 10s;
    constexpr std::size_t count = 2000;
    std::vector<redlock::lock> held;
    for (std::size_t i = 0; i < count; ++i) {
        held.push_back(c.acquire(options));
    }
    std::vector<std::optional<redlock::watchdog>> dogs(count);
    const auto heap = [] {
        const auto info = ::mallinfo2();
        return static_cast<double>(info.uordblks + info.hblkhd);
    };
    const auto before = heap();
    for (std::size_t i = 0; i < count; ++i) {
        dogs[i].emplace(c.api(), held[i]);
    }
    c.run_ready();
    const auto per_watchdog = (heap() - before) / count;
    EXPECT_LE(per_watchdog, 512.0);
    EXPECT_FALSE(dogs.front()->lost());
    RecordProperty("heap_bytes_per_watchdog", std::to_string(per_watchdog));
}

TEST(extend, with_the_lock_ttl_shares_the_lock_and_with_another_does_not) {
    scripted_client c(with_fleet_max(10s));
    redlock::lock_options options;
    options.ttl = 10s;
    const auto held = c.acquire(options);
    c.now_ += 1s;
    const auto renewed = c.extend(held, 10s);
    EXPECT_EQ(&renewed.token(), &held.token());
    EXPECT_EQ(renewed.valid_until(), held.valid_until() + 1s);
    const auto shorter = c.extend(held, 5s);
    EXPECT_EQ(shorter.options().ttl, 5s);
    EXPECT_EQ(shorter.token(), held.token());
    EXPECT_EQ(shorter.keys(), held.keys());
    EXPECT_EQ(held.options().ttl, 10s) << "the lock extended stays as it was";
}

TEST(client_shutdown, ends_an_acquire_sleeping_between_attempts) {
    // Then only the op's own timer owns it, and shutdown reaches it through a plain pointer.
    std::optional<std::error_code> outcome;
    {
        scripted_client c;
        c.refuse_everywhere();
        redlock::lock_options options;
        options.retry.max_attempts = 3;
        c.start_acquire(
            options, [&](boost::system::error_code ec, redlock::acquire_result) { outcome = ec; });
        EXPECT_FALSE(outcome) << "refused everywhere, it sleeps before its second attempt";
    } // the client goes, and shuts down
    EXPECT_EQ(outcome, std::optional<std::error_code>(redlock::errc::cancelled));
}

// Several acquires of one key queued in the client, the later ones having heard a release
// that only the oldest may use: closing the client cancels them one by one, each leaving
// sets off the next (moved up, it wakes on that release and finds the client closed), and
// none may be used once it is gone (a use-after-free a simulation soak found with lanes,
// seed 40578844; run under AddressSanitizer or valgrind to see it).
TEST(client_shutdown, ends_every_waiter_of_a_key_queued_behind_another) {
    std::vector<std::optional<std::error_code>> outcomes(8);
    {
        scripted_client c;
        const auto held = c.acquire(redlock::lock_options{});
        c.refuse_everywhere();
        redlock::lock_options waiting;
        waiting.retry.max_attempts = 100;
        waiting.retry.backoff_initial = 10s;
        waiting.retry.backoff_max = 10s;
        for (std::size_t i = 0; i < outcomes.size(); ++i) {
            c.start_acquire(waiting, [&outcomes, i](boost::system::error_code ec,
                                                    redlock::acquire_result) { outcomes[i] = ec; });
        }
        c.release(held, 1); // the oldest retries (refused again); the others heard it
        for (const auto& outcome : outcomes) {
            EXPECT_FALSE(outcome) << "all still wait: " << outcome->message();
        }
    } // the client goes, and shuts down
    for (const auto& outcome : outcomes) {
        EXPECT_EQ(outcome, std::optional<std::error_code>(redlock::errc::cancelled));
    }
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

// Two addresses of one server: the second one's link saw the server's clock step, the
// first one's did not (its clock mark refused, say). The server's vote, counted through the
// first address, is quarantined all the same: a soak's double grant (seed 40546350) counted
// it, beside a holder whose key the step had expired there.
TEST(duplicate_node, what_another_address_of_the_server_saw_quarantines_its_vote) {
    scripted_client c;
    c.link(0).run_id_ = "aaaa";
    c.link(1).run_id_ = "aaaa";
    c.link(1).started_at_ = c.now_;
    c.link(1).quarantine_cause_ = "clock stepped by +420 ms";
    c.link(2).run_id_ = "bbbb";
    auto [ec, result] = c.try_acquire(one_attempt());
    EXPECT_TRUE(ec) << "only node 2 counts";
    EXPECT_EQ(result.votes[0].error, redlock::errc::node_quarantined);
    EXPECT_EQ(result.votes[0].server_message,
              "same server as 10.0.0.2:6379, there: clock stepped by +420 ms 0.0 s ago, votes "
              "count again in 60.6 s (fleet maximum)");
    EXPECT_EQ(result.votes[1].error, redlock::errc::duplicate_node);
    EXPECT_EQ(result.votes[2].outcome, redlock::node_outcome::granted);
}

// What another address read of the server's state may be stale (that link is down, or its
// user may not read INFO): only the quarantine it saw is held against the server's vote.
TEST(duplicate_node, a_stale_eviction_risk_of_another_address_does_not_veto) {
    scripted_client c;
    c.link(0).run_id_ = "aaaa";
    c.link(1).run_id_ = "aaaa";
    c.link(1).eviction_risk_ = "can evict keys: maxmemory-policy allkeys-lru";
    c.link(2).run_id_ = "bbbb";
    auto [ec, result] = c.try_acquire(one_attempt());
    EXPECT_FALSE(ec) << result.message;
    EXPECT_EQ(result.votes[0].outcome, redlock::node_outcome::granted);
    c.link(1).eviction_risk_.clear();
    c.link(1).undetectable_ = "INFO refused: restarts and evictions cannot be detected (NOPERM)";
    auto [again, second] = c.try_acquire(one_attempt());
    EXPECT_FALSE(again) << second.message;
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
              "clock stepped by +1500 ms 0.0 s ago, votes count again in 60.6 s "
              "(fleet maximum)");
    c.link(1).quarantine_cause_.clear();
    c.link(1).restart_seen_at_ = c.now_;
    auto [again, restarted] = c.try_acquire(one_attempt());
    EXPECT_EQ(restarted.votes[1].server_message,
              "node restarted 0.0 s ago, votes count again in 60.6 s (fleet maximum)");
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

// Once a reply and the round's deadline are both due, an event loop that stalled may run the
// reply first: the deadline still decides, and the votes say the node timed out.
TEST(late_reply, handled_after_the_deadline_it_is_reported_as_a_timeout) {
    scripted_client c;
    redlock::lock_options options;
    options.node_timeout = 50ms;
    options.retry.max_attempts = 1;
    std::optional<std::pair<boost::system::error_code, redlock::acquire_result>> outcome;
    c.api().async_acquire("k", options,
                          [&](boost::system::error_code ec, redlock::acquire_result r) {
                              outcome.emplace(ec, std::move(r));
                          });
    c.run_ready();
    c.link(0).answer_all();
    c.run_ready();
    c.now_ += 50ms; // the timer is due, but the stalled loop hands node 1's OK over first
    c.link(1).answer_all();
    c.settle();
    ASSERT_TRUE(outcome);
    EXPECT_EQ(outcome->first, redlock::errc::quorum_unreachable) << outcome->second.message;
    const auto& votes = outcome->second.votes;
    ASSERT_EQ(votes.size(), 3u);
    EXPECT_EQ(votes[0].outcome, redlock::node_outcome::granted);
    EXPECT_EQ(votes[1].error, redlock::errc::node_timeout) << "its OK came after the deadline";
    EXPECT_EQ(votes[2].error, redlock::errc::node_timeout);
}

// Found by review: the deadline check and the vote read the clock apart, so a reply handled
// across the deadline was recorded as granted while the fsm refused it.
TEST(late_reply, one_reading_of_the_clock_decides_both_the_vote_and_the_report) {
    for (int k = 1; k <= 40; ++k) {
        scripted_client c;
        redlock::lock_options options;
        options.node_timeout = 50ms;
        options.retry.max_attempts = 1;
        std::optional<std::pair<boost::system::error_code, redlock::acquire_result>> outcome;
        const auto start = c.now_;
        c.api().async_acquire("k", options,
                              [&](boost::system::error_code ec, redlock::acquire_result r) {
                                  outcome.emplace(ec, std::move(r));
                              });
        c.run_ready();
        c.link(0).answer_all();
        c.run_ready();
        c.now_ = start + 50ms - std::chrono::nanoseconds(k);
        c.ticking_ = true;
        c.link(1).answer_all();
        c.ticking_ = false;
        c.settle();
        ASSERT_TRUE(outcome);
        const auto& votes = outcome->second.votes;
        if (outcome->first) {
            EXPECT_EQ(votes[1].error, redlock::errc::node_timeout) << k;
            EXPECT_EQ(votes[2].error, redlock::errc::node_timeout) << k;
        } else {
            EXPECT_EQ(votes[1].outcome, redlock::node_outcome::granted) << k;
        }
    }
}

TEST(late_reply, a_release_whose_deletes_succeeded_after_a_stall_is_a_release) {
    scripted_client c;
    redlock::lock_options options;
    options.node_timeout = 50ms;
    const auto held = c.acquire(options);
    std::optional<std::pair<boost::system::error_code, redlock::release_result>> outcome;
    c.api().async_release(held, [&](boost::system::error_code ec, redlock::release_result r) {
        outcome.emplace(ec, std::move(r));
    });
    c.run_ready();
    c.now_ += 50ms; // the deletes' OKs wait while the loop stalls past the deadline
    c.settle();
    ASSERT_TRUE(outcome);
    EXPECT_FALSE(outcome->first) << outcome->second.message;
    EXPECT_GE(outcome->second.released, 2u) << "late deletes still freed the key";
}

TEST(late_reply, an_extend_handled_after_the_deadline_is_not_adopted) {
    scripted_client c;
    redlock::lock_options options;
    options.node_timeout = 50ms;
    const auto held = c.acquire(options);
    std::optional<std::pair<boost::system::error_code, redlock::extend_result>> outcome;
    c.api().async_extend(held, 30s, [&](boost::system::error_code ec, redlock::extend_result r) {
        outcome.emplace(ec, std::move(r));
    });
    c.run_ready();
    c.link(0).answer_all();
    c.run_ready();
    c.now_ += 50ms;
    c.link(1).answer_all();
    c.link(2).answer_all();
    c.settle();
    ASSERT_TRUE(outcome);
    EXPECT_EQ(outcome->first, redlock::errc::quorum_unreachable) << outcome->second.message;
    EXPECT_EQ(outcome->second.votes[1].error, redlock::errc::node_timeout);
    EXPECT_EQ(outcome->second.votes[2].error, redlock::errc::node_timeout);
}

// A fresh client's first attempt waits for the connections on their way, so that its votes
// do not pay for the connect and handshake inside their node_timeout.
TEST(link_gate, the_first_attempt_waits_for_a_quorum_of_ready_links) {
    using redlock::detail::link_readiness;
    scripted_client c;
    for (std::size_t node = 0; node < 3; ++node) {
        c.link(node).readiness_ = link_readiness::connecting;
    }
    std::optional<boost::system::error_code> outcome;
    c.api().async_acquire(
        "k", redlock::lock_options{},
        [&](boost::system::error_code ec, redlock::acquire_result) { outcome = ec; });
    c.run_ready();
    EXPECT_FALSE(c.link(0).has_sent()) << "nothing goes out while no quorum is ready";
    EXPECT_EQ(c.link(2).warm_ups_, 1) << "every link is asked to connect";
    c.link(0).become(link_readiness::ready);
    c.run_ready();
    EXPECT_FALSE(c.link(0).has_sent()) << "one ready of three is no quorum";
    c.link(1).become(link_readiness::ready);
    c.run_ready();
    EXPECT_TRUE(c.link(0).has_sent());
    EXPECT_TRUE(c.link(2).has_sent()) << "the SET goes to the link still connecting too";
    c.settle();
    ASSERT_TRUE(outcome);
    EXPECT_FALSE(*outcome);
}

TEST(link_gate, does_not_wait_when_no_quorum_can_come_of_the_connections_on_their_way) {
    using redlock::detail::link_readiness;
    scripted_client c;
    c.link(0).readiness_ = link_readiness::unavailable; // backing off after a failed connect
    c.link(1).readiness_ = link_readiness::unavailable;
    c.link(2).readiness_ = link_readiness::connecting;
    redlock::lock_options options;
    options.retry.max_attempts = 1;
    std::optional<boost::system::error_code> outcome;
    c.api().async_acquire(
        "k", options, [&](boost::system::error_code ec, redlock::acquire_result) { outcome = ec; });
    c.run_ready();
    EXPECT_TRUE(c.link(2).has_sent()) << "waiting could not bring a quorum: the attempt goes";
    c.settle();
    ASSERT_TRUE(outcome) << "completed before `outcome` goes out of scope";
}

TEST(link_gate, a_cancelled_wait_ends_at_once_and_sends_nothing) {
    using redlock::detail::link_readiness;
    scripted_client c;
    for (std::size_t node = 0; node < 3; ++node) {
        c.link(node).readiness_ = link_readiness::connecting;
    }
    boost::asio::cancellation_signal cancel;
    std::optional<boost::system::error_code> outcome;
    c.api().async_acquire("k", redlock::lock_options{},
                          boost::asio::bind_cancellation_slot(
                              cancel.slot(), [&](boost::system::error_code ec,
                                                 redlock::acquire_result) { outcome = ec; }));
    c.run_ready();
    cancel.emit(boost::asio::cancellation_type::terminal);
    c.run_ready();
    ASSERT_TRUE(outcome);
    EXPECT_EQ(*outcome, redlock::errc::cancelled);
    c.link(0).become(link_readiness::ready);
    c.link(1).become(link_readiness::ready);
    c.run_ready();
    EXPECT_FALSE(c.link(0).has_sent()) << "a cancelled acquire sends nothing once links are ready";
}

// Found by review: the wait budget ran from the first attempt, after the wait for links, so
// an acquire could start attempts past the budget its caller gave it.
TEST(link_gate, the_wait_budget_runs_from_the_call) {
    using redlock::detail::link_readiness;
    scripted_client c;
    for (std::size_t node = 0; node < 3; ++node) {
        c.link(node).readiness_ = link_readiness::connecting;
        c.link(node).refuses_ = true;
    }
    redlock::lock_options options;
    options.retry.max_attempts = 0;
    options.retry.wait_budget = 100ms;
    options.retry.backoff_initial = 1ms;
    options.retry.backoff_max = 2ms;
    std::optional<std::pair<boost::system::error_code, unsigned>> outcome;
    // Two keys: a script, whose refusal is contention (a plain SET's would ask PTTL).
    c.api().async_acquire(std::vector<std::string>{"a", "b"}, options,
                          [&](boost::system::error_code ec, redlock::acquire_result r) {
                              outcome.emplace(ec, r.attempts);
                          });
    c.run_ready();
    c.now_ += 400ms; // the handshakes took longer than the whole budget
    c.link(0).become(link_readiness::ready);
    c.link(1).become(link_readiness::ready);
    c.settle();
    ASSERT_TRUE(outcome) << "no retry once the budget, counted from the call, is spent";
    EXPECT_TRUE(outcome->first) << "refused";
    EXPECT_EQ(outcome->second, 1u) << "one attempt, when the links allowed it";
}

TEST(link_gate, a_cancelled_wait_reports_each_nodes_vote_under_its_node) {
    using redlock::detail::link_readiness;
    scripted_client c;
    for (std::size_t node = 0; node < 3; ++node) {
        c.link(node).readiness_ = link_readiness::connecting;
    }
    boost::asio::cancellation_signal cancel;
    std::optional<redlock::acquire_result> result;
    c.api().async_acquire(
        "k", redlock::lock_options{},
        boost::asio::bind_cancellation_slot(
            cancel.slot(),
            [&](boost::system::error_code, redlock::acquire_result r) { result = std::move(r); }));
    c.run_ready();
    cancel.emit(boost::asio::cancellation_type::terminal);
    c.run_ready();
    ASSERT_TRUE(result);
    ASSERT_EQ(result->votes.size(), 3u);
    for (std::size_t node = 0; node < 3; ++node) {
        EXPECT_EQ(result->votes[node].node, node);
    }
    EXPECT_NE(result->message.find("10.0.0.3"), std::string::npos) << result->message;
}

// After an outage the links were backing off when an attempt failed; the retry waits for
// those connecting again rather than count their handshake in its node_timeout.
TEST(link_gate, a_retry_waits_for_links_connecting_again) {
    using redlock::detail::link_readiness;
    scripted_client c;
    c.refuse_everywhere();
    redlock::lock_options options;
    options.retry.max_attempts = 2;
    options.retry.backoff_initial = 5ms;
    options.retry.backoff_max = 10ms;
    std::optional<boost::system::error_code> outcome;
    // Two keys: a script, whose refusal is contention (a plain SET's would ask PTTL).
    c.api().async_acquire(
        std::vector<std::string>{"a", "b"}, options,
        [&](boost::system::error_code ec, redlock::acquire_result) { outcome = ec; });
    c.settle();
    ASSERT_FALSE(outcome) << "refused once, it sleeps before its retry";
    for (std::size_t node = 0; node < 3; ++node) {
        c.link(node).refuses_ = false;
        c.link(node).readiness_ = link_readiness::connecting;
    }
    c.now_ += 20ms;
    c.fire_due_timers();
    EXPECT_FALSE(c.link(0).has_sent()) << "the retry waits for its links";
    c.link(0).become(link_readiness::ready);
    c.link(1).become(link_readiness::ready);
    c.settle();
    ASSERT_TRUE(outcome);
    EXPECT_FALSE(*outcome);
}

TEST(link_gate, a_wait_that_outlasts_connect_timeout_lets_the_attempt_go) {
    using redlock::detail::link_readiness;
    scripted_client c;
    for (std::size_t node = 0; node < 3; ++node) {
        c.link(node).readiness_ = link_readiness::connecting;
    }
    std::optional<boost::system::error_code> outcome;
    c.api().async_acquire(
        "k", redlock::lock_options{},
        [&](boost::system::error_code ec, redlock::acquire_result) { outcome = ec; });
    c.run_ready();
    c.now_ += 499ms;
    c.fire_due_timers();
    EXPECT_FALSE(c.link(0).has_sent());
    c.now_ += 1ms; // connect_timeout, 500 ms
    c.fire_due_timers();
    EXPECT_TRUE(c.link(0).has_sent()) << "the attempt goes with the connections there are";
    c.settle();
    ASSERT_TRUE(outcome);
    EXPECT_FALSE(*outcome);
}
