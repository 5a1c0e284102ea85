// No password ever appears in an error, an exception, a log line, a vote, a metrics label,
// or anything the command-line tool prints. Every path is exercised with one distinctive
// password, which is then searched for in everything it produced.
#include "support/child_process.hpp"
#include "support/fixture.hpp"
#include "support/hostile_server.hpp"

#include <fstream>
#include <mutex>

namespace redlock::test {
namespace {

using namespace std::chrono_literals;

const std::string secret = "pw-7f3a9c-SECRET";

/// Everything a client said, gathered for the search.
class transcript {
public:
    logger log() {
        return [this](log_level, std::string_view line) {
            std::lock_guard guard(mutex_);
            text_ += "log: " + std::string(line) + "\n";
            ++lines_;
        };
    }
    void add(const std::string& what, const std::string& text) {
        std::lock_guard guard(mutex_);
        text_ += what + ": " + text + "\n";
    }
    void add(const std::string& what, std::error_code ec, const std::string& message,
             const std::vector<node_vote>& votes) {
        add(what, ec.message() + "; " + message);
        for (const auto& vote : votes) {
            add(what + " vote", vote.error.message() + " (" + vote.server_message + ")");
        }
    }
    std::string text() const {
        std::lock_guard guard(mutex_);
        return text_;
    }
    std::size_t log_lines() const {
        std::lock_guard guard(mutex_);
        return lines_;
    }

private:
    mutable std::mutex mutex_;
    std::string text_;
    std::size_t lines_ = 0;
};

/// An ACL user `locker` whose password is `password` on every node, while this lives.
class locker_user {
public:
    explicit locker_user(const std::string& password) {
        for (int node = 1; node <= static_cast<int>(topology::size()); ++node) {
            EXPECT_EQ(inspector(node).run(
                          {"ACL", "SETUSER", "locker", "on", ">" + password, "~*", "+@all"}),
                      "OK");
        }
    }
    ~locker_user() {
        for (int node = 1; node <= static_cast<int>(topology::size()); ++node) {
            inspector(node).run({"ACL", "DELUSER", "locker"});
        }
    }
    locker_user(const locker_user&) = delete;
    locker_user& operator=(const locker_user&) = delete;
};

std::vector<std::string> nodes_as(const std::string& prefix) {
    std::vector<std::string> nodes;
    for (const auto& node : topology::addresses()) {
        nodes.push_back(prefix + node);
    }
    return nodes;
}

std::string joined(const std::vector<std::string>& nodes) {
    std::string list;
    for (const auto& node : nodes) {
        list += (list.empty() ? "" : ",") + node;
    }
    return list;
}

TEST(secrets, invalid_configurations_never_show_the_password) {
    const std::vector<std::vector<std::string>> bad_node_lists{
        {"redis://locker:" + secret + "@127.0.0.1:7001",
         "redis://locker:" + secret + "@127.0.0.1:7001/2"},
        {"redis://locker:" + secret + "@127.0.0.1:99999"},
        {"redis://locker:" + secret + "/x@127.0.0.1:7001"},
        {"redis://" + secret + "@bad host:1"},
        {"unix:///" + std::string(150, 'a') + "?password=" + secret},
        {"unix:///r.sock?password=" + secret + "&color=blue"},
        {"unix:///r.sock?password=" + secret + "&db=" + secret},
    };
    for (const auto& nodes : bad_node_lists) {
        client_config c;
        c.nodes = nodes;
        try {
            blocking_client client(c);
            ADD_FAILURE() << "accepted " << nodes[0].substr(0, 20);
        } catch (const std::system_error& e) {
            EXPECT_EQ(e.code(), errc::invalid_argument);
            EXPECT_NE(std::string(e.what()).find("nodes["), std::string::npos) << e.what();
            EXPECT_EQ(std::string(e.what()).find(secret), std::string::npos) << e.what();
        }
    }
    client_config slow;
    slow.nodes = {"redis://locker:" + secret + "@127.0.0.1:7001"};
    slow.connect_timeout = 0ms;
    try {
        boost::asio::io_context io;
        client refused(io.get_executor(), slow);
        ADD_FAILURE() << "a zero connect_timeout was accepted";
    } catch (const std::system_error& e) {
        EXPECT_EQ(std::string(e.what()).find(secret), std::string::npos) << e.what();
    }
}

TEST_F(nodes_test, failed_logins_never_show_the_password_in_votes_logs_or_metrics) {
    const locker_user user("the-right-one");
    auto c = config();
    // Nodes 1-3: the wrong password for the user. Nodes 4-5: a password for a default user
    // that has none.
    c.nodes = nodes_as("redis://locker:" + secret + "@");
    for (std::size_t node = 3; node < c.nodes.size(); ++node) {
        c.nodes[node] = "redis://" + secret + "@" + topology::addresses()[node];
    }
    transcript said;
    c.log = said.log();
    auto metrics = std::make_shared<prometheus_metrics>(c.nodes);
    c.metrics = metrics;
    {
        blocking_client client(c);
        std::error_code ec;
        auto r = client.acquire("secrets:denied", options(), ec);
        EXPECT_EQ(ec, errc::quorum_unreachable);
        said.add("acquire", ec, r.message, r.votes);
        lock forged("secrets:denied", "0123456789abcdef0123456789abcdef", lock::clock::now() + 10s,
                    options());
        auto released = client.release(forged, ec);
        said.add("release", ec, released.message, released.votes);
        auto extended = client.extend(forged, 5s, ec);
        said.add("extend", ec, extended.message, extended.votes);
    }
    said.add("metrics", metrics->render());
    const auto text = said.text();
    EXPECT_EQ(text.find(secret), std::string::npos) << text;
    // The search found something to search: the refusals and the node labels are there.
    EXPECT_GT(said.log_lines(), 0u);
    EXPECT_NE(text.find("WRONGPASS"), std::string::npos) << text;
    EXPECT_NE(text.find("without any password configured"), std::string::npos) << text;
    EXPECT_NE(text.find("node=\"" + topology::addresses()[0] + "\""), std::string::npos) << text;
    EXPECT_EQ(keys_everywhere(), 0);
}

TEST_F(nodes_test, a_whole_life_cycle_with_a_password_never_shows_it) {
    const locker_user user(secret);
    auto c = config();
    c.nodes = nodes_as("redis://locker:" + secret + "@");
    transcript said;
    c.log = said.log();
    auto metrics = std::make_shared<prometheus_metrics>(c.nodes);
    c.metrics = metrics;
    topology::stop(5); // connection failures are logged and voted too
    {
        blocking_client client(c);
        std::error_code ec;
        auto r = client.acquire("secrets:held", options(), ec);
        ASSERT_FALSE(ec) << r.message;
        said.add("acquire", ec, r.message, r.votes);
        auto contended = client.acquire("secrets:held", options(), ec);
        said.add("contended", ec, contended.message, contended.votes);
        auto extended = client.extend(r.lock, 20s, ec);
        said.add("extend", ec, extended.message, extended.votes);
        auto released = client.release(extended.lock, ec);
        said.add("release", ec, released.message, released.votes);
    }
    said.add("metrics", metrics->render());
    topology::restore(); // node 5 back, for the user's removal
    const auto text = said.text();
    EXPECT_EQ(text.find(secret), std::string::npos) << text;
    EXPECT_GT(said.log_lines(), 0u);
    EXPECT_NE(text.find(topology::addresses()[4]), std::string::npos)
        << "the stopped node is named, by host:port\n"
        << text;
}

// A node that repeats the password it was sent (`-WRONGPASS the password <pw> is wrong`):
// the password is cut from its text before the text reaches a vote, a log line, a status
// view or a metrics label. Nodes 1-4 are honest and share the password with it.
TEST_F(nodes_test, a_node_that_echoes_the_password_never_gets_it_shown) {
    const locker_user user(secret);
    hostile_server echo(hostile_server::mode::echoes_password);
    auto c = config();
    c.nodes = nodes_as("redis://locker:" + secret + "@");
    c.nodes.back() = "redis://locker:" + secret + "@" + echo.address();
    transcript said;
    c.log = said.log();
    auto metrics = std::make_shared<prometheus_metrics>(c.nodes);
    c.metrics = metrics;
    {
        blocking_client client(c);
        std::error_code ec;
        // Nodes 1 and 2 hold the key for someone else: the echoing node's vote is waited for.
        for (int node : {1, 2}) {
            inspector(node).run({"SET", "secrets:echo", "someone-else", "PX", "20000"});
        }
        auto contended = client.acquire("secrets:echo", options(), ec);
        said.add("acquire", ec, contended.message, contended.votes);
        auto seen = client.inspect("secrets:echo", ec);
        said.add("inspect", seen.message);
        for (const auto& view : seen.nodes) {
            said.add("inspect node", view.message + " " + view.pttl_message);
        }
    }
    said.add("metrics", metrics->render());
    const auto text = said.text();
    EXPECT_EQ(text.find(secret), std::string::npos) << text;
    // It did echo it, and what it said is there with the password cut out.
    EXPECT_NE(text.find("WRONGPASS the password *** is wrong"), std::string::npos) << text;
    bool echoed = false;
    for (const auto& command : echo.received()) {
        echoed = echoed || command.args.back() == secret;
    }
    EXPECT_TRUE(echoed) << "the client sent the password to the echoing node";
    for (int node : {1, 2}) {
        inspector(node).run({"DEL", "secrets:echo"});
    }
    EXPECT_TRUE(eventually([] { return keys_everywhere() == 0; }));
}

struct cli_run {
    std::optional<int> status;
    std::string output; ///< stdout and stderr
};

cli_run redlock(const std::vector<std::string>& args,
                const std::vector<std::string>& environment = {}) {
    std::vector<std::string> argv{REDLOCK_CLI_PATH, "--no-quarantine"};
    argv.insert(argv.end(), args.begin(), args.end());
    child_process p(argv, environment, {"REDLOCK_PASSWORD"});
    cli_run r;
    r.status = p.wait(30s);
    r.output = p.out() + p.err();
    return r;
}

TEST_F(nodes_test, the_command_line_tool_never_shows_the_password) {
    const locker_user user("the-right-one");
    const auto wrong = joined(nodes_as("redis://locker:" + secret + "@"));
    const auto user_only = joined(nodes_as("redis://locker:@"));
    const auto plain = joined(topology::addresses());
    const std::string token = "0123456789abcdef0123456789abcdef";
    const auto password_file =
        ::testing::TempDir() + "redlock_secrets_" + std::to_string(::getpid());
    std::ofstream(password_file) << secret << "\n";

    struct attempt {
        std::vector<std::string> args;
        std::vector<std::string> environment;
        int status;
    };
    const std::vector<attempt> attempts{
        // Logins refused: a wrong password, in the address, from the environment, from a file.
        {{"--nodes", wrong, "acquire", "secrets:k"}, {}, 69},
        {{"--nodes", wrong, "acquire", "--wait", "300ms", "secrets:k"}, {}, 69},
        {{"--nodes", wrong, "run", "secrets:k", "--", "true"}, {}, 69},
        {{"--nodes", wrong, "extend", "secrets:k", token}, {}, 69},
        {{"--nodes", wrong, "release", "secrets:k", token}, {}, 69},
        {{"--nodes", wrong, "status", "secrets:k", token}, {}, 69},
        {{"--nodes", wrong, "demo", "--buyers", "2", "--stock", "1", "--instances", "1"}, {}, 69},
        {{"acquire", "secrets:k"},
         {"REDLOCK_NODES=" + user_only, "REDLOCK_PASSWORD=" + secret},
         69},
        {{"acquire", "secrets:k"}, {"REDLOCK_NODES=" + plain, "REDLOCK_PASSWORD=" + secret}, 69},
        {{"--password-file", password_file, "status", "secrets:k"},
         {"REDLOCK_NODES=" + user_only},
         69},
        // Node lists refused before any connection.
        {{"--nodes", "redis://locker:" + secret + "/x@127.0.0.1:1", "acquire", "k"}, {}, 64},
        {{"--nodes", wrong + "," + wrong, "acquire", "k"}, {}, 64},
        {{"--nodes", "unix:///" + std::string(150, 's') + "?password=" + secret, "status", "k"},
         {},
         64},
    };
    for (const auto& a : attempts) {
        const auto r = redlock(a.args, a.environment);
        const std::string what = a.args[a.args.size() > 2 ? 2 : 0];
        EXPECT_EQ(r.status, a.status) << what << "\n" << r.output;
        EXPECT_EQ(r.output.find(secret), std::string::npos) << what << "\n" << r.output;
        EXPECT_FALSE(r.output.empty()) << what << ": something was said, and searched";
    }
    std::remove(password_file.c_str());
    EXPECT_EQ(keys_everywhere(), 0);
}

TEST_F(nodes_test, the_command_line_tool_never_shows_a_password_a_node_echoes) {
    const locker_user user(secret);
    hostile_server echo(hostile_server::mode::echoes_password);
    auto nodes = nodes_as("redis://locker:@");
    nodes.back() = "redis://locker:@" + echo.address();
    for (int node : {1, 2}) { // the echoing node's vote is waited for
        inspector(node).run({"SET", "secrets:cli-echo", "someone-else", "PX", "20000"});
    }
    // With -q --json, what is printed is the JSON alone: the node's words reach it too.
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"status", "secrets:cli-echo"},
             {"acquire", "-t", "2s", "secrets:cli-echo"},
             {"status", "-q", "--json", "secrets:cli-echo"},
             {"nodes"},
             {"nodes", "-q", "--json"},
             {"acquire", "-q", "--json", "-t", "2s", "secrets:cli-echo"}}) {
        const auto r =
            redlock(args, {"REDLOCK_NODES=" + joined(nodes), "REDLOCK_PASSWORD=" + secret});
        EXPECT_EQ(r.output.find(secret), std::string::npos) << args[0] << "\n" << r.output;
        EXPECT_NE(r.output.find("WRONGPASS the password *** is wrong"), std::string::npos)
            << args[0] << "\n"
            << r.output;
    }
    for (int node : {1, 2}) {
        inspector(node).run({"DEL", "secrets:cli-echo"});
    }
    EXPECT_TRUE(eventually([] { return keys_everywhere() == 0; }));
}

TEST_F(nodes_test, the_command_line_tool_logged_in_never_shows_the_password) {
    const locker_user user(secret);
    const auto nodes = joined(nodes_as("redis://locker:" + secret + "@"));
    const auto acquired = redlock({"--nodes", nodes, "acquire", "-t", "20s", "secrets:cli"});
    ASSERT_EQ(acquired.status, 0) << acquired.output;
    const auto token = acquired.output.substr(0, 32);
    struct step {
        std::vector<std::string> args;
        int status;
    };
    for (const auto& [args, expected] : std::vector<step>{
             {{"--nodes", nodes, "status", "secrets:cli", token}, 0},
             {{"--nodes", nodes, "status", "--json", "secrets:cli", token}, 0},
             {{"--nodes", nodes, "acquire", "--json", "secrets:cli"}, 75},
             {{"--nodes", nodes, "acquire", "secrets:cli"}, 75},
             {{"--nodes", nodes, "extend", "secrets:cli", token}, 0},
             {{"--nodes", nodes, "run", "secrets:other", "--", "sh", "-c", "echo ran; exit 3"}, 3},
             {{"--nodes", nodes, "release", "--json", "secrets:cli", token}, 0}}) {
        const auto r = redlock(args);
        EXPECT_EQ(r.status, expected) << args[2] << "\n" << r.output;
        EXPECT_EQ(r.output.find(secret), std::string::npos) << args[2] << "\n" << r.output;
        EXPECT_FALSE(r.output.empty()) << args[2];
    }
    EXPECT_EQ(acquired.output.find(secret), std::string::npos) << acquired.output;
    // The release completes at a quorum of deletes: the others land within node_timeout.
    EXPECT_TRUE(all_keys_gone()) << keys_everywhere();
}

// Review finding F4: `status` printed the value under the key as the node stored it, while
// every vote's server text has the configured secrets cut out. A value is anybody's text.
TEST_F(nodes_test, status_never_shows_the_password_in_the_value_a_key_holds) {
    const locker_user user(secret);
    const auto nodes = joined(nodes_as("redis://locker:" + secret + "@"));
    for (int node = 1; node <= static_cast<int>(topology::size()); ++node) {
        inspector(node).run({"SET", "secrets:value", "token-" + secret, "PX", "20000"});
    }
    const auto r = redlock({"--nodes", nodes, "status", "secrets:value"});
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(r.output.find(secret), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("token-***"), std::string::npos) << r.output;
    // --json shows the same holder: scrubbed the same way.
    const auto json = redlock({"--nodes", nodes, "status", "--json", "secrets:value"});
    EXPECT_EQ(json.status, 0) << json.output;
    EXPECT_EQ(json.output.find(secret), std::string::npos) << json.output;
    EXPECT_NE(json.output.find("\"holder\":\"token-***\""), std::string::npos) << json.output;
    for (int node = 1; node <= static_cast<int>(topology::size()); ++node) {
        inspector(node).run({"DEL", "secrets:value"});
    }
}

// Review finding F5: the secrets were cut out of INFO's fields before they were compared: with
// the password "no", "noeviction" read "***eviction", and a node with a memory limit that
// never evicts lost its vote ("can evict keys").
TEST_F(nodes_test, a_short_password_never_changes_what_info_says) {
    const locker_user user("no");
    inspector(1).run({"CONFIG", "SET", "maxmemory", "100mb"});
    inspector(1).run({"CONFIG", "SET", "maxmemory-policy", "noeviction"});
    client_config c = config();
    c.nodes = nodes_as("redis://locker:no@");
    blocking_client client(c);
    std::error_code ec;
    auto held = client.acquire("secrets:short", options(), ec);
    ASSERT_FALSE(ec) << held.message;
    client.release(held.lock, ec);
    const auto view = client.inspect("secrets:short", ec);
    ASSERT_FALSE(ec) << view.message;
    EXPECT_EQ(view.nodes[0].can_evict, "") << "noeviction with a memory limit evicts nothing";
}

} // namespace
} // namespace redlock::test
