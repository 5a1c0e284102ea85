#include "transport/server_text.hpp"

#include <gtest/gtest.h>

namespace {

using redlock::detail::printable_server_text;

TEST(printable_server_text, keeps_what_redis_says) {
    EXPECT_EQ(printable_server_text("NOPERM this user has no permissions to run the 'set' command"),
              "NOPERM this user has no permissions to run the 'set' command");
}

TEST(printable_server_text, cuts_escape_sequences_bells_newlines_and_high_bytes) {
    EXPECT_EQ(printable_server_text("ERR \x1b[31mred\x07\r\nfake line\x7f\xc2\x9b"),
              "ERR ?[31mred???fake line???");
    EXPECT_EQ(printable_server_text(std::string_view("a\0b", 3)), "a?b");
}

TEST(printable_server_text, cuts_what_is_too_long_and_says_so) {
    const auto text = printable_server_text(std::string(5 * 1024 * 1024, 'x'));
    EXPECT_EQ(text, std::string(redlock::detail::max_server_text, 'x') + "... (cut)");
}

} // namespace
