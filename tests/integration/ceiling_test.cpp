// The TTL ceiling (issue 22, section 1; docs/safety.md, "The TTL ceiling"): every grant raises
// its node's ceiling first; after a restart the quarantine lasts what a full quorum of the
// other nodes' ceilings says, else the fleet's maximum. Real nodes, small maxima.
#include "support/fixture.hpp"
#include "support/log_record.hpp"

#include <optional>
#include <string>
#include <thread>

namespace redlock::test {
namespace {

using namespace std::chrono_literals;

constexpr const char* ceiling_key = "redlock:ttl-ceiling";

class ceiling_test : public nodes_test {
protected:
    void SetUp() override {
        nodes_test::SetUp();
        // Nodes up for less than the maximum cannot vouch for a ceiling.
        ASSERT_TRUE(every_node_up_for(5s));
    }

    /// A client that learns quarantines from the ceilings (off by default), unless `learn`
    /// is false.
    client_config guarded(std::chrono::milliseconds max, bool learn = true) {
        auto c = config();
        c.quarantine.enabled = true;
        c.quarantine.learn_from_ttl_ceilings = learn;
        c.fleet_max_ttl = max;
        c.log = log_.sink();
        return c;
    }

    /// Node 3's view until `until` after `since`, every 100 ms, through inspect (which reads
    /// and raises nothing on the nodes by itself); the last view and whether `text` was in
    /// the quarantine's basis at some point. `ends`, when given, gets when the quarantine
    /// ends after `since` as the last view that saw it said: what the client decided, free
    /// of how slowly a sanitized client on a loaded machine looks again.
    static node_view watch_node_three(blocking_client& client, clock_type::time_point since,
                                      std::chrono::milliseconds until, const std::string& text,
                                      bool& seen, bool stop_when_counted = true,
                                      std::optional<clock_type::duration>* ends = nullptr) {
        node_view last;
        last.message = "node 3 never answered an inspection";
        // A new client's first look may come before its INFO placed the restart: counted
        // only once it was seen quarantined. A look node 3 did not answer (still starting,
        // or the client's reconnect still waiting) tells nothing: the last answered one is
        // what counts.
        bool seen_quarantined = false;
        while (clock_type::now() - since < until) {
            std::error_code ec;
            auto r = client.inspect("ceiling:k", ec);
            if (!r.nodes.at(2).message.empty()) {
                std::this_thread::sleep_for(100ms);
                continue;
            }
            last = r.nodes.at(2);
            // The latest look decides: a first one may come before the client weighed what
            // it learned (on a loaded machine, its basis was once the maximum, 4 s, and a
            // later look's the learned ceiling).
            if (ends && last.quarantined_for) {
                *ends = clock_type::now() - since + *last.quarantined_for;
            }
            seen_quarantined = seen_quarantined || last.quarantined_for.has_value();
            if (last.quarantined_for && last.quarantine_basis.find(text) != std::string::npos) {
                seen = true;
            }
            if (stop_when_counted && seen_quarantined && !last.quarantined_for) {
                break;
            }
            std::this_thread::sleep_for(100ms);
        }
        return last;
    }

    void lower_the_maximum_and_restart_node_three(bool learn);

    /// Takes `key` for `ttl` through `client` and lets it go: every node's ceiling raised
    /// for `ttl`. False (the failure reported) if it was not granted.
    static bool grant_and_release(blocking_client& client, const std::string& key,
                                  std::chrono::milliseconds ttl) {
        std::error_code ec;
        auto held = client.acquire(key, options(ttl), ec);
        if (ec) {
            ADD_FAILURE() << key << " not granted: " << held.message;
            return false;
        }
        client.release(held.lock, ec);
        return true;
    }

    /// Node 3 killed (its data lost with it) and started again: when it was back.
    static clock_type::time_point restart_node_three() {
        topology::kill(3);
        topology::restart(3);
        return clock_type::now();
    }

    log_record log_;
};

TEST_F(ceiling_test, every_grant_raises_its_nodes_ceiling_and_it_expires_after_keep) {
    blocking_client a(guarded(2s));
    std::error_code ec;
    auto held = a.acquire("ceiling:k", options(500ms), ec);
    ASSERT_FALSE(ec) << held.message;
    for (int node = 1; node <= 5; ++node) {
        // Granted at a quorum: a fresh client's connections still being made carry their
        // raise and SET a little later.
        EXPECT_TRUE(eventually([&] {
            return inspector(node).run({"HGET", ceiling_key, "500"}) != "(nil)";
        })) << node;
        const auto pttl = inspector(node).pttl(ceiling_key);
        EXPECT_GT(pttl, 3000) << "keep is twice the maximum";
        EXPECT_LE(pttl, 4000) << node;
    }
    a.release(held.lock, ec);
}

// The uncontended acquire stays one SET NX PX per node once the ceiling is confirmed.
TEST_F(ceiling_test, the_steady_state_acquire_sends_one_set_per_node) {
    blocking_client a(guarded(3s));
    std::error_code ec;
    auto first = a.acquire("ceiling:steady", options(1s), ec);
    ASSERT_FALSE(ec) << first.message;
    a.release(first.lock, ec);
    // The ceilings this client read at its first look at the nodes are answered by now.
    std::this_thread::sleep_for(300ms);
    for (int node = 1; node <= 5; ++node) {
        ASSERT_EQ(inspector(node).run({"CONFIG", "RESETSTAT"}), "OK");
    }
    auto second = a.acquire("ceiling:steady2", options(1s), ec);
    ASSERT_FALSE(ec) << second.message;
    ASSERT_TRUE(eventually([] { return keys_everywhere() == 5; })) << "every node answered";
    for (int node = 1; node <= 5; ++node) {
        const auto stats = inspector(node).run({"INFO", "commandstats"});
        EXPECT_NE(stats.find("cmdstat_set:calls=1,"), std::string::npos) << node << stats;
        EXPECT_EQ(stats.find("cmdstat_eval:"), std::string::npos) << node << stats;
        EXPECT_EQ(stats.find("cmdstat_hset"), std::string::npos) << node << stats;
    }
    a.release(second.lock, ec);
}

// All clients use short ttls: a restart costs the learned ceiling, not the maximum. The
// watching client connects before the restart: a new one may take longer than the learned
// quarantine to look for the first time (sanitized, on a loaded machine), and never see it.
TEST_F(ceiling_test, a_restart_costs_only_the_learned_ceiling_when_every_client_uses_short_ttls) {
    const auto c = guarded(4s);
    blocking_client a(c);
    blocking_client b(c);
    ASSERT_TRUE(grant_and_release(a, "ceiling:k", 500ms));
    std::error_code ec;
    (void)b.inspect("ceiling:k", ec);
    ASSERT_FALSE(ec);
    const auto restarted = restart_node_three();
    bool learned = false;
    std::optional<clock_type::duration> ends;
    const auto last =
        watch_node_three(b, restarted, 6s, "learned ceiling 500 ms", learned, true, &ends);
    EXPECT_TRUE(learned) << last.quarantine_basis;
    EXPECT_FALSE(last.quarantined_for) << last.quarantine_basis;
    // The restart is placed by whole seconds of uptime (up to 1 s late): 500 ms + drift after.
    ASSERT_TRUE(ends) << "node 3 was never seen quarantined";
    EXPECT_LT(*ends, 2500ms) << "the maximum is 4 s";
    // And a lock counts node 3 again: its vote is not vetoed. An acquire decides at its
    // quorum, often before node 3 answered (its first SET comes with a raise of its empty
    // ceiling): pending then, and its SET lands (a ttl long enough to be seen there).
    auto again = b.acquire("ceiling:k", options(3s), ec);
    ASSERT_FALSE(ec) << again.message;
    const auto& third = again.votes[2];
    EXPECT_TRUE(third.outcome == node_outcome::granted || third.outcome == node_outcome::pending)
        << third.server_message;
    EXPECT_TRUE(eventually([&] { return inspector(3).get("ceiling:k") == again.lock.token(); }));
    b.release(again.lock, ec);
}

// The defaults: every client raises the ceilings, but none learns from them
// (quarantine_options::learn_from_ttl_ceilings is off until the gaps docs/safety.md lists are
// closed): the same restart as above costs the whole maximum.
TEST_F(ceiling_test, by_default_a_restart_waits_out_the_maximum_though_the_ceilings_are_known) {
    const auto c = guarded(4s, false);
    ASSERT_FALSE(client_config{}.quarantine.learn_from_ttl_ceilings);
    blocking_client a(c);
    ASSERT_TRUE(grant_and_release(a, "ceiling:k", 500ms));
    EXPECT_TRUE(inspector(1).run({"HLEN", ceiling_key}) != "0") << "raised all the same";
    const auto restarted = restart_node_three();
    blocking_client b(c);
    bool learned = false;
    const auto last = watch_node_three(b, restarted, 2500ms, "learned", learned, false);
    EXPECT_FALSE(learned) << last.quarantine_basis;
    ASSERT_TRUE(last.quarantined_for) << "2.5 s after the restart, the maximum is 4 s";
    EXPECT_EQ(last.quarantine_basis, "fleet maximum");
}

// Nodes 1 and 2 lost their ceilings (flushed, say): with node 3 restarted, 4 and 5 are two
// known ceilings of the three needed: the maximum.
TEST_F(ceiling_test, a_ceiling_missing_on_enough_nodes_falls_back_to_the_maximum) {
    const auto c = guarded(3s);
    blocking_client a(c);
    ASSERT_TRUE(grant_and_release(a, "ceiling:k", 500ms));
    inspector(1).run({"DEL", ceiling_key});
    inspector(2).run({"DEL", ceiling_key});
    const auto restarted = restart_node_three();
    blocking_client b(c);
    bool maximum = false;
    const auto last = watch_node_three(b, restarted, 2s, "fleet maximum; ceiling known on 2 of 3",
                                       maximum, false);
    EXPECT_TRUE(maximum) << last.quarantine_basis << last.message;
    EXPECT_TRUE(last.quarantined_for)
        << "2 s after the restart, the maximum is 3 s; " << last.message;
}

// A hostile or odd ceiling: a member that is no ttl makes that node unknown (reported), a
// huge one is refused as a tighter figure and quarantines for itself: never shorter, never
// a crash.
TEST_F(ceiling_test, odd_and_huge_ceilings_are_reported_and_never_shorten_the_quarantine) {
    const auto c = guarded(3s);
    blocking_client a(c);
    ASSERT_TRUE(grant_and_release(a, "ceiling:k", 500ms));
    inspector(1).run({"HSET", ceiling_key, "abc", "99999999999999"});
    inspector(2).run({"DEL", ceiling_key});
    inspector(2).run({"SET", ceiling_key, "not a hash"});
    const auto restarted = restart_node_three();
    {
        blocking_client b(c);
        bool maximum = false;
        const auto last = watch_node_three(b, restarted, 1500ms, "fleet maximum", maximum, false);
        EXPECT_TRUE(maximum) << "two nodes unknown, two known: " << last.quarantine_basis;
        // Each odd node is reported, whichever answered first (each look at node 3 logs
        // the odd readings that came in since).
        const auto reported = [&] {
            std::error_code ignored;
            (void)b.inspect("ceiling:k", ignored);
            const auto text = log_.text();
            const auto node = [](int n) {
                return "node " + topology::host(n) + ":" + std::to_string(topology::port(n)) + ": ";
            };
            return text.find(node(1) + "ceiling entry \"abc\"") != std::string::npos &&
                   text.find(node(2) + "ceiling not read: WRONGTYPE") != std::string::npos;
        };
        EXPECT_TRUE(eventually(reported)) << log_.text();
    }
    // Node 2 refuses the raise (WRONGTYPE): its votes fail with the reason.
    blocking_client d(c);
    std::error_code ec;
    auto refused = d.acquire("ceiling:other", options(500ms), ec);
    if (refused.votes[1].outcome != node_outcome::pending) {
        EXPECT_EQ(refused.votes[1].error, errc::server_error);
        EXPECT_NE(
            refused.votes[1].server_message.find("TTL ceiling redlock:ttl-ceiling not raised"),
            std::string::npos)
            << refused.votes[1].server_message;
    }
    if (!ec) {
        d.release(refused.lock, ec);
    }

    // A huge ttl on nodes 4 and 5 (within the fleet's reach): refused as tighter, and used.
    inspector(2).run({"DEL", ceiling_key});
    for (int node : {4, 5}) {
        inspector(node).run({"HSET", ceiling_key, "999999999", "99999999999999"});
    }
    const auto again = restart_node_three();
    blocking_client e(c);
    bool above = false;
    const auto last = watch_node_three(e, again, 4s, "above fleet_max_ttl", above, false);
    EXPECT_TRUE(above) << last.quarantine_basis;
    EXPECT_TRUE(last.quarantined_for) << "past the 3 s maximum, still quarantined";
    EXPECT_GT(last.quarantined_for.value_or(0ms), 24h);
}

// Lowering the maximum takes effect once the old one has elapsed: entries of the old
// maximum stand for keep (twice the old maximum) after their last raise. 4 s lowered to 2 s,
// by clients that learn from the ceilings or not (`learn`).
void ceiling_test::lower_the_maximum_and_restart_node_three(bool learn) {
    blocking_client old_client(guarded(4s, learn));
    ASSERT_TRUE(grant_and_release(old_client, "ceiling:k", 4s));
    const auto raised = clock_type::now();

    const auto lowered = guarded(2s, learn);
    blocking_client b(lowered);
    ASSERT_TRUE(grant_and_release(b, "ceiling:mine", 1s)); // raises 1000 everywhere
    const auto restarted = restart_node_three();
    bool old_value = false;
    std::optional<clock_type::duration> old_ends;
    auto last = watch_node_three(b, restarted, 3s, "ceiling 4000 ms above fleet_max_ttl 2000 ms",
                                 old_value, false, &old_ends);
    EXPECT_TRUE(old_value) << last.quarantine_basis << last.message;
    // The old 4 s still applies: the quarantine ends 4 s (and drift) after a placement that is
    // never early, where the new 2 s would end by about 3 s (a placement up to 1 s late).
    ASSERT_TRUE(old_ends) << "node 3 was never seen quarantined; " << last.message;
    EXPECT_GT(*old_ends, 3500ms) << last.quarantine_basis;

    // The old entries pass 8 s after their raise; then a restart costs the new figure (at
    // most the new 2 s maximum and drift, over before the 3 s the old figure still took).
    std::this_thread::sleep_for(8s + 200ms - (clock_type::now() - raised));
    ASSERT_TRUE(grant_and_release(b, "ceiling:mine", 1s));
    const auto second = restart_node_three();
    blocking_client fresh(lowered);
    bool above = false;
    std::optional<clock_type::duration> ends;
    last = watch_node_three(fresh, second, 5s, "above fleet_max_ttl", above, true, &ends);
    EXPECT_FALSE(above) << last.quarantine_basis;
    EXPECT_FALSE(last.quarantined_for) << last.quarantine_basis;
    // The old figure would end 4 s (and drift) after the restart's placement, which is never
    // early; the new one at most 2 s (and drift) after a placement up to 1 s late.
    ASSERT_TRUE(ends) << "node 3 was never seen quarantined";
    EXPECT_LT(*ends, 3500ms) << "the old 4 s no longer applies";
}

TEST_F(ceiling_test, lowering_the_maximum_takes_effect_only_once_the_old_entries_expired) {
    lower_the_maximum_and_restart_node_three(true);
}

// The same with the defaults (no learning): the ceilings are still read after a restart, and
// one above the client's maximum lengthens the quarantine (fails on the code that read them
// only when learning).
TEST_F(ceiling_test, lowering_the_maximum_with_the_defaults_still_waits_for_the_old_entries) {
    ASSERT_FALSE(client_config{}.quarantine.learn_from_ttl_ceilings);
    lower_the_maximum_and_restart_node_three(false);
}

} // namespace
} // namespace redlock::test
