#include "client/token.hpp"

#include <gtest/gtest.h>

#include <array>
#include <unordered_set>

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
