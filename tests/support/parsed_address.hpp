#ifndef REDLOCK_TESTS_SUPPORT_PARSED_ADDRESS_HPP
#define REDLOCK_TESTS_SUPPORT_PARSED_ADDRESS_HPP

#include <redlock/node_address.hpp>

#include <gtest/gtest.h>

#include <string>

namespace redlock::test {

/// A node address the test knows to be valid; a parse error fails the test and says why.
inline node_address parsed_address(const std::string& text) {
    node_address a;
    std::string why;
    EXPECT_FALSE(parse_node_address(text, a, why)) << why;
    return a;
}

} // namespace redlock::test

#endif
