#include "cli/options.hpp"

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "support/parsed_address.hpp"

#include <redlock/error.hpp>
#include <redlock/node_address.hpp>

#include <gtest/gtest.h>

#include <algorithm>

#include <cstdio>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

namespace {

using namespace std::chrono_literals;
namespace cli = redlock::cli;

std::optional<cli::options> parse(std::vector<const char*> args, std::string& error,
                                  const char* env = nullptr) {
    args.insert(args.begin(), "redlock");
    return cli::parse_options(static_cast<int>(args.size()), args.data(), env, error);
}

/// parse_duration's result, or why it refused (a test failure names the text either way).
std::optional<std::chrono::milliseconds> duration(std::string_view text, std::string& why) {
    why.clear();
    return cli::parse_duration(text, why);
}

TEST(cli_options, durations) {
    std::string why;
    EXPECT_EQ(duration("500ms", why), 500ms);
    EXPECT_EQ(duration("30s", why), 30s);
    EXPECT_EQ(duration("2m", why), 2min);
    EXPECT_EQ(duration("1h", why), 1h);
    EXPECT_EQ(duration("0", why), 0ms) << "zero needs no unit";
    EXPECT_EQ(duration("0.0", why), 0ms);
    EXPECT_EQ(duration("0s", why), 0ms);
    EXPECT_EQ(duration("007s", why), 7s);
    EXPECT_EQ(duration("2147483647ms", why), cli::max_duration) << why;
}

TEST(cli_options, fractional_durations_are_exact_milliseconds) {
    std::string why;
    EXPECT_EQ(duration("0.5s", why), 500ms);
    EXPECT_EQ(duration("1.5m", why), 90s);
    EXPECT_EQ(duration("0.25h", why), 15min);
    EXPECT_EQ(duration("0.1s", why), 100ms) << "decimal, not binary floating point";
    EXPECT_EQ(duration("0.001s", why), 1ms);
    EXPECT_EQ(duration(".5s", why), 500ms) << "no digit before the point, as for sleep(1)";
    EXPECT_EQ(duration("5.s", why), 5s) << "no digit after it";
    EXPECT_EQ(duration("1.0ms", why), 1ms) << "a fraction of zero is a whole number";
    EXPECT_EQ(duration("2.50000000000000000000000000s", why), 2500ms) << "trailing zeros";
    EXPECT_EQ(duration("0.0000025h", why), 9ms) << "7 decimals of an hour can be whole ms";
    EXPECT_EQ(duration("2147483.647s", why), cli::max_duration) << why;
}

TEST(cli_options, durations_finer_than_a_millisecond_are_refused_and_say_so) {
    for (const char* finer : {"0.0005s", "1.0005s", "0.5ms", "1.5ms", "0.00001m", "0.0000005h",
                              "0.00000025h", "1.00000000000000000001s"}) {
        std::string why;
        EXPECT_FALSE(duration(finer, why).has_value()) << finer;
        EXPECT_NE(why.find("whole number of milliseconds"), std::string::npos)
            << finer << ": " << why;
    }
}

TEST(cli_options, bad_durations_say_what_is_wrong) {
    struct bad_case {
        const char* text;
        const char* says;
    };
    for (const auto& c : std::initializer_list<bad_case>{
             {"", "not a duration"},
             {"ms", "not a duration"},
             {".", "not a duration"},
             {".s", "not a duration"},
             {"s10", "not a duration"},
             {"10 s", "not a duration"},
             {" 10s", "not a duration"},
             {"+5s", "not a duration"},
             {"1.5.5s", "not a duration"},
             {"1,5s", "not a duration"},
             {"0x10s", "not a duration"},
             {"5x", "unknown unit \"x\""},
             {"5", "has no unit"},
             {"1.5", "has no unit"},
             {"30", "has no unit"},
             {"0.5", "has no unit"},
             {"5sec", "unknown unit \"sec\""},
             {"5S", "unknown unit \"S\""},
             {"nan", "not a duration"},
             {"inf", "not a duration"},
             {"NaNs", "not a duration"},
             {"1e3s", "exponent"},
             {"1.5E2ms", "exponent"},
             {"2e-3s", "exponent"},
             {"-1s", "negative"},
             {"-.5s", "negative"},
             {"--ttl", "not a duration"},
             {"-", "not a duration"},
             {"-0", "negative"},
             {"-0.5s", "negative"},
             {"2147483648ms", "over the limit"},
             {"2147483.648s", "over the limit"},
             {"597h", "over the limit"},
             {"99999999999999999h", "over the limit"},
             {"99999999999999999999999999999999s", "over the limit"},
             {"9223372036854775807ms", "over the limit"},
         }) {
        std::string why;
        EXPECT_FALSE(duration(c.text, why).has_value()) << '"' << c.text << '"';
        EXPECT_NE(why.find(c.says), std::string::npos) << '"' << c.text << "\": " << why;
    }
}

TEST(cli_options, run_with_child_and_defaults) {
    std::string error;
    auto o =
        parse({"run", "-t", "50s", "--on-loss", "KILL", "nightly", "--", "make", "-j", "4"}, error);
    ASSERT_TRUE(o) << error;
    EXPECT_EQ(o->command, "run");
    EXPECT_EQ(o->ttl, 50s);
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
    EXPECT_EQ(flag->nodes_from, cli::options::source::flag);
    EXPECT_EQ(env->nodes_from, cli::options::source::environment);
}

TEST(cli_options, a_sentinel_address_keeps_its_commas) {
    std::string error;
    auto o = parse({"acquire", "k"}, error,
                   "redis-sentinel://s1,s2:26380,s3#a,h:7001,rediss-sentinel://u:p@s1,s2#b,x:1");
    ASSERT_TRUE(o) << error;
    EXPECT_EQ(o->nodes, (std::vector<std::string>{"redis-sentinel://s1,s2:26380,s3#a", "h:7001",
                                                  "rediss-sentinel://u:p@s1,s2#b", "x:1"}));
    // With a `;`, only `;` separates: for a master name that holds a comma.
    auto semicolons =
        parse({"-n", "redis-sentinel://s1,s2#a,b;h:7001;;x:1", "acquire", "k"}, error);
    ASSERT_TRUE(semicolons) << error;
    EXPECT_EQ(semicolons->nodes,
              (std::vector<std::string>{"redis-sentinel://s1,s2#a,b", "h:7001", "x:1"}));
    EXPECT_EQ(redlock::test::parsed_address(semicolons->nodes[0]).master_name, "a,b");
    // Without a Sentinel address a `;` is an ordinary character (of a password, say).
    auto plain = parse({"-n", "redis://:pa;ss@h:1,h:2", "acquire", "k"}, error);
    ASSERT_TRUE(plain) << error;
    EXPECT_EQ(plain->nodes, (std::vector<std::string>{"redis://:pa;ss@h:1", "h:2"}));
}

TEST(cli_options, built_in_nodes_only_when_no_list_is_given_at_all) {
    std::string error;
    auto unset = parse({"acquire", "k"}, error, nullptr);
    ASSERT_TRUE(unset) << error;
    EXPECT_EQ(unset->nodes_from, cli::options::source::built_in);
    EXPECT_EQ(unset->nodes.size(), 5U);
    EXPECT_EQ(unset->nodes.front(), "127.0.0.1:7001");

    for (const char* empty : {"", ",", ",,"}) {
        error.clear();
        EXPECT_FALSE(parse({"acquire", "k"}, error, empty)) << '"' << empty << '"';
        EXPECT_NE(error.find("REDLOCK_NODES is set but names none"), std::string::npos) << error;
    }
    auto flag = parse({"--nodes", "x:1", "acquire", "k"}, error, "");
    ASSERT_TRUE(flag) << error;
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

/// What `redlock ARGS` parses to; fails the test, and returns empty options, on an error.
cli::options parsed(std::vector<const char*> args) {
    std::string error;
    auto o = parse(args, error);
    EXPECT_TRUE(o) << error;
    return o.value_or(cli::options{});
}

/// The error `redlock ARGS` is refused with; fails the test if it is accepted.
std::string refusal(std::vector<const char*> args) {
    std::string error;
    EXPECT_FALSE(parse(args, error)) << "accepted";
    return error;
}

TEST(cli_options, an_option_and_its_value_in_one_word_or_two) {
    for (const auto& form : std::vector<std::vector<const char*>>{
             {"--ttl", "1.5s"}, {"--ttl=1.5s"}, {"-t", "1.5s"}, {"-t1.5s"}}) {
        std::vector<const char*> args{"acquire"};
        args.insert(args.end(), form.begin(), form.end());
        args.push_back("k");
        EXPECT_EQ(parsed(args).ttl, 1500ms) << form[0];
    }
    EXPECT_EQ(parsed({"acquire", "--nodes=a:1,b:2", "k"}).nodes,
              (std::vector<std::string>{"a:1", "b:2"}));
    EXPECT_EQ(parsed({"run", "--on-loss=KILL", "k", "--", "true"}).loss_signal, SIGKILL);
    EXPECT_EQ(parsed({"acquire", "--tls-server-name=redis.internal", "k"}).tls.server_name,
              "redis.internal");

    const auto grouped = parsed({"acquire", "-qt", "5s", "k"});
    EXPECT_TRUE(grouped.quiet) << "short flags group, as with getopt";
    EXPECT_EQ(grouped.ttl, 5s);
}

TEST(cli_options, options_go_before_or_after_the_subcommand_and_its_arguments) {
    for (const auto& args :
         std::vector<std::vector<const char*>>{{"-q", "--wait", "2s", "acquire", "k"},
                                               {"acquire", "-q", "k", "--wait", "2s"},
                                               {"acquire", "k", "--wait=2s", "-q"}}) {
        const auto o = parsed(args);
        EXPECT_EQ(o.command, "acquire");
        EXPECT_EQ(o.positional, std::vector<std::string>{"k"});
        EXPECT_EQ(o.wait, 2s);
        EXPECT_TRUE(o.quiet);
    }
}

TEST(cli_options, the_last_of_a_repeated_option_wins) {
    // So that an alias can carry defaults that the command line overrides.
    EXPECT_EQ(parsed({"acquire", "-t", "1s", "--ttl=2s", "k"}).ttl, 2s);
    EXPECT_EQ(parsed({"-n", "a:1", "acquire", "-n", "b:2", "k"}).nodes,
              std::vector<std::string>{"b:2"});
}

TEST(cli_options, double_dash_ends_the_options) {
    const auto run = parsed({"run", "-t", "5s", "k", "--", "make", "-t", "--ttl=1"});
    EXPECT_EQ(run.ttl, 5s);
    EXPECT_EQ(run.child, (std::vector<std::string>{"make", "-t", "--ttl=1"}))
        << "the command's words are its own, word for word";
    // For the other subcommands, what follows is more arguments: a key that starts with -.
    const auto release = parsed({"release", "--", "-dash-key", "--token"});
    EXPECT_EQ(release.positional, (std::vector<std::string>{"-dash-key", "--token"}));
    EXPECT_TRUE(release.child.empty());
}

TEST(cli_options, a_run_command_without_double_dash_gets_the_line_with_it) {
    const std::string hint = "put -- before the command: ";
    EXPECT_EQ(refusal({"run", "nightly", "sh", "-c", "echo hi"}),
              hint + "redlock run nightly -- sh -c 'echo hi'")
        << "the user's own words, quoted for the shell";
    EXPECT_EQ(refusal({"run", "-t", "5s", "nightly", "make", "-j4"}),
              hint + "redlock run -t 5s nightly -- make -j4");
    EXPECT_EQ(refusal({"--ttl=5s", "-q", "run", "nightly", "./report.sh", "--fast"}),
              hint + "redlock --ttl=5s -q run nightly -- ./report.sh --fast");
    EXPECT_EQ(refusal({"-qt", "5s", "run", "k", "ls", "-l"}),
              hint + "redlock -qt 5s run k -- ls -l");
    EXPECT_EQ(refusal({"run", "k", "tail", "-n", "5", "/var/log/syslog"}),
              hint + "redlock run k -- tail -n 5 /var/log/syslog")
        << "the command's -n is not --nodes";
    EXPECT_EQ(refusal({"run", "k", "sort", "-r"}), hint + "redlock run k -- sort -r")
        << "nor its -r a --retries without a value";
    EXPECT_EQ(refusal({"run", "k", "cp", "--fence=no", "a"}),
              hint + "redlock run k -- cp --fence=no a");
    EXPECT_EQ(refusal({"run", "k", "sh", "-c", "x", "--", "y"}),
              hint + "redlock run k -- sh -c x -- y");
    EXPECT_EQ(refusal({"run", "k", "ls", "--help"}), hint + "redlock run k -- ls --help")
        << "the command's own --help";
    EXPECT_EQ(refusal({"run", "it's", "ls", ""}), hint + "redlock run 'it'\\''s' -- ls ''");

    // An unknown option right after KEY may be a typo or the command: both are said.
    EXPECT_EQ(refusal({"run", "k", "-c", "echo hi"}),
              "unknown option -c for run; if it is the command's, " + hint +
                  "redlock run k -- -c 'echo hi'");
    EXPECT_EQ(refusal({"run", "k", "--wiat", "5s"}),
              "unknown option --wiat for run; if it is the command's, " + hint +
                  "redlock run k -- --wiat 5s");
    // Before KEY an unknown option is only that.
    EXPECT_EQ(refusal({"run", "--wiat", "5s", "k", "--", "true"}),
              "unknown option --wiat for run (see redlock run --help)");
    // Options of ours after KEY are still options.
    const auto o = parsed({"run", "k", "--grace", "1s", "-q", "--", "true"});
    EXPECT_EQ(o.grace, 1s);
    EXPECT_EQ(o.child, std::vector<std::string>{"true"});
    EXPECT_TRUE(parsed({"run", "k", "-q"}).child.empty()) << "run_command says what is missing";
}

/// Where each option applies, as the documentation says: its flag, a valid value (empty for
/// a flag) and the subcommands that take it.
struct applicability {
    const char* flag;
    const char* value;
    std::vector<std::string> subcommands;
};

const std::vector<std::string> every_subcommand{"run",    "acquire", "extend", "release",
                                                "status", "nodes",   "demo"};

const std::vector<applicability> where_options_apply{
    {"--nodes", "a:1", every_subcommand},
    {"--password-file", "/p", every_subcommand},
    {"--tls-ca", "/ca.pem", every_subcommand},
    {"--tls-ca-dir", "/certs", every_subcommand},
    {"--tls-server-name", "redis", every_subcommand},
    {"--tls-insecure-skip-verify", "", every_subcommand},
    {"--no-quarantine", "", every_subcommand},
    {"--quiet", "", every_subcommand},
    {"--ttl", "5s", {"run", "acquire", "extend"}},
    {"--max-ttl", "2m", {"run", "acquire", "extend", "release", "status", "nodes"}},
    {"--wait", "5s", {"run", "acquire"}},
    {"--retries", "3", {"run", "acquire"}},
    {"--conflict-exit-code", "3", {"run", "acquire"}},
    {"--node-timeout", "100ms", {"run", "acquire", "extend", "release", "status", "nodes"}},
    {"--fence", "", {"run", "acquire"}},
    {"--json", "", {"acquire", "release", "status", "nodes"}},
    {"--token", "0123456789abcdef0123456789abcdef", {"status"}},
    {"--on-loss", "KILL", {"run"}},
    {"--grace", "1s", {"run"}},
    {"--buyers", "10", {"demo"}},
    {"--stock", "10", {"demo"}},
    {"--instances", "2", {"demo"}},
};

std::optional<cli::options> parse_with_max_ttl(std::vector<const char*> args, std::string& error,
                                               const char* env_max_ttl) {
    args.insert(args.begin(), "redlock");
    return cli::parse_options(static_cast<int>(args.size()), args.data(), nullptr, error,
                              env_max_ttl);
}

TEST(cli_options, max_ttl_defaults_to_the_librarys_and_bounds_the_ttl) {
    std::string error;
    auto o = parse({"acquire", "k"}, error);
    ASSERT_TRUE(o) << error;
    EXPECT_EQ(o->max_ttl, redlock::default_fleet_max_ttl);
    EXPECT_EQ(cli::make_config(*o).fleet_max_ttl, redlock::default_fleet_max_ttl);
    EXPECT_NE(cli::help_text("acquire").find(
                  std::to_string(redlock::default_fleet_max_ttl.count() / 1000) + "s)"),
              std::string::npos)
        << "the help states the library's default";

    for (const char* command : {"run", "acquire", "extend"}) {
        std::vector<const char*> args{command, "-t", "5m", "k"};
        if (std::string(command) == "extend") {
            args.push_back("token");
        }
        if (std::string(command) == "run") {
            args.insert(args.end(), {"--", "true"});
        }
        EXPECT_FALSE(parse(args, error)) << command;
        EXPECT_NE(error.find("--ttl of 300000 ms is above --max-ttl of 60000 ms"),
                  std::string::npos)
            << error;
        EXPECT_NE(error.find("raise --max-ttl (or $REDLOCK_MAX_TTL)"), std::string::npos) << error;
    }
    o = parse({"acquire", "-t", "5m", "--max-ttl", "5m", "k"}, error);
    ASSERT_TRUE(o) << error;
    EXPECT_EQ(cli::make_config(*o).fleet_max_ttl, 5min);
    o = parse_with_max_ttl({"acquire", "-t", "5m", "k"}, error, "10m");
    ASSERT_TRUE(o) << error;
    EXPECT_EQ(o->max_ttl, 10min);
    o = parse_with_max_ttl({"acquire", "--max-ttl", "1m", "-t", "1m", "k"}, error, "10m");
    ASSERT_TRUE(o) << "the flag wins over the environment: " << error;
    EXPECT_EQ(o->max_ttl, 1min);
    EXPECT_FALSE(parse_with_max_ttl({"status", "k"}, error, "soon"));
    EXPECT_NE(error.find("$REDLOCK_MAX_TTL: \"soon\""), std::string::npos) << error;
    EXPECT_FALSE(parse({"status", "--max-ttl", "0", "k"}, error));
    EXPECT_NE(error.find("--max-ttl: must be above 0"), std::string::npos) << error;
    o = parse({"status", "k"}, error);
    ASSERT_TRUE(o) << error;
    EXPECT_FALSE(parse({"acquire", "-t", "61s", "k"}, error));
}

TEST(cli_options, node_timeout_comes_from_the_environment_unless_the_flag_says) {
    const auto parse_with_node_timeout = [](std::vector<const char*> args, std::string& error,
                                            const char* env_node_timeout) {
        args.insert(args.begin(), "redlock");
        return cli::parse_options(static_cast<int>(args.size()), args.data(), nullptr, error,
                                  nullptr, env_node_timeout);
    };
    std::string error;
    auto o = parse({"acquire", "k"}, error);
    ASSERT_TRUE(o) << error;
    EXPECT_EQ(cli::to_lock_options(*o).node_timeout, redlock::lock_options{}.node_timeout);
    o = parse_with_node_timeout({"acquire", "k"}, error, "");
    ASSERT_TRUE(o) << "set but empty is unset: " << error;
    EXPECT_EQ(o->node_timeout, redlock::lock_options{}.node_timeout);
    o = parse_with_node_timeout({"acquire", "k"}, error, "300ms");
    ASSERT_TRUE(o) << error;
    EXPECT_EQ(cli::to_lock_options(*o).node_timeout, 300ms);
    o = parse_with_node_timeout({"acquire", "--node-timeout", "2s", "k"}, error, "300ms");
    ASSERT_TRUE(o) << "the flag wins over the environment: " << error;
    EXPECT_EQ(o->node_timeout, 2s);
    EXPECT_FALSE(parse_with_node_timeout({"acquire", "k"}, error, "slowly"));
    EXPECT_NE(error.find("$REDLOCK_NODE_TIMEOUT: \"slowly\""), std::string::npos) << error;
}

TEST(cli_options, an_option_a_subcommand_does_not_take_is_an_error_naming_both) {
    for (const auto& option : where_options_apply) {
        for (const auto& subcommand : every_subcommand) {
            std::vector<const char*> args{subcommand.c_str(), option.flag};
            if (*option.value != '\0') {
                args.push_back(option.value);
            }
            args.insert(args.end(), {"k", "--", "true"});
            if (subcommand != "run") {
                args.resize(args.size() - 2); // no command after --
            }
            std::string error;
            const bool applies =
                std::count(option.subcommands.begin(), option.subcommands.end(), subcommand) != 0;
            EXPECT_EQ(parse(args, error).has_value(), applies)
                << subcommand << " " << option.flag << ": " << error;
            if (!applies) {
                EXPECT_NE(error.find(std::string(option.flag) + " does not apply to " + subcommand),
                          std::string::npos)
                    << error;
                EXPECT_NE(error.find(option.subcommands.front()), std::string::npos)
                    << "says where it does apply: " << error;
            }
        }
    }
    // The short form is named by its long name, which the help lists.
    EXPECT_NE(refusal({"release", "-t", "5s", "k", "t"}).find("--ttl does not apply to release"),
              std::string::npos);
}

TEST(cli_options, unknown_options_and_subcommands_are_named) {
    EXPECT_EQ(refusal({"acquire", "--wiat", "5s", "k"}),
              "unknown option --wiat for acquire (see redlock acquire --help)");
    EXPECT_EQ(refusal({"acquire", "--wiat=5s", "k"}),
              "unknown option --wiat for acquire (see redlock acquire --help)");
    EXPECT_EQ(refusal({"-x", "status", "k"}),
              "unknown option -x for status (see redlock status --help)");
    EXPECT_EQ(refusal({"--wiat"}), "unknown option --wiat (see redlock --help)");
    EXPECT_EQ(refusal({"acquire", "--no", "k"}),
              "unknown option --no for acquire (see redlock acquire --help)")
        << "no abbreviations: --no is not --no-quarantine";
    EXPECT_EQ(refusal({"frobnicate", "k"}), "unknown command \"frobnicate\" (see redlock --help)");
    EXPECT_EQ(refusal({}), "no command given (see redlock --help)");
}

TEST(cli_options, malformed_options_say_what_is_wrong) {
    EXPECT_EQ(refusal({"acquire", "k", "--ttl"}), "--ttl needs a value");
    EXPECT_EQ(refusal({"acquire", "k", "-t"}), "--ttl needs a value");
    EXPECT_EQ(refusal({"acquire", "--ttl", "--wait", "1s", "k"}), "--ttl needs a value")
        << "an option is no value for another";
    EXPECT_EQ(refusal({"acquire", "--ttl", "-w", "1s", "k"}), "--ttl needs a value");
    EXPECT_EQ(refusal({"acquire", "--password-file", "--quiet", "k"}),
              "--password-file needs a value");
    // A value that starts with "--" but names no option is a value (the config fuzzer found
    // `--nodes --=x` ending the process: an empty name is ambiguous to program_options).
    for (const char* odd : {"--=x", "--"}) {
        EXPECT_FALSE(refusal({"--nodes", odd, "run", "k", "true"}).empty()) << odd;
    }
    EXPECT_EQ(parsed({"acquire", "--password-file=--quiet", "k"}).password_file, "--quiet")
        << "unless it is given as the value";
    EXPECT_EQ(refusal({"acquire", "--ttl=", "k"}), "--ttl needs a value after the =");
    EXPECT_EQ(refusal({"acquire", "--fence=yes", "k"}), "--fence takes no value");
    EXPECT_EQ(refusal({"acquire", "--ttl", "-5s", "k"}), "--ttl: \"-5s\" is negative");
    EXPECT_EQ(refusal({"acquire", "--ttl", "0.5ms", "k"}),
              "--ttl: \"0.5ms\" is not a whole number of milliseconds (durations count in ms)");
    EXPECT_EQ(refusal({"demo", "--buyers", "0"}),
              "--buyers: \"0\" is not a whole number from 1 to 5000");
    EXPECT_EQ(refusal({"demo", "--instances", "65"}),
              "--instances: \"65\" is not a whole number from 1 to 64");
    EXPECT_EQ(refusal({"acquire", "--retries", "1.5", "k"}),
              "--retries: \"1.5\" is not a whole number from 0 to 1000000");
}

TEST(cli_options, odd_words_are_errors_or_arguments_never_a_crash) {
    for (const auto& args : std::vector<std::vector<const char*>>{{"-"},
                                                                  {"--"},
                                                                  {"---"},
                                                                  {"--="},
                                                                  {"-="},
                                                                  {"=", "acquire"},
                                                                  {"acquire", "-", "k"},
                                                                  {"acquire", "---x", "k"},
                                                                  {"acquire", "--=5", "k"},
                                                                  {"acquire", "-t="},
                                                                  {"", "acquire"},
                                                                  {"acquire", "", ""},
                                                                  {"-qqqq", "acquire"},
                                                                  {"acquire", "-q5"},
                                                                  {"help", "help"},
                                                                  {"help", "--", "run"},
                                                                  {"run", "--", "--"},
                                                                  {"-tq", "acquire"},
                                                                  {"--tls-ca", "--", "acquire"}}) {
        std::string error;
        const auto o = parse(args, error);
        EXPECT_TRUE(o.has_value() || !error.empty()) << args.size();
    }
}

TEST(cli_options, help_overall_and_per_subcommand) {
    for (const auto& args : std::vector<std::vector<const char*>>{
             {"--help"}, {"-h"}, {"help"}, {"--ttl", "5s", "--help"}}) {
        const auto o = parsed(args);
        EXPECT_EQ(o.command, "help");
        EXPECT_EQ(o.help_topic, "");
    }
    for (const auto& args : std::vector<std::vector<const char*>>{{"help", "run"},
                                                                  {"run", "--help"},
                                                                  {"run", "-h"},
                                                                  {"--help", "run", "k"},
                                                                  {"run", "k", "--help"},
                                                                  {"run", "--bogus", "--help"}}) {
        const auto o = parsed(args);
        EXPECT_EQ(o.command, "help");
        EXPECT_EQ(o.help_topic, "run");
    }
    EXPECT_EQ(refusal({"help", "frobnicate"}),
              "unknown command \"frobnicate\" (see redlock --help)");

    const auto overview = cli::help_text("");
    for (const auto& subcommand : every_subcommand) {
        EXPECT_NE(overview.find("redlock " + subcommand + " [options]"), std::string::npos)
            << subcommand;
    }
    EXPECT_NE(overview.find("exit status"), std::string::npos);
    EXPECT_NE(overview.find("--nodes"), std::string::npos) << "the options of every command";
}

TEST(cli_options, version_anywhere_before_the_double_dash) {
    for (const auto& args : std::vector<std::vector<const char*>>{{"--version"},
                                                                  {"-V"},
                                                                  {"acquire", "--version"},
                                                                  {"run", "k", "-V", "--", "x"},
                                                                  {"--version", "frobnicate"}}) {
        EXPECT_EQ(parsed(args).command, "version") << args.size();
    }
    EXPECT_EQ(parsed({"--version", "--help"}).command, "help") << "help says more";
    EXPECT_EQ(parsed({"run", "k", "--", "tool", "--version"}).command, "run")
        << "the command's own --version";
    EXPECT_EQ(refusal({"acquire", "--ttl", "--version", "k"}), "--ttl needs a value");
    EXPECT_NE(cli::help_text("").find("redlock --version"), std::string::npos);
}

/// Whether `help` lists `flag` as one of its options (not just mentions it in a description):
/// program_options starts such a line with "  --flag" or "  -f [ --flag ]".
bool lists_option(const std::string& help, const std::string& flag) {
    return help.find("\n  " + flag + " ") != std::string::npos ||
           help.find(" [ " + flag + " ] ") != std::string::npos ||
           help.find("\n  " + flag + "\n") != std::string::npos;
}

TEST(cli_options, each_subcommands_help_lists_exactly_its_options) {
    for (const auto& subcommand : every_subcommand) {
        const auto help = cli::help_text(subcommand);
        EXPECT_NE(help.find("usage: redlock " + subcommand), std::string::npos) << help;
        for (const auto& option : where_options_apply) {
            const bool applies =
                std::count(option.subcommands.begin(), option.subcommands.end(), subcommand) != 0;
            EXPECT_EQ(lists_option(help, option.flag), applies) << subcommand << " " << option.flag;
        }
    }
    EXPECT_NE(cli::help_text("run").find("DUR: "), std::string::npos) << "the duration syntax";
    EXPECT_EQ(cli::help_text("demo").find("DUR: "), std::string::npos) << "demo takes none";
}

TEST(cli_options, durations_past_the_limit_are_usage_errors_not_wrapped) {
    // Each parses as a number of milliseconds that fits 64 bits, but would overflow a
    // steady_clock time point (nanoseconds) once added to now.
    for (const char* flag : {"--ttl", "--wait", "--grace", "--node-timeout", "--max-ttl"}) {
        for (const char* value :
             {"3000000h", "99999999999999s", "9223372036854775807ms", "2147483648ms", "597h"}) {
            std::string error;
            EXPECT_FALSE(parse({"run", flag, value, "k", "--", "true"}, error))
                << flag << " " << value;
            EXPECT_NE(error.find(flag), std::string::npos) << error;
        }
        std::string error;
        // A --ttl that long needs a --max-ttl as long.
        auto longest = parse(
            {"run", "--max-ttl", "2147483647ms", flag, "2147483647ms", "k", "--", "true"}, error);
        EXPECT_TRUE(longest) << flag << ": " << error;
    }
    std::string error;
    EXPECT_FALSE(parse({"run", "--grace", "3000000h", "k", "--", "true"}, error));
    EXPECT_NE(error.find("over the limit"), std::string::npos) << error;
}

TEST(cli_options, tls_flags_fill_the_client_config) {
    std::string error;
    auto o = parse({"status", "--tls-ca", "/etc/ca.pem", "--tls-ca-dir", "/etc/certs", "--tls-cert",
                    "/c.pem", "--tls-key", "/k.pem", "--tls-server-name", "redis.internal", "k"},
                   error);
    ASSERT_TRUE(o) << error;
    const auto tls = redlock::cli::make_config(*o).tls;
    EXPECT_EQ(tls.ca_file, "/etc/ca.pem");
    EXPECT_EQ(tls.ca_directory, "/etc/certs");
    EXPECT_EQ(tls.certificate_file, "/c.pem");
    EXPECT_EQ(tls.private_key_file, "/k.pem");
    EXPECT_EQ(tls.server_name, "redis.internal");
    EXPECT_FALSE(tls.dangerously_skip_verification) << "verification stays on by default";

    for (const char* command : {"acquire", "release", "extend", "run", "status", "demo"}) {
        auto insecure = parse({command, "--tls-insecure-skip-verify"}, error);
        ASSERT_TRUE(insecure) << command << ": " << error;
        EXPECT_TRUE(redlock::cli::make_config(*insecure).tls.dangerously_skip_verification);
    }

    EXPECT_FALSE(parse({"acquire", "--tls-cert", "/c.pem", "k"}, error));
    EXPECT_NE(error.find("--tls-key"), std::string::npos) << error;
    EXPECT_FALSE(parse({"acquire", "--tls-key", "/k.pem", "k"}, error));
    EXPECT_NE(error.find("--tls-cert"), std::string::npos) << error;
    EXPECT_FALSE(parse({"acquire", "--tls-ca"}, error));
    EXPECT_NE(error.find("needs a value"), std::string::npos) << error;
    EXPECT_FALSE(parse({"acquire", "--tls-server-name", "", "k"}, error));
    EXPECT_NE(error.find("non-empty"), std::string::npos) << error;
}

/// A file in the test's temporary directory, removed at the end.
class temporary_file {
public:
    explicit temporary_file(const std::string& content, mode_t mode = 0600)
        : path_(::testing::TempDir() + "redlock_cli_" + std::to_string(::getpid()) + "_" +
                std::to_string(counter_++)) {
        std::ofstream(path_, std::ios::binary) << content;
        ::chmod(path_.c_str(), mode);
    }
    ~temporary_file() { std::remove(path_.c_str()); }
    temporary_file(const temporary_file&) = delete;
    temporary_file& operator=(const temporary_file&) = delete;
    const std::string& path() const { return path_; }

private:
    static inline int counter_ = 0;
    std::string path_;
};

using redlock::test::parsed_address;

TEST(cli_options, tls_files_must_be_readable) {
    const temporary_file ca("-----BEGIN CERTIFICATE-----\n");
    std::string error;
    auto ok = parse({"acquire", "--tls-ca", ca.path().c_str(), "--tls-ca-dir",
                     ::testing::TempDir().c_str(), "k"},
                    error);
    ASSERT_TRUE(ok);
    EXPECT_TRUE(cli::load_credentials(*ok, nullptr, error)) << error;

    auto missing = parse({"acquire", "--tls-ca", "/nonexistent/ca.pem", "k"}, error);
    ASSERT_TRUE(missing);
    EXPECT_FALSE(cli::load_credentials(*missing, nullptr, error));
    EXPECT_NE(error.find("--tls-ca /nonexistent/ca.pem: No such file"), std::string::npos) << error;

    auto file_as_dir = parse({"acquire", "--tls-ca-dir", ca.path().c_str(), "k"}, error);
    ASSERT_TRUE(file_as_dir);
    EXPECT_FALSE(cli::load_credentials(*file_as_dir, nullptr, error));
    EXPECT_NE(error.find("not a directory"), std::string::npos) << error;

    auto dir_as_key = parse({"acquire", "--tls-cert", ca.path().c_str(), "--tls-key",
                             ::testing::TempDir().c_str(), "k"},
                            error);
    ASSERT_TRUE(dir_as_key);
    EXPECT_FALSE(cli::load_credentials(*dir_as_key, nullptr, error));
    EXPECT_NE(error.find("--tls-key"), std::string::npos) << error;
}

TEST(cli_options, password_from_the_environment_fills_nodes_without_one) {
    std::string error;
    auto o = parse({"acquire", "k"}, error,
                   "h1:7001,redis://other@h2:7002/3,redis://locker@h3:7003,"
                   "rediss://h4:7004,unix:///run/r.sock?db=2,[::1]:7006");
    ASSERT_TRUE(o);
    ASSERT_TRUE(cli::load_credentials(*o, "pw-7f3a9c-SECRET", error)) << error;
    const auto h1 = parsed_address(o->nodes[0]);
    EXPECT_EQ(h1.password, "pw-7f3a9c-SECRET");
    EXPECT_EQ(h1.user, "");
    EXPECT_EQ(h1.display(), "h1:7001");
    EXPECT_EQ(parsed_address(o->nodes[1]).password, "other") << "an address's own password stays";
    EXPECT_EQ(parsed_address(o->nodes[1]).db, 3);
    EXPECT_EQ(parsed_address(o->nodes[2]).password, "locker")
        << "redis://x@host is a password, as for redis-cli";
    const auto h4 = parsed_address(o->nodes[3]);
    EXPECT_TRUE(h4.tls);
    EXPECT_EQ(h4.password, "pw-7f3a9c-SECRET");
    const auto socket = parsed_address(o->nodes[4]);
    EXPECT_EQ(socket.path, "/run/r.sock");
    EXPECT_EQ(socket.db, 2);
    EXPECT_EQ(socket.password, "pw-7f3a9c-SECRET");
    EXPECT_EQ(parsed_address(o->nodes[5]).host, "::1");
    EXPECT_EQ(parsed_address(o->nodes[5]).password, "pw-7f3a9c-SECRET");

    auto acl_user = parse({"acquire", "k"}, error, "redis://locker:@h1:7001/2");
    ASSERT_TRUE(cli::load_credentials(*acl_user, "pw-7f3a9c-SECRET", error)) << error;
    const auto locker = parsed_address(acl_user->nodes[0]);
    EXPECT_EQ(locker.user, "locker") << "redis://user:@host names the user, not the password";
    EXPECT_EQ(locker.password, "pw-7f3a9c-SECRET");
    EXPECT_EQ(locker.db, 2);

    auto none = parse({"acquire", "k"}, error, "h1:7001");
    ASSERT_TRUE(cli::load_credentials(*none, "", error));
    EXPECT_EQ(none->nodes[0], "h1:7001") << "an empty $REDLOCK_PASSWORD means none";
}

TEST(cli_options, any_password_survives_the_address_round_trip) {
    for (const std::string& password :
         {std::string("p@ss:w/o?r#d&x=y%41"), std::string("tab\there"), std::string("\xff\x01"),
          std::string(cli::max_password_size, 'x')}) {
        for (const char* node : {"h:1", "rediss://h:1/4", "unix:///s.sock?user=u&db=5",
                                 "redis-sentinel://s1,s2:26380/3?sentinel_password=w#orders",
                                 "rediss-sentinel://u:@s1#orders"}) {
            const auto a = parsed_address(cli::with_password(node, password));
            EXPECT_EQ(a.password, password) << node;
            EXPECT_TRUE(a.same_server(parsed_address(node))) << node;
            EXPECT_EQ(a.db, parsed_address(node).db) << node;
            EXPECT_EQ(a.user, parsed_address(node).user) << node;
            EXPECT_EQ(a.tls, parsed_address(node).tls) << node;
        }
    }
}

TEST(cli_options, password_file_first_line_and_its_errors) {
    const temporary_file good("pw-7f3a9c-SECRET\nsecond line\n");
    const temporary_file crlf("pw-7f3a9c-SECRET\r\n");
    const temporary_file no_newline("pw-7f3a9c-SECRET");
    for (const auto* file : {&good, &crlf, &no_newline}) {
        std::string error;
        auto o = parse({"acquire", "--password-file", file->path().c_str(), "k"}, error, "h:1");
        ASSERT_TRUE(o) << error;
        ASSERT_TRUE(cli::load_credentials(*o, "from-the-environment", error)) << error;
        EXPECT_EQ(parsed_address(o->nodes[0]).password, "pw-7f3a9c-SECRET")
            << "the file wins over $REDLOCK_PASSWORD";
    }

    const temporary_file empty("");
    const temporary_file empty_line("\npw-7f3a9c-SECRET\n");
    const temporary_file too_long(std::string(cli::max_password_size + 1, 'x') + "\n");
    const temporary_file unreadable("pw-7f3a9c-SECRET\n", 0000);
    struct bad_case {
        std::string path;
        const char* says;
    };
    std::vector<bad_case> cases{{empty.path(), "empty"},
                                {empty_line.path(), "empty"},
                                {too_long.path(), "longer than"},
                                {"/nonexistent/password", "No such file"},
                                {::testing::TempDir(), "directory"}};
    if (::geteuid() != 0) { // root reads whatever the mode says
        cases.push_back({unreadable.path(), "Permission denied"});
    }
    for (const auto& c : cases) {
        std::string error;
        auto o = parse({"acquire", "--password-file", c.path.c_str(), "k"}, error, "h:1");
        ASSERT_TRUE(o) << error;
        EXPECT_FALSE(cli::load_credentials(*o, nullptr, error)) << c.path;
        EXPECT_NE(error.find("--password-file " + c.path), std::string::npos) << error;
        EXPECT_NE(error.find(c.says), std::string::npos) << error;
        EXPECT_EQ(error.find("pw-7f3a9c-SECRET"), std::string::npos) << error;
    }
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
    EXPECT_EQ(cli::exit_for(errc::fencing_counter_refused), cli::exit_data);
    EXPECT_EQ(cli::exit_for(errc::invalid_argument), cli::exit_usage);
    EXPECT_EQ(cli::exit_for(errc::cancelled), cli::exit_internal);
    EXPECT_EQ(cli::exit_for(errc::nodes_quarantined), cli::exit_not_acquired);
}

TEST(cli_options, conflict_exit_code_replaces_75_for_could_not_have_it_now_only) {
    using redlock::errc;
    for (const auto e : {errc::contention, errc::validity_expired, errc::nodes_quarantined}) {
        EXPECT_EQ(cli::exit_for(e, 3), 3) << redlock::make_error_code(e).message();
    }
    for (const auto e : {errc::quorum_unreachable, errc::lock_lost, errc::invalid_argument,
                         errc::lock_mismatch, errc::cancelled}) {
        EXPECT_EQ(cli::exit_for(e, 3), cli::exit_for(e)) << redlock::make_error_code(e).message();
    }
    std::string error;
    auto given = parse({"acquire", "-E", "3", "k"}, error);
    ASSERT_TRUE(given) << error;
    EXPECT_EQ(given->conflict_exit_code, 3U);
    auto long_form = parse({"run", "--conflict-exit-code=200", "k", "--", "true"}, error);
    ASSERT_TRUE(long_form) << error;
    EXPECT_EQ(long_form->conflict_exit_code, 200U);
    EXPECT_EQ(parse({"acquire", "k"}, error)->conflict_exit_code, 75U);
    for (const char* bad : {"0", "256", "-1", "x", ""}) {
        EXPECT_FALSE(parse({"acquire", "-E", bad, "k"}, error)) << bad;
        EXPECT_NE(error.find("1 to 255"), std::string::npos) << error;
    }
    EXPECT_FALSE(parse({"release", "-E", "3", "k", "t"}, error)) << "release takes no lock";
    EXPECT_FALSE(parse({"status", "-E", "3", "k"}, error));
}

} // namespace

namespace {

TEST(cli_options, run_takes_several_keys_before_the_double_dash) {
    std::string error;
    auto o = parse({"run", "b", "a", "c", "--", "make", "-j4"}, error);
    ASSERT_TRUE(o) << error;
    EXPECT_EQ(o->positional, (std::vector<std::string>{"b", "a", "c"}));
    EXPECT_EQ(o->child, (std::vector<std::string>{"make", "-j4"}));
    o = parse({"acquire", "a", "b"}, error);
    ASSERT_TRUE(o) << error;
    EXPECT_EQ(o->positional.size(), 2u);
}

TEST(cli_options, shared_and_permits_pick_the_lock_mode) {
    std::string error;
    auto o = parse({"run", "--shared", "k", "--", "true"}, error);
    ASSERT_TRUE(o) << error;
    EXPECT_EQ(cli::to_lock_options(*o).mode, redlock::lock_mode::shared);
    o = parse({"acquire", "--permits", "3", "k"}, error);
    ASSERT_TRUE(o) << error;
    EXPECT_EQ(cli::to_lock_options(*o).mode, redlock::lock_mode::permit);
    EXPECT_EQ(cli::to_lock_options(*o).permits, 3u);
    o = parse({"run", "k", "--", "true"}, error);
    ASSERT_TRUE(o) << error;
    EXPECT_EQ(cli::to_lock_options(*o).mode, redlock::lock_mode::exclusive)
        << "plain run is the writer";

    EXPECT_FALSE(parse({"run", "--shared", "--permits", "2", "k", "--", "true"}, error));
    EXPECT_NE(error.find("exclude each other"), std::string::npos) << error;
    EXPECT_FALSE(parse({"acquire", "--permits", "0", "k"}, error));
    EXPECT_NE(error.find("from 1 to"), std::string::npos) << error;
    EXPECT_FALSE(parse({"release", "--shared", "k", "t"}, error))
        << "release works on every kind of lock without being told";
    EXPECT_NE(error.find("does not apply to release"), std::string::npos) << error;
}

TEST(cli_options, force_goes_with_release_and_yes_with_force) {
    std::string error;
    auto o = parse({"release", "--force", "--yes", "k1", "k2"}, error);
    ASSERT_TRUE(o) << error;
    EXPECT_TRUE(o->force);
    EXPECT_TRUE(o->yes);
    EXPECT_FALSE(parse({"release", "--yes", "k", "t"}, error));
    EXPECT_NE(error.find("--yes goes with --force"), std::string::npos) << error;
    EXPECT_FALSE(parse({"acquire", "--force", "k"}, error));
    EXPECT_NE(error.find("does not apply to acquire"), std::string::npos) << error;
}

TEST(cli_options, each_subcommands_help_says_what_ttl_means_for_it) {
    const auto run = cli::help_text("run");
    EXPECT_NE(run.find("renewed every ttl/3 while COMMAND runs"), std::string::npos) << run;
    EXPECT_EQ(run.find("from now"), std::string::npos) << "that is extend's --ttl\n" << run;
    const auto acquire = cli::help_text("acquire");
    EXPECT_NE(acquire.find("nothing renews it"), std::string::npos) << acquire;
    EXPECT_EQ(acquire.find("ttl/3"), std::string::npos) << acquire;
    const auto extend = cli::help_text("extend");
    EXPECT_NE(extend.find("the new expiry, from now"), std::string::npos) << extend;
    EXPECT_EQ(extend.find("ttl/3"), std::string::npos) << extend;
}

} // namespace
