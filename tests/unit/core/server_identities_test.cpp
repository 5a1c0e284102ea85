// Which node's votes count for a server seen under two names, and how much is remembered.
#include "core/server_identities.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using redlock::detail::server_identities;

TEST(server_identities, the_first_node_to_report_a_run_id_counts_for_it) {
    server_identities s(3);
    EXPECT_EQ(s.counted_through(0, "aaaa"), 0u);
    EXPECT_EQ(s.counted_through(1, "bbbb"), 1u);
    EXPECT_EQ(s.counted_through(2, "aaaa"), 0u) << "node 2 is node 0 under another name";
    EXPECT_EQ(s.counted_through(0, "aaaa"), 0u);
}

TEST(server_identities, not_handed_over_while_another_node_still_reports_it) {
    server_identities s(2);
    s.counted_through(0, "aaaa");
    s.counted_through(1, "aaaa");
    // The server restarted: node 0 reconnected first, node 1 still reports the old run_id.
    EXPECT_EQ(s.counted_through(0, "cccc"), 0u);
    EXPECT_EQ(s.counted_through(1, "aaaa"), 0u)
        << "node 1 may still carry a grant of the server node 0 counted";
    EXPECT_EQ(s.counted_through(1, "cccc"), 0u) << "both are the restarted server again";
}

TEST(server_identities, a_node_reconnecting_under_new_run_ids_keeps_the_memory_bounded) {
    // One entry per reconnect before: a node restarting (or a hostile one changing its run_id
    // at every connection) for the client's whole life grew the map without end.
    server_identities s(3);
    s.counted_through(1, "honest-1");
    s.counted_through(2, "honest-2");
    for (int reconnect = 0; reconnect < 100000; ++reconnect) {
        EXPECT_EQ(s.counted_through(0, "incarnation-" + std::to_string(reconnect)), 0u);
        ASSERT_LE(s.size(), 3u) << "after reconnect " << reconnect;
    }
    EXPECT_EQ(s.counted_through(1, "honest-1"), 1u);
    EXPECT_EQ(s.counted_through(2, "honest-2"), 2u);
}

TEST(server_identities, kept_while_a_node_not_yet_weighed_reports_it) {
    // Review finding F3: nodes 0 and 1 reach one server; node 0's grant was counted, node 1
    // was not weighed yet (its grant still on its way). Node 0 then moved to another server:
    // the entry went although node 1's connection still reported it, and node 1's grant of
    // the same server then counted a second time.
    server_identities s(2);
    EXPECT_EQ(s.counted_through(0, "aaaa", {"aaaa", "aaaa"}), 0u);
    EXPECT_EQ(s.counted_through(0, "cccc", {"cccc", "aaaa"}), 0u);
    EXPECT_EQ(s.counted_through(1, "aaaa", {"cccc", "aaaa"}), 0u)
        << "node 1 is the server whose grant node 0 counted";
    // Once no connection reports it any more, it goes: the memory stays bounded.
    s.counted_through(1, "dddd", {"cccc", "dddd"});
    EXPECT_EQ(s.size(), 2u);
}

TEST(server_identities, a_run_id_nobody_reports_any_more_is_forgotten) {
    server_identities s(2);
    s.counted_through(0, "aaaa");
    s.counted_through(0, "bbbb");
    EXPECT_EQ(s.size(), 1u);
    EXPECT_EQ(s.counted_through(1, "aaaa"), 1u) << "no vote can come under the old one";
}

} // namespace
