// The redlock command-line tool as a process: signalled while it waits, killed while its
// command runs, and what it hands that command.
#include "support/child_process.hpp"
#include "support/fixture.hpp"

#include <csignal>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sys/stat.h>

namespace redlock::test {
namespace {

using namespace std::chrono_literals;

const std::string tool = REDLOCK_CLI_PATH;
const std::string other_holder = "0123456789abcdef0123456789abcdef";

bool file_exists(const std::string& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0;
}

std::string scratch_path(const std::string& name) {
    return ::testing::TempDir() + "redlock_cli_process_" + std::to_string(::getpid()) + "_" + name;
}

/// Another client holds `key` on nodes 1-3: a quorum, so every attempt of ours fails, after
/// its SET was granted on nodes 4 and 5 and had to be cleaned up there.
void hold_on_a_majority(const std::string& key) {
    for (int node = 1; node <= 3; ++node) {
        ASSERT_EQ(inspector(node).run({"SET", key, other_holder, "PX", "60000"}), "OK");
    }
}

/// The other holder's token on nodes 1-3 and nothing else anywhere: none of our attempts
/// left a key behind.
void expect_only_the_other_holder(const std::string& key) {
    for (int node = 1; node <= 3; ++node) {
        EXPECT_EQ(inspector(node).get(key), other_holder) << "node " << node;
        EXPECT_EQ(inspector(node).dbsize(), 1) << "node " << node;
    }
    for (int node = 4; node <= 5; ++node) {
        EXPECT_TRUE(eventually([node] { return inspector(node).dbsize() == 0; }, 500ms))
            << "node " << node << " still holds " << inspector(node).get(key).value_or("?");
    }
}

struct interruption {
    int signal;
    int status;
};
constexpr interruption interruptions[] = {{SIGINT, 130}, {SIGTERM, 143}, {SIGHUP, 129}};

TEST_F(nodes_test, cli_run_interrupted_while_waiting_cleans_up_and_never_starts_the_command) {
    const std::string key = "cli:interrupted-run";
    for (const auto [number, expected] : interruptions) {
        hold_on_a_majority(key);
        const auto marker = scratch_path("marker");
        child_process run(
            {tool, "--no-quarantine", "run", "--wait", "20s", key, "--", "touch", marker});
        std::this_thread::sleep_for(700ms); // attempts and backoff sleeps under way
        run.signal(number);
        const auto status = run.wait(5s);
        ASSERT_TRUE(status) << "still waiting after " << ::strsignal(number);
        EXPECT_EQ(*status, expected) << ::strsignal(number) << "\n" << run.err();
        EXPECT_FALSE(file_exists(marker)) << "the command ran after " << ::strsignal(number);
        EXPECT_NE(run.err().find("interrupted"), std::string::npos) << run.err();
        expect_only_the_other_holder(key);
        std::remove(marker.c_str());
        topology::restore();
    }
}

TEST_F(nodes_test, cli_acquire_interrupted_while_waiting_cleans_up_and_prints_no_token) {
    const std::string key = "cli:interrupted-acquire";
    for (const auto [number, expected] : interruptions) {
        hold_on_a_majority(key);
        child_process acquire({tool, "--no-quarantine", "acquire", "--wait", "20s", key});
        std::this_thread::sleep_for(700ms);
        acquire.signal(number);
        const auto status = acquire.wait(5s);
        ASSERT_TRUE(status) << "still waiting after " << ::strsignal(number);
        EXPECT_EQ(*status, expected) << ::strsignal(number) << "\n" << acquire.err();
        EXPECT_EQ(acquire.out(), "") << "no token for a lock that was given up";
        expect_only_the_other_holder(key);
        topology::restore();
    }
}

TEST_F(nodes_test, cli_run_command_dies_with_redlock) {
    const auto pid_file = scratch_path("child.pid");
    std::remove(pid_file.c_str());
    child_process run({tool, "--no-quarantine", "run", "-t", "2s", "cli:orphan", "--", "sh", "-c",
                       "echo $$ > " + pid_file + ".tmp && mv " + pid_file + ".tmp " + pid_file +
                           " && exec sleep 60"});
    ASSERT_TRUE(eventually([&] { return file_exists(pid_file); }, 5s)) << run.err();
    const pid_t command = std::stoi(read_file(pid_file));
    std::remove(pid_file.c_str());
    EXPECT_FALSE(process_gone(command));
    run.signal(SIGKILL); // nothing of redlock gets to run: only the parent-death signal acts
    ASSERT_TRUE(run.wait(2s));
    EXPECT_TRUE(eventually([&] { return process_gone(command); }, 2s))
        << "the command outlived redlock, unprotected";
    if (!process_gone(command)) {
        ::kill(command, SIGKILL);
    }
}

/// An ACL user `locker` with `password` on every node, for as long as this lives.
class acl_user {
public:
    explicit acl_user(const std::string& password) {
        for (int node = 1; node <= static_cast<int>(topology::size()); ++node) {
            EXPECT_EQ(inspector(node).run(
                          {"ACL", "SETUSER", "locker", "on", ">" + password, "~*", "+@all"}),
                      "OK");
        }
    }
    ~acl_user() {
        for (int node = 1; node <= static_cast<int>(topology::size()); ++node) {
            inspector(node).run({"ACL", "DELUSER", "locker"});
        }
    }
    acl_user(const acl_user&) = delete;
    acl_user& operator=(const acl_user&) = delete;

    /// The nodes as `redis://locker:@host:port`: the user named, the password left out.
    static std::string nodes_without_password() {
        std::string list;
        for (const auto& node : topology::addresses()) {
            list += (list.empty() ? "" : ",") + std::string("redis://locker:@") + node;
        }
        return list;
    }
};

TEST_F(nodes_test, cli_run_keeps_the_node_list_and_the_password_out_of_the_commands_environment) {
    const std::string password = "pw-7f3a9c-SECRET";
    const acl_user user(password);
    const auto password_file = scratch_path("password");
    std::ofstream(password_file) << password << "\n";

    struct source {
        std::vector<std::string> flags;
        std::vector<std::string> environment;
    };
    for (const auto& from :
         {source{{}, {"REDLOCK_PASSWORD=" + password}},
          source{{"--password-file", password_file}, {"REDLOCK_PASSWORD=wrong-one"}}}) {
        std::vector<std::string> args{tool, "--no-quarantine"};
        args.insert(args.end(), from.flags.begin(), from.flags.end());
        args.insert(args.end(), {"run", "cli:env", "--", "env"});
        auto environment = from.environment;
        environment.push_back("REDLOCK_NODES=" + acl_user::nodes_without_password());
        child_process run(args, environment);
        ASSERT_EQ(run.wait(10s), 0) << "logged in as locker with the password\n" << run.err();
        const auto env = run.out();
        EXPECT_NE(env.find("REDLOCK_KEY=cli:env\n"), std::string::npos) << env;
        EXPECT_NE(env.find("REDLOCK_TOKEN="), std::string::npos) << env;
        EXPECT_EQ(env.find("REDLOCK_NODES"), std::string::npos) << env;
        EXPECT_EQ(env.find("REDLOCK_PASSWORD"), std::string::npos) << env;
        EXPECT_EQ(env.find(password), std::string::npos) << env;
        EXPECT_EQ(run.err().find(password), std::string::npos) << run.err();
    }
    std::remove(password_file.c_str());
    EXPECT_EQ(keys_everywhere(), 0);
}

// The command runs as redlock's user and could read /proc/<redlock>/environ, where the
// environment redlock started with (node list, password) stays for its whole life. Two
// defences, each checked: the values are overwritten once read (what root, which may read
// any process's environ, finds), and redlock is not dumpable, so that its own user (without
// CAP_SYS_PTRACE) cannot read the file at all.
TEST_F(nodes_test, cli_run_command_cannot_read_the_secrets_from_redlocks_environ) {
    const std::string password = "pw-7f3a9c-SECRET";
    const std::string in_nodes = "pw-in-nodes-4d2e";
    const acl_user user(password);
    // Nodes 1-4 with the password from REDLOCK_PASSWORD, node 5 with another in its address.
    ASSERT_EQ(inspector(5).run({"ACL", "SETUSER", "locker", "resetpass", ">" + in_nodes}), "OK");
    auto nodes = acl_user::nodes_without_password();
    nodes = nodes.substr(0, nodes.rfind(',')) + ",redis://locker:" + in_nodes + "@" +
            topology::addresses().back();
    const std::vector<std::string> environment{"REDLOCK_PASSWORD=" + password,
                                               "REDLOCK_NODES=" + nodes};
    const std::string read_parent =
        "if tr '\\0' '\\n' < /proc/$PPID/environ; then echo READ; else echo REFUSED; fi";
    {
        child_process run(
            {tool, "--no-quarantine", "run", "cli:environ", "--", "sh", "-c", read_parent},
            environment);
        ASSERT_EQ(run.wait(10s), 0) << run.err();
        const auto seen = run.out();
        EXPECT_NE(seen.find("READ"), std::string::npos) << "root reads it\n" << seen;
        EXPECT_NE(seen.find("REDLOCK_PASSWORD=****************\n"), std::string::npos) << seen;
        EXPECT_EQ(seen.find(password), std::string::npos) << seen;
        EXPECT_EQ(seen.find(in_nodes), std::string::npos) << seen;
    }
    {
        // redlock and its command as one unprivileged user, the case that matters: root
        // bypasses the check (CAP_SYS_PTRACE, and on this kernel CAP_SYS_ADMIN or
        // CAP_PERFMON too).
        child_process run({"setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                           "--inh-caps=-all", "--bounding-set=-all", tool, "--no-quarantine", "run",
                           "cli:environ", "--", "sh", "-c", read_parent},
                          environment);
        ASSERT_EQ(run.wait(10s), 0) << run.err();
        EXPECT_NE(run.out().find("REFUSED"), std::string::npos)
            << "the same user reads a non-dumpable process's environ\n"
            << run.out();
        EXPECT_EQ(run.out().find("REDLOCK_"), std::string::npos) << run.out();
    }
    EXPECT_EQ(keys_everywhere(), 0);
}

TEST_F(nodes_test, cli_run_hands_no_redis_socket_to_its_command) {
    // While the command runs, redlock holds a connection to every node (its watchdog renews
    // over them); none of them may reach the command. The command lists its own fds.
    child_process run({tool, "--no-quarantine", "run", "cli:fds", "--", "sh", "-c",
                       "for f in /proc/$$/fd/*; do echo \"$f -> $(readlink \"$f\")\"; done"});
    ASSERT_EQ(run.wait(10s), 0) << run.err();
    const auto fds = run.out();
    EXPECT_NE(fds.find("/fd/1 -> "), std::string::npos) << "the listing ran:\n" << fds;
    EXPECT_EQ(fds.find("socket:"), std::string::npos) << "a socket leaked to the command:\n" << fds;
    EXPECT_EQ(keys_everywhere(), 0);
}

// A distinct ACL user and password per node, from a file: none of them in argv or in the
// environment, each sent to its own node only.
TEST_F(nodes_test, cli_node_credentials_give_each_node_its_own_user_and_password) {
    const auto file = scratch_path("node-credentials");
    {
        std::ofstream out(file);
        out << "# ADDRESS [USER] PASSWORD\n\n";
        for (int node = 1; node <= static_cast<int>(topology::size()); ++node) {
            const auto user = "locker" + std::to_string(node);
            const auto password = "pw-node-" + std::to_string(node) + "-7f3a";
            ASSERT_EQ(
                inspector(node).run({"ACL", "SETUSER", user, "on", ">" + password, "~*", "+@all"}),
                "OK");
            // Node 5: the user named in the node list, the password alone in the file.
            out << "  " << topology::addresses()[node - 1] << "\t" << (node == 5 ? "" : user + " ")
                << password << "\n";
        }
    }
    auto nodes = topology::addresses();
    nodes[4] = "redis://locker5:@" + nodes[4];
    std::string list;
    for (const auto& node : nodes) {
        list += (list.empty() ? "" : ",") + node;
    }
    // Only these users may run commands while the default user has no rights: a client
    // that is not logged in as each node's own user is refused there. Restored (and the
    // users deleted) through connections logged in as those users, whatever happens.
    class lock_down {
    public:
        lock_down() {
            for (int node = 1; node <= static_cast<int>(topology::size()); ++node) {
                auto& as = owners_.emplace_back(std::make_unique<inspector>(node));
                EXPECT_EQ(as->run({"AUTH", "locker" + std::to_string(node),
                                   "pw-node-" + std::to_string(node) + "-7f3a"}),
                          "OK");
                EXPECT_EQ(as->run({"ACL", "SETUSER", "default", "-@all"}), "OK");
            }
        }
        ~lock_down() {
            for (std::size_t i = 0; i < owners_.size(); ++i) {
                owners_[i]->run({"ACL", "SETUSER", "default", "+@all"});
                owners_[i]->run({"ACL", "DELUSER", "locker" + std::to_string(i + 1)});
            }
        }
        lock_down(const lock_down&) = delete;
        lock_down& operator=(const lock_down&) = delete;

    private:
        std::vector<std::unique_ptr<inspector>> owners_;
    };
    std::optional<lock_down> locked(std::in_place);
    for (const auto& [flags, environment] :
         std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>>{
             {{"--node-credentials", file}, {"REDLOCK_NODES=" + list}},
             {{}, {"REDLOCK_NODES=" + list, "REDLOCK_NODE_CREDENTIALS_FILE=" + file}}}) {
        std::vector<std::string> args{tool, "--no-quarantine"};
        args.insert(args.end(), flags.begin(), flags.end());
        args.insert(args.end(), {"run", "cli:per-node", "--", "true"});
        child_process run(args, environment);
        EXPECT_EQ(run.wait(10s), 0) << run.err();
    }
    {
        // Without the file: the default user, refused on every node.
        child_process run({tool, "--no-quarantine", "acquire", "cli:per-node"},
                          {"REDLOCK_NODES=" + topology::addresses()[0]});
        EXPECT_EQ(run.wait(10s), 69) << run.err();
    }
    locked.reset();
    std::remove(file.c_str());
    EXPECT_EQ(keys_everywhere(), 0);
}

TEST_F(nodes_test, cli_node_credentials_errors_name_the_line_never_the_password) {
    const auto file = scratch_path("bad-credentials");
    const std::string secret = "pw-7f3a9c-SECRET";
    const auto node = topology::addresses()[0];
    struct bad {
        std::string text;
        std::string says;
    };
    for (const auto& [text, says] : std::vector<bad>{
             {"# ok\n" + node + " " + secret + "\n" + node + " u " + secret + "\n",
              "line 3: a second line for " + node},
             {"\n" + node + "\n", "line 2: expected ADDRESS [USER] PASSWORD, found 1 fields"},
             {node + " u " + secret + " extra\n", "line 1: expected ADDRESS [USER] PASSWORD"},
             {"127.0.0.1:1 " + secret + "\n", "line 1: 127.0.0.1:1 is not in the node list"},
             {node + " " + secret + "\n127.0.0.1:2 " + secret + "\n127.0.0.1:3 a b c\n",
              "line 3: expected ADDRESS [USER] PASSWORD, found 4 fields"},
             {"redis://u:" + secret + "@" + node + " " + secret + "\n",
              "line 1: the address holds credentials"},
             {"127.0.0.1:99999 " + secret + "\n", "line 1: the address: "}}) {
        std::ofstream(file) << text;
        child_process run({tool, "--node-credentials", file, "acquire", "k"},
                          {"REDLOCK_NODES=" + node + ",127.0.0.1:2,127.0.0.1:3"});
        EXPECT_EQ(run.wait(5s), 64) << run.err();
        EXPECT_NE(run.err().find("--node-credentials " + file + " " + says), std::string::npos)
            << run.err();
        EXPECT_EQ(run.err().find(secret), std::string::npos) << run.err();
    }
    std::remove(file.c_str());
    child_process missing({tool, "--node-credentials", "/nonexistent/c", "acquire", "k"});
    EXPECT_EQ(missing.wait(5s), 64);
    EXPECT_NE(missing.err().find("No such file or directory"), std::string::npos) << missing.err();
}

TEST_F(nodes_test, cli_warns_once_about_a_password_file_others_may_read) {
    const auto file = scratch_path("shared-password");
    std::ofstream(file) << "pw-7f3a9c-SECRET\n";
    for (const auto& [mode, warning] : std::vector<std::pair<mode_t, std::string>>{
             {0644, "may be read by every user"}, {0640, "may be read by its group"}, {0600, ""}}) {
        ASSERT_EQ(::chmod(file.c_str(), mode), 0);
        child_process run({tool, "--password-file", file, "--nodes", "127.0.0.1:1", "acquire", "-t",
                           "1s", "--node-timeout", "100ms", "cli:k"});
        run.wait(10s);
        const auto err = run.err();
        const auto count = [&err](const std::string& what) {
            std::size_t n = 0;
            for (auto at = err.find(what); at != std::string::npos; at = err.find(what, at + 1)) {
                ++n;
            }
            return n;
        };
        if (warning.empty()) {
            EXPECT_EQ(count("warning:"), 0u) << err;
        } else {
            EXPECT_EQ(count("redlock: warning: --password-file " + file + " " + warning), 1u)
                << err;
        }
        EXPECT_EQ(err.find("pw-7f3a9c-SECRET"), std::string::npos) << err;
    }
    std::remove(file.c_str());
}

TEST_F(nodes_test, cli_run_refuses_a_key_with_a_newline) {
    const auto marker = scratch_path("ran");
    child_process run({tool, "--no-quarantine", "run", "cli:a\nb", "cli:c", "--", "touch", marker});
    EXPECT_EQ(run.wait(10s), 64) << run.err();
    EXPECT_NE(run.err().find("newline"), std::string::npos) << run.err();
    EXPECT_FALSE(file_exists(marker)) << "the command never ran";
    std::remove(marker.c_str());
    EXPECT_EQ(keys_everywhere(), 0);
}

TEST_F(nodes_test, cli_password_file_errors_are_usage_errors) {
    child_process missing({tool, "--password-file", "/nonexistent/pw", "acquire", "k"});
    EXPECT_EQ(missing.wait(5s), 64);
    EXPECT_NE(missing.err().find("--password-file /nonexistent/pw: No such file or directory"),
              std::string::npos)
        << missing.err();
    const auto empty_file = scratch_path("empty");
    std::ofstream(empty_file) << "\n";
    child_process empty({tool, "--password-file", empty_file, "acquire", "k"});
    EXPECT_EQ(empty.wait(5s), 64);
    EXPECT_NE(empty.err().find("empty"), std::string::npos) << empty.err();
    std::remove(empty_file.c_str());
    EXPECT_EQ(keys_everywhere(), 0);
}

TEST_F(nodes_test, cli_takes_fractional_durations_in_either_option_form) {
    for (const auto& ttl :
         std::vector<std::vector<std::string>>{{"--ttl=1.5s"}, {"-t", "0.025m"}}) {
        std::vector<std::string> args{tool, "--no-quarantine", "acquire"};
        args.insert(args.end(), ttl.begin(), ttl.end());
        args.push_back("cli:fractional");
        child_process acquire(args);
        ASSERT_EQ(acquire.wait(5s), 0) << ttl[0] << "\n" << acquire.err();
        long long longest = 0; // a node may not have answered yet, a majority has
        for (int node = 1; node <= 5; ++node) {
            longest = std::max(longest, inspector(node).pttl("cli:fractional"));
        }
        EXPECT_GT(longest, 1000) << ttl[0];
        EXPECT_LE(longest, 1500) << ttl[0];
        for (int node = 1; node <= 5; ++node) {
            inspector(node).run({"DEL", "cli:fractional"});
        }
    }
}

TEST(cli_command_line, version_prints_the_version_and_exits_0) {
    for (const char* flag : {"--version", "-V"}) {
        child_process version({tool, flag});
        EXPECT_EQ(version.wait(5s), 0) << flag;
        EXPECT_TRUE(
            std::regex_match(version.out(), std::regex("redlock [0-9]+\\.[0-9]+\\.[0-9]+\n")))
            << version.out();
        EXPECT_EQ(version.err(), "");
    }
}

TEST(cli_command_line, help_of_a_subcommand_lists_its_options) {
    for (const std::vector<std::string>& args : {std::vector<std::string>{tool, "help", "run"},
                                                 std::vector<std::string>{tool, "run", "--help"}}) {
        child_process help(args);
        EXPECT_EQ(help.wait(5s), 0);
        EXPECT_NE(help.out().find("usage: redlock run [options] KEY... -- COMMAND"),
                  std::string::npos)
            << help.out();
        EXPECT_NE(help.out().find("--grace DUR"), std::string::npos) << help.out();
        EXPECT_EQ(help.out().find("--buyers"), std::string::npos) << "demo's, not run's";
    }
}

TEST(cli_command_line, usage_errors_exit_64_and_say_what_to_write) {
    // The command is not run: a marker it would create stays absent.
    const auto marker = scratch_path("never-created");
    child_process run({tool, "run", "cli:no-separator", "touch", marker});
    EXPECT_EQ(run.wait(5s), 64);
    EXPECT_EQ(run.err(),
              "redlock: put -- before the command: redlock run cli:no-separator -- touch " +
                  marker + "\n");
    EXPECT_FALSE(file_exists(marker));

    child_process inapplicable({tool, "release", "--ttl", "5s", "k", other_holder});
    EXPECT_EQ(inapplicable.wait(5s), 64);
    EXPECT_NE(inapplicable.err().find("--ttl does not apply to release"), std::string::npos)
        << inapplicable.err();
}

TEST(cli_node_list, a_unix_socket_path_longer_than_sun_path_is_a_usage_error_that_says_so) {
    const std::string too_long = "unix:///tmp/" + std::string(120, 'r') + ".sock";
    for (const char* command : {"status", "acquire"}) {
        child_process p({tool, "--nodes", too_long, command, "k"});
        EXPECT_EQ(p.wait(5s), 64) << command;
        EXPECT_NE(p.err().find("nodes[0]: unix socket path is 130 bytes long, over the system's "
                               "limit of 107"),
                  std::string::npos)
            << command << ": " << p.err();
    }
}

} // namespace
} // namespace redlock::test
