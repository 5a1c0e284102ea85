// sentinel_watch: one subscription to +switch-master per Sentinel of a node, with the
// Sentinels' own credentials; a new primary is reported as a Sentinel names it, at most once
// per pace; anything else is ignored; refused subscriptions are said once and retried after a
// growing delay, failed ones at the pace, lost ones at once; nothing after shutdown. Driven through
// fake subscription links and a manual clock.
#include "support/manual_time.hpp"
#include "support/parsed_address.hpp"
#include "transport/sentinel_watch.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace redlock::detail {
namespace {

using namespace std::chrono_literals;

/// What the watch asked of one Sentinel's link.
struct link_record {
    node_address address;
    std::size_t index = 0;
    subscription_events* events = nullptr;
    std::vector<std::pair<std::string, std::uint64_t>> subscribed;
    bool shut_down = false;
};

class recording_link final : public subscription_link {
public:
    explicit recording_link(link_record& record)
        : record_(record) {}
    void subscribe(const std::string& channel, std::uint64_t generation) override {
        record_.subscribed.emplace_back(channel, generation);
    }
    void unsubscribe(const std::string&) override {}
    void shutdown() override { record_.shut_down = true; }

private:
    link_record& record_;
};

class sentinel_watch_test : public ::testing::Test {
protected:
    sentinel_watch_test()
        : records_(3) {
        const auto node = test::parsed_address(
            "redis-sentinel://:data-secret@10.0.0.1:26379,10.0.0.2:26379,[fe80::3]:26380"
            "?sentinel_user=watcher&sentinel_password=sentinel-secret#group1");
        watch_ = std::make_unique<sentinel_watch>(
            node, std::vector<std::string>{"data-secret", "sentinel-secret"},
            [this](node_address at, std::size_t index, subscription_events& events) {
                auto& r = records_.at(index);
                r.address = std::move(at);
                r.index = index;
                r.events = &events;
                return std::make_unique<recording_link>(r);
            },
            std::make_unique<test::manual_time>(now_, ticking_, alarms_), 2s,
            [this](const std::string& host, std::uint16_t port, const std::string& by) {
                moved_.emplace_back(host, port, by);
            },
            [this](const std::string& message) { warnings_.push_back(message); });
    }

    void message(std::size_t sentinel, const std::string& payload,
                 const std::string& channel = "+switch-master") {
        records_[sentinel].events->on_message(sentinel, channel, payload);
    }

    clock::time_point now_{clock::duration(1h)};
    bool ticking_ = false;
    std::vector<test::manual_time::idle_alarm*> alarms_;
    std::vector<link_record> records_;
    std::vector<std::tuple<std::string, std::uint16_t, std::string>> moved_;
    std::vector<std::string> warnings_;
    std::unique_ptr<sentinel_watch> watch_;

    /// The clock moves on by `by`, and the alarms due by then fire.
    void pass(clock::duration by) {
        now_ += by;
        test::fire_due(alarms_, now_);
    }
    /// Started, and its subscriptions made (a second later).
    void started() {
        watch_->start();
        pass(sentinel_watch::start_delay);
    }
};

TEST_F(sentinel_watch_test, subscribes_on_every_sentinel_with_the_sentinels_credentials) {
    for (const auto& r : records_) {
        EXPECT_TRUE(r.subscribed.empty()) << "nothing before the link is used";
    }
    watch_->start();
    watch_->start();
    pass(999ms);
    for (const auto& r : records_) {
        EXPECT_TRUE(r.subscribed.empty()) << "a second after the first use";
    }
    pass(1ms);
    for (const auto& r : records_) {
        ASSERT_EQ(r.subscribed.size(), 1U) << "once, however often started";
        EXPECT_EQ(r.subscribed[0].first, "+switch-master");
        EXPECT_EQ(r.address.user, "watcher");
        EXPECT_EQ(r.address.password, "sentinel-secret");
        EXPECT_EQ(r.address.kind, node_address::transport::tcp);
        EXPECT_TRUE(r.address.master_name.empty());
    }
    EXPECT_EQ(records_[2].address.host, "fe80::3");
    EXPECT_EQ(records_[2].address.port, 26380);
}

TEST_F(sentinel_watch_test, reports_a_switch_of_its_own_group_as_one_sentinel_says_it) {
    started();
    message(1, "group1 10.0.0.5 6379 10.0.0.6 6380");
    ASSERT_EQ(moved_.size(), 1U);
    EXPECT_EQ(moved_[0], std::make_tuple(std::string("10.0.0.6"), std::uint16_t{6380},
                                         std::string("10.0.0.2:26379")));
    now_ += 2s;
    message(2, "group1 10.0.0.6 6380 fe80::7 6381");
    ASSERT_EQ(moved_.size(), 2U);
    EXPECT_EQ(std::get<0>(moved_[1]), "fe80::7");
    EXPECT_EQ(std::get<2>(moved_[1]), "[fe80::3]:26380");
}

TEST_F(sentinel_watch_test, a_flood_of_announcements_is_handed_on_once_per_pace) {
    started();
    for (int i = 0; i < 1000; ++i) {
        message(0, "group1 10.0.0.5 6379 10.6.6." + std::to_string(i % 250) + " 6380");
    }
    ASSERT_EQ(moved_.size(), 1U) << "the first at once, the rest wait for their turn";
    // One Sentinel's flood cannot hide another's word: each keeps its latest, in rotation.
    message(1, "group1 10.0.0.5 6379 10.0.0.6 6380");
    message(0, "group1 10.0.0.5 6379 10.6.6.6 6380");
    pass(1999ms);
    EXPECT_EQ(moved_.size(), 1U);
    pass(1ms);
    ASSERT_EQ(moved_.size(), 2U);
    EXPECT_EQ(std::get<0>(moved_[1]), "10.0.0.6") << "the next Sentinel's turn";
    pass(2s);
    ASSERT_EQ(moved_.size(), 3U);
    EXPECT_EQ(std::get<0>(moved_[2]), "10.6.6.6") << "the first one's latest word";
    pass(1h);
    EXPECT_EQ(moved_.size(), 3U);
}

TEST_F(sentinel_watch_test, ignores_other_groups_and_payloads_of_another_shape) {
    started();

    moved_.clear();
    for (const char* payload : {
             "group2 10.0.0.5 6379 10.0.0.6 6380",       // another group
             "group10 10.0.0.5 6379 10.0.0.6 6380",      // a name that only starts alike
             "group1 10.0.0.5 6379 10.0.0.6",            // four fields
             "group1 10.0.0.5 6379 10.0.0.6 6380 extra", // six
             "group1 10.0.0.5 6379 10.0.0.6 0",          // no port
             "group1 10.0.0.5 6379 10.0.0.6 70000",      // beyond a port
             "group1 10.0.0.5 6379 10.0.0.6 63a",        // not a number
             "group1 10.0.0.5 6379 10.0.0.6 -1",
             "group1 10.0.0.5 6379 10.0.0.6  6380",               // two spaces
             "group1 10.0.0.5 6379 ev\nil 6380",                  // a control character
             "group1 10.0.0.5 6379 sentinel-secret.example 6380", // a password sent back
             "group1 10.0.0.5 6379 data-secret 6380",
             "",
         }) {
        message(0, payload);
        message(1, payload);
    }
    message(0, "group1 10.0.0.5 6379 10.0.0.6 6380", "+sdown");
    message(1, "group1 10.0.0.5 6379 10.0.0.6 6380", "+sdown");
    EXPECT_TRUE(moved_.empty());
}

TEST_F(sentinel_watch_test, a_refused_subscription_is_said_once_and_tried_again_less_often) {
    started();
    auto& r = records_[0];
    const auto first = r.subscribed.back().second;
    r.events->on_subscribe_refused(0, first + 1000, "NOPERM"); // not this one's
    EXPECT_TRUE(warnings_.empty());
    r.events->on_subscribe_refused(
        0, first, "NOPERM this user has no permissions to access one of the channels");
    ASSERT_EQ(warnings_.size(), 1U);
    EXPECT_NE(warnings_[0].find("the Sentinel at 10.0.0.1:26379 refused SUBSCRIBE +switch-master "
                                "(NOPERM this user has no permissions"),
              std::string::npos)
        << warnings_[0];
    EXPECT_NE(warnings_[0].find("+subscribe &+switch-master"), std::string::npos);
    r.events->on_subscriptions_lost(0); // a retry is armed: nothing more at once
    EXPECT_EQ(r.subscribed.size(), 1U);
    pass(1999ms);
    EXPECT_EQ(r.subscribed.size(), 1U);
    pass(1ms);
    ASSERT_EQ(r.subscribed.size(), 2U);
    EXPECT_NE(r.subscribed[1].second, first);
    r.events->on_subscribe_refused(0, first, "NOPERM"); // the old one, late: ignored
    pass(1h);
    EXPECT_EQ(r.subscribed.size(), 2U);

    // Refused again: 4 s this time, still said once; a secret in the reply is cut.
    r.events->on_subscribe_refused(0, r.subscribed.back().second, "ERR sentinel-secret");
    pass(3999ms);
    EXPECT_EQ(r.subscribed.size(), 2U);
    pass(1ms);
    EXPECT_EQ(r.subscribed.size(), 3U);
    EXPECT_EQ(warnings_.size(), 1U);

    // Made at last: the next refusal is said again, after the first delay.
    r.events->on_subscribed(0, "+switch-master", r.subscribed.back().second);
    r.events->on_subscriptions_lost(0);
    ASSERT_EQ(r.subscribed.size(), 4U);
    r.events->on_subscribe_refused(0, r.subscribed.back().second, "ERR sentinel-secret here");
    ASSERT_EQ(warnings_.size(), 2U);
    EXPECT_EQ(warnings_[1].find("sentinel-secret"), std::string::npos) << warnings_[1];
    pass(2s);
    EXPECT_EQ(r.subscribed.size(), 5U);
}

TEST_F(sentinel_watch_test, a_subscription_that_could_not_be_made_is_tried_again_at_its_pace) {
    started();
    auto& r = records_[1];
    for (int i = 0; i < 3; ++i) {
        r.events->on_subscribe_failed(1, r.subscribed.back().second);
        pass(2s);
        EXPECT_EQ(r.subscribed.size(), static_cast<std::size_t>(i + 2)) << "every 2 s, no doubling";
    }
    EXPECT_TRUE(warnings_.empty()) << "the connection says why; no ACL advice";
}

TEST_F(sentinel_watch_test, a_lost_subscription_is_made_again_at_once) {
    started();
    records_[1].events->on_subscriptions_lost(1);
    ASSERT_EQ(records_[1].subscribed.size(), 2U);
    EXPECT_EQ(records_[1].subscribed[1].first, "+switch-master");
    EXPECT_EQ(records_[0].subscribed.size(), 1U);
}

TEST_F(sentinel_watch_test, nothing_is_reported_or_made_again_after_shutdown) {
    started();
    watch_->shutdown();
    for (const auto& r : records_) {
        EXPECT_TRUE(r.shut_down);
    }
    message(0, "group1 10.0.0.5 6379 10.0.0.6 6380");
    records_[0].events->on_subscriptions_lost(0);
    records_[1].events->on_subscribe_failed(1, records_[1].subscribed.back().second);
    pass(1h);
    EXPECT_TRUE(moved_.empty());
    EXPECT_EQ(records_[0].subscribed.size(), 1U);
    EXPECT_EQ(records_[1].subscribed.size(), 1U);
    started();
    EXPECT_EQ(records_[2].subscribed.size(), 1U);
}

} // namespace
} // namespace redlock::detail
