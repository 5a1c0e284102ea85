#include <redlock/error.hpp>

#include <boost/system/error_code.hpp>

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace {

TEST(error, every_value_has_its_own_message_in_one_category) {
    using redlock::errc;
    const errc all[] = {
        errc::contention,        errc::quorum_unreachable, errc::validity_expired,
        errc::lock_lost,         errc::cancelled,          errc::invalid_argument,
        errc::nodes_quarantined, errc::node_timeout,       errc::connection_failed,
        errc::server_error,      errc::unexpected_reply,   errc::node_backlogged,
        errc::node_quarantined,  errc::duplicate_node,     errc::restarts_undetectable,
        errc::client_closed,     errc::lock_mismatch,      errc::node_can_evict,
        errc::node_not_primary};
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

TEST(error, boost_error_code_holds_it_and_compares_both_ways) {
    boost::system::error_code ec = redlock::errc::lock_lost;
    EXPECT_TRUE(ec);
    EXPECT_EQ(ec, redlock::errc::lock_lost);
    EXPECT_NE(ec, redlock::errc::cancelled);
    const std::error_code back = ec;
    EXPECT_EQ(back, redlock::errc::lock_lost);
    EXPECT_EQ(&back.category(), &redlock::error_category());
    EXPECT_EQ(ec.message(), back.message());
    const boost::system::error_code from_std = std::error_code(redlock::errc::contention);
    EXPECT_EQ(from_std, redlock::errc::contention);
    EXPECT_FALSE(boost::system::error_code(std::error_code()));
}

} // namespace
