#include "core/link_gate.hpp"

#include <gtest/gtest.h>

namespace {

using redlock::detail::attempt_may_go;

TEST(link_gate, goes_once_a_quorum_is_ready) {
    EXPECT_TRUE(attempt_may_go(3, 2, 3));
    EXPECT_TRUE(attempt_may_go(5, 0, 3));
}

TEST(link_gate, waits_while_the_connections_on_their_way_could_make_a_quorum) {
    EXPECT_FALSE(attempt_may_go(0, 5, 3));
    EXPECT_FALSE(attempt_may_go(2, 1, 3));
}

TEST(link_gate, goes_when_no_quorum_can_come_of_waiting) {
    EXPECT_TRUE(attempt_may_go(0, 0, 3)) << "nothing on its way";
    EXPECT_TRUE(attempt_may_go(1, 1, 3)) << "two at best of three needed";
    EXPECT_TRUE(attempt_may_go(0, 0, 1));
}

} // namespace
