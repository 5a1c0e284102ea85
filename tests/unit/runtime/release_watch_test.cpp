#include "runtime/release_watch.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>

namespace {

using redlock::lock_mode;
using redlock::node_address;
using redlock::detail::release_listener;
using redlock::detail::release_watch;
using redlock::detail::subscription_events;
using redlock::detail::subscription_link;

/// Records the generation of every SUBSCRIBE of a release channel.
struct fake_link final : subscription_link {
    std::map<std::string, std::uint64_t>* sent;
    explicit fake_link(std::map<std::string, std::uint64_t>& s)
        : sent(&s) {}
    void subscribe(const std::string& channel, std::uint64_t generation) override {
        if (generation != 0) {
            (*sent)[channel] = generation;
        }
    }
    void unsubscribe(const std::string&) override {}
    void shutdown() override {}
};

struct listener final : release_listener {
    std::string keys = "k";
    std::size_t position = 0;
    std::size_t subscribed = 0;
    std::size_t released = 0;
    std::size_t released_here = 0;
    std::size_t moved_up = 0;
    const std::string& wanted() const override { return keys; }
    void on_released(std::size_t, std::size_t at) override {
        ++released;
        position = at;
    }
    void on_released_everywhere(std::size_t) override { ++released_here; }
    void on_subscribed(std::size_t, std::size_t) override { ++subscribed; }
    void on_subscription_lost(std::size_t) override {}
    void on_local_grant(lock_mode) override {}
    void on_moved_up(std::size_t at) override {
        ++moved_up;
        position = at;
        if (on_moved) {
            on_moved();
        }
    }
    void on_nudged() override { ++nudged; }
    std::size_t nudged = 0;
    /// What the waiter does when told it moved up (leave, as a finished acquire does).
    std::function<void()> on_moved;
};

TEST(release_watch, a_refused_subscribe_touches_only_its_own_key) {
    std::map<std::string, std::uint64_t> sent;
    subscription_events* events = nullptr;
    release_watch watch({node_address{}}, [&](std::size_t, subscription_events& e) {
        events = &e;
        return std::make_unique<fake_link>(sent);
    });
    listener a;
    listener b;
    watch.watch("a", &a);
    watch.watch("b", &b);
    ASSERT_NE(events, nullptr);
    events->on_subscribe_failed(0, sent.at("redlock:released:a"));
    // Refused: subscribed again by the waiter's next sleep, under a new generation.
    const auto first = sent.at("redlock:released:a");
    watch.watch("a", &a);
    EXPECT_NE(sent.at("redlock:released:a"), first);
    // The other key's SUBSCRIBE is still in flight: its confirmation counts.
    events->on_subscribed(0, "redlock:released:b", sent.at("redlock:released:b"));
    EXPECT_TRUE(watch.confirmed("b", 0));
    EXPECT_EQ(b.subscribed, 1u);
    // A late refusal of the first generation changes nothing for the second.
    events->on_subscribe_failed(0, first);
    events->on_subscribed(0, "redlock:released:a", sent.at("redlock:released:a"));
    EXPECT_TRUE(watch.confirmed("a", 0));
    EXPECT_EQ(a.subscribed, 1u);
}

TEST(release_watch, the_nodes_announcing_a_release_of_this_client_tell_nothing_new) {
    std::map<std::string, std::uint64_t> sent;
    subscription_events* events = nullptr;
    release_watch watch({node_address{}, node_address{}}, [&](std::size_t, subscription_events& e) {
        events = &e;
        return std::make_unique<fake_link>(sent);
    });
    listener waiter;
    watch.watch("k", &waiter);
    ASSERT_NE(events, nullptr);
    watch.released_here("k", "00000000000000a1");
    EXPECT_EQ(waiter.released_here, 1u);
    // Its announcements, heard after a neighbour got the key, would wake the waiter for a
    // refusal.
    events->on_message(0, "redlock:released:k", "00000000000000a1");
    events->on_message(1, "redlock:released:k", "00000000000000a1");
    EXPECT_EQ(waiter.released, 0u);
    // Another client's release, or a cleanup's (no announcement), is news.
    events->on_message(0, "redlock:released:k", "00000000000000b2");
    events->on_message(1, "redlock:released:k", "");
    EXPECT_EQ(waiter.released, 2u);
    // An expiry (keyspace notification) is news whatever its payload.
    events->on_message(0, "__keyspace@0__:k", "expired");
    EXPECT_EQ(waiter.released, 3u);
}

TEST(release_watch, a_waiter_leaving_moves_the_ones_behind_it_up) {
    std::map<std::string, std::uint64_t> sent;
    release_watch watch({node_address{}}, [&](std::size_t, subscription_events&) {
        return std::make_unique<fake_link>(sent);
    });
    listener first;
    listener second;
    listener third;
    watch.watch("k", &first);
    watch.watch("k", &second);
    watch.watch("k", &third);
    // The oldest leaves (woken by a release, then out of attempts): the next one may be
    // the one to use that release now.
    watch.unwatch("k", &first);
    EXPECT_EQ(second.moved_up, 1u);
    EXPECT_EQ(third.moved_up, 1u);
    EXPECT_EQ(watch.position("k", &second), 0u);
    // The youngest leaving moves no one; a waiter not watching is no one's business.
    watch.unwatch("k", &third);
    watch.unwatch("k", &first);
    EXPECT_EQ(second.moved_up, 1u);
}

TEST(release_watch, a_waiter_for_other_keys_too_holds_back_no_one) {
    // Issue 22 (section 5): a waiter for {a, b} (b held elsewhere) at the head of a's queue
    // kept a waiter for a alone at position 1, so that one slept out its backoff while a
    // was free. Positions count the waiters that want the same keys only.
    std::map<std::string, std::uint64_t> sent;
    release_watch watch({node_address{}}, [&](std::size_t, subscription_events&) {
        return std::make_unique<fake_link>(sent);
    });
    listener both;
    both.keys = "a,b";
    listener alone;
    alone.keys = "a";
    listener later;
    later.keys = "a";
    watch.watch("a", &both);
    watch.watch("a", &alone);
    watch.watch("a", &later);
    EXPECT_EQ(watch.position("a", &both), 0u);
    EXPECT_EQ(watch.position("a", &alone), 0u) << "first of those that want a alone";
    EXPECT_EQ(watch.position("a", &later), 1u) << "arrival order among the same keys";
    EXPECT_TRUE(watch.queued_like("a", &later));
    EXPECT_FALSE(watch.queued_like("a", &both)) << "nobody else wants a and b";
    watch.released_here("a", "x");
    EXPECT_EQ(alone.released_here, 1u);
    // The waiter for both leaving moves no one that wants a alone.
    watch.unwatch("a", &both);
    EXPECT_EQ(alone.moved_up, 0u);
    EXPECT_EQ(later.moved_up, 0u);
    watch.unwatch("a", &alone);
    EXPECT_EQ(later.moved_up, 1u);
    EXPECT_EQ(later.position, 0u);
}

// Joined at the call, before any subscription: a queue without a command, also where the
// client has no subscriber at all (its own releases still reach its waiters).
TEST(release_watch, waiters_joined_at_their_call_queue_without_subscribing) {
    release_watch watch({node_address{}}, {});
    listener first;
    listener second;
    watch.join("k", &first);
    watch.join("k", &second);
    EXPECT_EQ(watch.position("k", &first), 0u);
    EXPECT_EQ(watch.position("k", &second), 1u);
    EXPECT_FALSE(watch.confirmed("k", 0));
    watch.released_here("k", "x");
    EXPECT_EQ(first.released_here, 1u);
    EXPECT_EQ(second.released_here, 1u);
    // A later waiter's backoff ran out: the oldest polls for it; the oldest's own nudges no
    // one.
    watch.nudge("k", &second);
    EXPECT_EQ(first.nudged, 1u);
    watch.nudge("k", &first);
    EXPECT_EQ(first.nudged, 1u);
    EXPECT_EQ(second.nudged, 0u);
    watch.unwatch("k", &first);
    watch.unwatch("k", &second);
    EXPECT_EQ(watch.position("k", &second), 0u);
}

// A waiter told that it moved up may leave at once, and so set off the next one (a client
// closing cancels them in a chain): each one still there is told once, none after it left.
TEST(release_watch, waiters_leaving_in_a_chain_are_told_only_while_they_wait) {
    release_watch watch({node_address{}}, {});
    std::vector<std::unique_ptr<listener>> waiters;
    for (int i = 0; i < 4; ++i) {
        waiters.push_back(std::make_unique<listener>());
        watch.join("k", waiters.back().get());
    }
    for (std::size_t i = 1; i < waiters.size(); ++i) {
        auto* self = waiters[i].get();
        self->on_moved = [&watch, self] { watch.unwatch("k", self); };
    }
    watch.unwatch("k", waiters[0].get());
    for (std::size_t i = 1; i < waiters.size(); ++i) {
        EXPECT_EQ(waiters[i]->moved_up, 1u) << i;
    }
    EXPECT_FALSE(watch.queued_like("k", waiters[0].get())) << "all of them left";
}

} // namespace
