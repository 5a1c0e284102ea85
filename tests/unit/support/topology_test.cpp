#include "support/topology.hpp"

#include <cstdlib>
#include <optional>
#include <string>

#include <gtest/gtest.h>

namespace {

/// Sets an environment variable for one test and puts the old value back.
class scoped_env {
public:
    scoped_env(const char* name, const char* value)
        : name_(name) {
        if (const char* old = std::getenv(name)) {
            old_ = old;
        }
        value ? ::setenv(name, value, 1) : ::unsetenv(name);
    }
    ~scoped_env() { old_ ? ::setenv(name_, old_->c_str(), 1) : ::unsetenv(name_); }
    scoped_env(const scoped_env&) = delete;
    scoped_env& operator=(const scoped_env&) = delete;

private:
    const char* name_;
    std::optional<std::string> old_;
};

// compose/local-nodes.sh starts node N on REDLOCK_BASE_PORT + N - 1; the tests must look for
// it there (tests/scripts/local_nodes_base_port.sh checks the script's side).
TEST(topology, the_base_port_is_node_ones_port) {
    const scoped_env nodes("REDLOCK_NODES", nullptr);
    const scoped_env base("REDLOCK_BASE_PORT", "7601");
    const auto addresses = redlock::test::topology::addresses();
    ASSERT_EQ(addresses.size(), 5U);
    EXPECT_EQ(addresses.front(), "127.0.0.1:7601");
    EXPECT_EQ(addresses.back(), "127.0.0.1:7605");
    EXPECT_EQ(redlock::test::topology::port(1), 7601);
}

TEST(topology, redlock_nodes_wins_over_the_base_port) {
    const scoped_env nodes("REDLOCK_NODES", "127.0.0.1:9001,127.0.0.1:9002,127.0.0.1:9003");
    const scoped_env base("REDLOCK_BASE_PORT", "7601");
    EXPECT_EQ(redlock::test::topology::addresses().front(), "127.0.0.1:9001");
    EXPECT_EQ(redlock::test::topology::size(), 3U);
}

} // namespace
