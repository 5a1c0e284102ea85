#include "cli/options.hpp"

#include "cli/exit_codes.hpp"

#include <redlock/error.hpp>

#include <gtest/gtest.h>

namespace {

using namespace std::chrono_literals;
namespace cli = redlock::cli;

std::optional<cli::options> parse(std::vector<const char*> args, std::string& error,
                                  const char* env = nullptr) {
    args.insert(args.begin(), "redlock");
    return cli::parse_options(static_cast<int>(args.size()), args.data(), env, error);
}

TEST(cli_options, durations) {
    EXPECT_EQ(cli::parse_duration("500ms"), 500ms);
    EXPECT_EQ(cli::parse_duration("30s"), 30s);
    EXPECT_EQ(cli::parse_duration("2m"), 2min);
    EXPECT_EQ(cli::parse_duration("1h"), 1h);
    EXPECT_EQ(cli::parse_duration("7"), 7s) << "a bare number is seconds, like flock -w";
    EXPECT_EQ(cli::parse_duration("0"), 0ms);
    for (const char* bad : {"", "ms", "-1s", "1.5s", "5x", "10 s", "s10", "99999999999999999h"}) {
        EXPECT_FALSE(cli::parse_duration(bad).has_value()) << bad;
    }
}

TEST(cli_options, run_with_child_and_defaults) {
    std::string error;
    auto o =
        parse({"run", "-t", "2m", "--on-loss", "KILL", "nightly", "--", "make", "-j", "4"}, error);
    ASSERT_TRUE(o) << error;
    EXPECT_EQ(o->command, "run");
    EXPECT_EQ(o->ttl, 2min);
    EXPECT_EQ(o->loss_signal, SIGKILL);
    EXPECT_EQ(o->positional, std::vector<std::string>{"nightly"});
    EXPECT_EQ(o->child, (std::vector<std::string>{"make", "-j", "4"}));
    EXPECT_EQ(o->nodes.size(), 5u) << "the local topology by default";
}

TEST(cli_options, nodes_from_environment_and_flag) {
    std::string error;
    auto env = parse({"acquire", "k"}, error, "a:1,b:2,c:3");
    ASSERT_TRUE(env);
    EXPECT_EQ(env->nodes, (std::vector<std::string>{"a:1", "b:2", "c:3"}));
    auto flag = parse({"--nodes", "x:1", "acquire", "k"}, error, "a:1,b:2,c:3");
    ASSERT_TRUE(flag);
    EXPECT_EQ(flag->nodes, std::vector<std::string>{"x:1"});
}

TEST(cli_options, errors_say_what_to_do) {
    std::string error;
    EXPECT_FALSE(parse({}, error));
    EXPECT_NE(error.find("no command"), std::string::npos);
    EXPECT_FALSE(parse({"acquire", "-t", "soon", "k"}, error));
    EXPECT_NE(error.find("500ms"), std::string::npos) << error;
    EXPECT_FALSE(parse({"acquire", "--ttl"}, error));
    EXPECT_NE(error.find("needs a value"), std::string::npos);
    EXPECT_FALSE(parse({"run", "--on-loss", "PURPLE", "k"}, error));
    EXPECT_NE(error.find("TERM"), std::string::npos);
    EXPECT_FALSE(parse({"acquire", "--wat", "k"}, error));
    EXPECT_NE(error.find("--help"), std::string::npos);
    EXPECT_FALSE(parse({"demo", "--buyers", "0"}, error));
    EXPECT_FALSE(parse({"demo", "--buyers", "-3"}, error));
    EXPECT_FALSE(parse({"--nodes", ",", "acquire", "k"}, error));
    EXPECT_NE(error.find("no nodes"), std::string::npos);
}

TEST(cli_options, lock_options_from_wait_and_retries) {
    std::string error;
    auto once = parse({"acquire", "k"}, error);
    EXPECT_EQ(cli::to_lock_options(*once).retry.max_attempts, 1u);
    auto waiting = parse({"acquire", "-w", "10s", "k"}, error);
    EXPECT_EQ(cli::to_lock_options(*waiting).retry.max_attempts, 0u) << "bounded by the wait";
    EXPECT_EQ(cli::to_lock_options(*waiting).retry.wait_budget, 10s);
    auto capped = parse({"acquire", "-w", "10s", "-r", "3", "k"}, error);
    EXPECT_EQ(cli::to_lock_options(*capped).retry.max_attempts, 4u);
}

TEST(cli_options, exit_codes) {
    using redlock::errc;
    EXPECT_EQ(cli::exit_for({}), 0);
    EXPECT_EQ(cli::exit_for(errc::contention), cli::exit_not_acquired);
    EXPECT_EQ(cli::exit_for(errc::validity_expired), cli::exit_not_acquired);
    EXPECT_EQ(cli::exit_for(errc::quorum_unreachable), cli::exit_unreachable);
    EXPECT_EQ(cli::exit_for(errc::lock_lost), cli::exit_lock_lost);
    EXPECT_EQ(cli::exit_for(errc::invalid_argument), cli::exit_usage);
    EXPECT_EQ(cli::exit_for(errc::cancelled), cli::exit_internal);
}

} // namespace
