#include "transport/server_text.hpp"

#include <gtest/gtest.h>

namespace {

using redlock::detail::configured_secrets;
using redlock::detail::printable_server_text;

const std::vector<std::string> none;

TEST(printable_server_text, keeps_what_redis_says) {
    EXPECT_EQ(
        printable_server_text("NOPERM this user has no permissions to run the 'set' command", none),
        "NOPERM this user has no permissions to run the 'set' command");
}

TEST(printable_server_text, cuts_escape_sequences_bells_newlines_and_high_bytes) {
    EXPECT_EQ(printable_server_text("ERR \x1b[31mred\x07\r\nfake line\x7f\xc2\x9b", none),
              "ERR ?[31mred???fake line???");
    EXPECT_EQ(printable_server_text(std::string_view("a\0b", 3), none), "a?b");
}

TEST(printable_server_text, cuts_what_is_too_long_and_says_so) {
    const auto text = printable_server_text(std::string(5 * 1024 * 1024, 'x'), none);
    EXPECT_EQ(text, std::string(redlock::detail::max_server_text, 'x') + "... (cut)");
}

TEST(printable_server_text, cuts_every_secret_out) {
    const std::vector<std::string> secrets{"s3cr\x1bt", "hunter2"};
    EXPECT_EQ(printable_server_text("WRONGPASS the password s3cr\x1bt is wrong, not hunter2 "
                                    "nor hunter2",
                                    secrets),
              "WRONGPASS the password *** is wrong, not *** nor ***");
    // A secret that the cut would split is gone too, not left half.
    const std::string at_the_cut(redlock::detail::max_server_text - 3, 'x');
    EXPECT_EQ(printable_server_text(at_the_cut + "hunter2" + std::string(1000, 'y'), secrets),
              at_the_cut + "***... (cut)");
}

// Earlier secrets shrink to ***, which brings later text into the kept part: a secret there
// must be cut whole too, not its beginning left (found by review: P x 12, 17 bytes, P showed
// all of the 13th P but its last byte).
TEST(printable_server_text, a_secret_brought_into_view_by_earlier_cuts_is_cut_whole) {
    const std::string p = "abcdefghijklmnopqrst"; // 20 bytes
    std::string text;
    for (int i = 0; i < 12; ++i) {
        text += p;
    }
    text += std::string(17, 'x') + p + p + std::string(500, 'y');
    const auto shown = printable_server_text(text, {p});
    EXPECT_EQ(shown.find(p.substr(0, 5)), std::string::npos) << shown;
    EXPECT_EQ(shown.rfind("***... (cut)", 0), std::string::npos);
    EXPECT_NE(shown.find(std::string(17, 'x') + "******yyy"), std::string::npos) << shown;
    EXPECT_EQ(shown.size(), redlock::detail::max_server_text + std::string("... (cut)").size());
}

TEST(configured_secrets, every_nodes_password_longest_first) {
    redlock::client_config c;
    c.nodes = {"redis://:pw-one@127.0.0.1:1", "redis://user:pw-one-longer@127.0.0.1:2",
               "unix:///r.sock?user=u&password=pw%20three", "127.0.0.1:4", "not a node:x"};
    EXPECT_EQ(configured_secrets(c, "own"),
              (std::vector<std::string>{"pw-one-longer", "pw three", "pw-one", "own"}));
    EXPECT_EQ(configured_secrets({}, ""), none);
}

} // namespace
