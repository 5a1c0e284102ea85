#include "cli/options.hpp"

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"

#include <redlock/error.hpp>
#include <redlock/node_address.hpp>

#include <gtest/gtest.h>

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
    EXPECT_EQ(duration("7", why), 7s) << "a bare number is seconds, like flock -w";
    EXPECT_EQ(duration("0", why), 0ms);
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
    EXPECT_EQ(duration("1.5", why), 1500ms) << "a bare number is seconds, fractions too";
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
             {"5sec", "unknown unit \"sec\""},
             {"5S", "unknown unit \"S\""},
             {"nan", "not a duration"},
             {"inf", "not a duration"},
             {"NaNs", "not a duration"},
             {"1e3s", "exponent"},
             {"1.5E2ms", "exponent"},
             {"2e-3s", "exponent"},
             {"-1s", "negative"},
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

TEST(cli_options, durations_past_the_limit_are_usage_errors_not_wrapped) {
    // Each parses as a number of milliseconds that fits 64 bits, but would overflow a
    // steady_clock time point (nanoseconds) once added to now.
    for (const char* flag : {"--ttl", "--wait", "--grace", "--node-timeout"}) {
        for (const char* value :
             {"3000000h", "99999999999999s", "9223372036854775807ms", "2147483648ms", "597h"}) {
            std::string error;
            EXPECT_FALSE(parse({"run", flag, value, "k", "--", "true"}, error))
                << flag << " " << value;
            EXPECT_NE(error.find(flag), std::string::npos) << error;
        }
        std::string error;
        auto longest = parse({"run", flag, "2147483647ms", "k", "--", "true"}, error);
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

redlock::node_address address(const std::string& text) {
    redlock::node_address a;
    std::string why;
    EXPECT_FALSE(redlock::parse_node_address(text, a, why)) << why;
    return a;
}

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
    const auto h1 = address(o->nodes[0]);
    EXPECT_EQ(h1.password, "pw-7f3a9c-SECRET");
    EXPECT_EQ(h1.user, "");
    EXPECT_EQ(h1.display(), "h1:7001");
    EXPECT_EQ(address(o->nodes[1]).password, "other") << "an address's own password stays";
    EXPECT_EQ(address(o->nodes[1]).db, 3);
    EXPECT_EQ(address(o->nodes[2]).password, "locker")
        << "redis://x@host is a password, as for redis-cli";
    const auto h4 = address(o->nodes[3]);
    EXPECT_TRUE(h4.tls);
    EXPECT_EQ(h4.password, "pw-7f3a9c-SECRET");
    const auto socket = address(o->nodes[4]);
    EXPECT_EQ(socket.path, "/run/r.sock");
    EXPECT_EQ(socket.db, 2);
    EXPECT_EQ(socket.password, "pw-7f3a9c-SECRET");
    EXPECT_EQ(address(o->nodes[5]).host, "::1");
    EXPECT_EQ(address(o->nodes[5]).password, "pw-7f3a9c-SECRET");

    auto acl_user = parse({"acquire", "k"}, error, "redis://locker:@h1:7001/2");
    ASSERT_TRUE(cli::load_credentials(*acl_user, "pw-7f3a9c-SECRET", error)) << error;
    const auto locker = address(acl_user->nodes[0]);
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
        for (const char* node : {"h:1", "rediss://h:1/4", "unix:///s.sock?user=u&db=5"}) {
            const auto a = address(cli::with_password(node, password));
            EXPECT_EQ(a.password, password) << node;
            EXPECT_TRUE(a.same_server(address(node))) << node;
            EXPECT_EQ(a.db, address(node).db) << node;
            EXPECT_EQ(a.user, address(node).user) << node;
            EXPECT_EQ(a.tls, address(node).tls) << node;
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
        EXPECT_EQ(address(o->nodes[0]).password, "pw-7f3a9c-SECRET")
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
    EXPECT_EQ(cli::exit_for(errc::invalid_argument), cli::exit_usage);
    EXPECT_EQ(cli::exit_for(errc::cancelled), cli::exit_internal);
}

} // namespace
