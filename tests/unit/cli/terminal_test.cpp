#include "cli/terminal.hpp"

#include <gtest/gtest.h>

namespace {

using redlock::cli::printable;

TEST(terminal, printable_ascii_passes_and_everything_else_is_escaped) {
    EXPECT_EQ(printable("held by another token (NOPERM no permissions)"),
              "held by another token (NOPERM no permissions)");
    EXPECT_EQ(printable("\x1b]0;owned\x07\x1b[2J\r\nnext"),
              "\\x1b]0;owned\\x07\\x1b[2J\\x0d\\x0anext");
    EXPECT_EQ(printable(std::string("a\0b", 3)), "a\\x00b");
    EXPECT_EQ(printable("\x7f\x9b caf\xc3\xa9"), "\\x7f\\x9b caf\\xc3\\xa9")
        << "DEL, an 8-bit CSI, and (alike) UTF-8";
    EXPECT_EQ(printable("C:\\x1b"), "C:\\x5cx1b") << "a backslash cannot fake an escape";
}

TEST(terminal, printable_cuts_long_text_and_says_how_long_it_was) {
    EXPECT_EQ(printable(std::string(10, 'e'), 4), "eeee... (10 bytes)");
    EXPECT_EQ(printable("four", 4), "four");
    EXPECT_EQ(printable(""), "");
}

} // namespace
