#include <redlock/error.hpp>

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace {

TEST(error, every_value_has_its_own_message_in_one_category) {
    using redlock::errc;
    const errc all[] = {errc::contention,       errc::quorum_unreachable,
                        errc::validity_expired, errc::lock_lost,
                        errc::cancelled,        errc::invalid_argument,
                        errc::nodes_quarantined,
                        errc::node_timeout,     errc::connection_failed,
                        errc::server_error,     errc::unexpected_reply,
                        errc::node_backlogged,  errc::node_quarantined,
                        errc::duplicate_node,   errc::restarts_undetectable};
    std::set<std::string> messages;
    std::set<int> values;
    for (errc e : all) {
        std::error_code ec = e;
        EXPECT_EQ(&ec.category(), &redlock::error_category());
        EXPECT_TRUE(ec) << "no value may mean success";
        messages.insert(ec.message());
        values.insert(ec.value());
    }
    EXPECT_EQ(messages.size(), std::size(all));
    EXPECT_EQ(values.size(), std::size(all));
    EXPECT_STREQ(redlock::error_category().name(), "redlock");
}

TEST(error, compares_with_the_enum) {
    std::error_code ec = redlock::errc::contention;
    EXPECT_EQ(ec, redlock::errc::contention);
    EXPECT_NE(ec, redlock::errc::quorum_unreachable);
    EXPECT_NE(ec, std::errc::invalid_argument);
}

} // namespace
