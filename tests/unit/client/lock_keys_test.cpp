#include <redlock/lock_keys.hpp>

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace redlock {
namespace {

using keys = std::vector<std::string>;

/// What a call taking lock_keys receives.
keys passed(lock_keys given) {
    return std::move(given).get();
}

TEST(lock_keys, one_key_from_every_string_type) {
    const std::string owned = "a";
    const std::string_view view = "b";
    EXPECT_EQ(passed("k"), keys{"k"});
    EXPECT_EQ(passed(owned), keys{"a"});
    EXPECT_EQ(passed(view), keys{"b"});
    EXPECT_EQ(passed(std::string("c")), keys{"c"});
}

TEST(lock_keys, a_braced_list_is_a_set_of_keys_never_a_pointer_pair) {
    // {"a", "b"} also matches string_view's (first, last) constructor: that would be one
    // key made of whatever lies between two literals.
    EXPECT_EQ(passed({"a", "b"}), (keys{"a", "b"}));
    EXPECT_EQ(passed({"only"}), keys{"only"});
    const std::string x = "x";
    const std::string_view y = "y";
    EXPECT_EQ(passed({x, y, "z"}), (keys{"x", "y", "z"}));
    EXPECT_EQ(passed(keys{"p", "q"}), (keys{"p", "q"}));
    EXPECT_TRUE(passed({}).empty()) << "refused by the call that takes it, not here";
}

TEST(lock_keys, keys_keep_embedded_nuls) {
    const std::string with_nul("a\0b", 3);
    EXPECT_EQ(passed(with_nul).front().size(), 3u);
    EXPECT_EQ(passed({std::string_view(with_nul)}).front().size(), 3u);
}

} // namespace
} // namespace redlock
