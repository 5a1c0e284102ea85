#include "runtime/token.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <unordered_set>
#include <vector>

namespace {

TEST(token, is_128_bits_hex_encoded) {
    redlock::detail::token_source source;
    const auto t = source.next();
    ASSERT_EQ(t.size(), 32u);
    for (char c : t) {
        EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) << t;
    }
}

TEST(token, never_repeats_across_pool_refills) {
    redlock::detail::token_source source;
    std::unordered_set<std::string> seen;
    constexpr int count = 200000; // crosses many 4 KiB refills
    for (int i = 0; i < count; ++i) {
        ASSERT_TRUE(seen.insert(source.next()).second) << "repeat after " << i;
    }
}

TEST(token, two_sources_are_independent) {
    redlock::detail::token_source a, b;
    EXPECT_NE(a.next(), b.next());
}

TEST(token, a_forked_child_never_hands_out_its_parents_tokens) {
    redlock::detail::token_source source;
    (void)source.next(); // the pool is full now, and the child inherits it
    constexpr int count = 4;
    int pipe_ends[2];
    ASSERT_EQ(::pipe(pipe_ends), 0);
    const pid_t child = ::fork();
    ASSERT_NE(child, -1);
    if (child == 0) {
        ::close(pipe_ends[0]);
        std::string tokens;
        for (int i = 0; i < count; ++i) {
            tokens += source.next();
        }
        const bool written =
            ::write(pipe_ends[1], tokens.data(), tokens.size()) == ssize_t(tokens.size());
        ::_exit(written ? 0 : 1);
    }
    ::close(pipe_ends[1]);
    std::string from_child(count * 32, '\0');
    std::size_t got = 0;
    while (got < from_child.size()) {
        const auto n = ::read(pipe_ends[0], from_child.data() + got, from_child.size() - got);
        if (n <= 0) {
            break;
        }
        got += static_cast<std::size_t>(n);
    }
    ::close(pipe_ends[0]);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ASSERT_EQ(got, from_child.size());

    std::unordered_set<std::string> parents;
    for (int i = 0; i < count; ++i) {
        parents.insert(source.next());
    }
    for (int i = 0; i < count; ++i) {
        const auto token = from_child.substr(static_cast<std::size_t>(i) * 32, 32);
        EXPECT_FALSE(parents.count(token)) << "child repeated the parent's token " << token;
    }
}

TEST(token, every_bit_position_is_balanced) {
    redlock::detail::token_source source;
    std::array<int, 128> ones{};
    constexpr int count = 20000;
    for (int i = 0; i < count; ++i) {
        const auto t = source.next();
        for (std::size_t nibble = 0; nibble < 32; ++nibble) {
            const int v = t[nibble] <= '9' ? t[nibble] - '0' : t[nibble] - 'a' + 10;
            for (int bit = 0; bit < 4; ++bit) {
                ones[nibble * 4 + bit] += (v >> bit) & 1;
            }
        }
    }
    for (int n : ones) {
        // 10 000 expected, sd ~71: 6 sd keeps this from ever flaking.
        EXPECT_NEAR(n, count / 2, 430);
    }
}

} // namespace
