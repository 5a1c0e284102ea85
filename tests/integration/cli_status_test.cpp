// `redlock status` against nodes that refuse, that are one server under two names, that
// hold text meant for a terminal, and impostors whose INFO and replies are hostile.
#include "support/child_process.hpp"
#include "support/fixture.hpp"

#include <hiredis/hiredis.h>

#include <arpa/inet.h>
#include <atomic>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace redlock::test {
namespace {

using namespace std::chrono_literals;

struct status_run {
    std::optional<int> status;
    std::string out;
    std::string err;
};

status_run status(const std::vector<std::string>& nodes, const std::vector<std::string>& args) {
    std::string list;
    for (const auto& node : nodes) {
        list += (list.empty() ? "" : ",") + node;
    }
    std::vector<std::string> argv{REDLOCK_CLI_PATH, "--nodes", list, "status"};
    argv.insert(argv.end(), args.begin(), args.end());
    child_process p(argv);
    status_run r;
    r.status = p.wait(10s);
    r.out = p.out();
    r.err = p.err();
    return r;
}

std::size_t count_of(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
        ++n;
    }
    return n;
}

/// Any byte a terminal would act on rather than print, line ends aside.
bool has_terminal_controls(std::string_view text) {
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if ((u < 0x20 && u != '\n') || u >= 0x7f) {
            return true;
        }
    }
    return false;
}

const std::string token = "0123456789abcdef0123456789abcdef";

void hold_everywhere(const std::string& key, const std::string& value) {
    for (int node = 1; node <= static_cast<int>(topology::size()); ++node) {
        ASSERT_EQ(inspector(node).run({"SET", key, value, "PX", "60000"}), "OK");
    }
}

/// An ACL user `reader` (password `pw`) on every node with `rules`, for as long as this lives.
class acl_reader {
public:
    explicit acl_reader(const std::vector<std::string>& rules) {
        for (int node = 1; node <= static_cast<int>(topology::size()); ++node) {
            std::vector<std::string> command{"ACL", "SETUSER", "reader", "reset", "on", ">pw"};
            command.insert(command.end(), rules.begin(), rules.end());
            EXPECT_EQ(inspector(node).run(command), "OK");
        }
    }
    ~acl_reader() {
        for (int node = 1; node <= static_cast<int>(topology::size()); ++node) {
            inspector(node).run({"ACL", "DELUSER", "reader"});
        }
    }
    acl_reader(const acl_reader&) = delete;
    acl_reader& operator=(const acl_reader&) = delete;

    static std::vector<std::string> nodes() {
        std::vector<std::string> out;
        for (const auto& node : topology::addresses()) {
            out.push_back("redis://reader:pw@" + node);
        }
        return out;
    }
};

TEST_F(nodes_test, status_shows_a_refused_pttl_as_refused_not_as_zero) {
    hold_everywhere("status:pttl", token);
    const acl_reader reader({"~*", "+get", "+info"}); // no +pttl
    const auto r = status(acl_reader::nodes(), {"status:pttl", token});
    EXPECT_EQ(r.status, 0) << "every node answered GET with our token\n" << r.out << r.err;
    EXPECT_EQ(count_of(r.out, "pttl refused (NOPERM"), topology::size()) << r.out;
    EXPECT_EQ(count_of(r.out, "pttl 0 ms"), 0u) << r.out;
    EXPECT_EQ(count_of(r.out, "(matches)"), topology::size()) << r.out;
}

TEST_F(nodes_test, status_shows_a_refused_get_as_refused_and_counts_no_such_node) {
    hold_everywhere("status:get", token);
    const acl_reader reader({"~*", "+info", "+pttl"}); // no +get
    const auto r = status(acl_reader::nodes(), {"status:get", token});
    EXPECT_EQ(r.status, 69) << "no node could tell what it holds\n" << r.out;
    EXPECT_EQ(count_of(r.out, "refused (NOPERM"), topology::size()) << r.out;
    EXPECT_EQ(count_of(r.out, "held"), 0u) << r.out;
}

TEST_F(nodes_test, status_counts_one_server_reached_under_two_names_once) {
    ASSERT_EQ(inspector(1).run({"SET", "status:twice", token, "PX", "60000"}), "OK");
    const std::string first = "127.0.0.1:" + std::to_string(topology::port(1));
    const std::string alias = "localhost:" + std::to_string(topology::port(1));
    const std::string third = "127.0.0.1:" + std::to_string(topology::port(3));
    const auto r = status({first, alias, third}, {"status:twice", token});
    // Counted twice, node 1 alone would make a quorum of 2 of 3 hold the token.
    EXPECT_EQ(r.status, 79) << r.out << r.err;
    EXPECT_NE(r.out.find(alias + " "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("same server as " + first + " (run_id "), std::string::npos) << r.out;
    EXPECT_EQ(count_of(r.out, "(matches)"), 1u) << r.out;
    EXPECT_EQ(count_of(r.out, "\n"), 3u) << r.out;
}

TEST_F(nodes_test, status_marks_a_node_in_restart_quarantine) {
    topology::restart(2);
    std::vector<std::string> nodes;
    for (int n = 1; n <= 3; ++n) {
        nodes.push_back("127.0.0.1:" + std::to_string(topology::port(n)));
    }
    const auto r = status(nodes, {"status:quarantine"});
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    // Nodes 1 and 3 may be in quarantine too, restarted by an earlier test.
    const auto at = r.out.find(nodes[1] + " ");
    ASSERT_NE(at, std::string::npos) << r.out;
    const auto line = r.out.substr(at, r.out.find('\n', at) - at);
    const std::string mark = "free  (quarantined: node restarted, votes count again in ";
    const auto marked = line.find(mark);
    ASSERT_NE(marked, std::string::npos) << r.out;
    // Weighed against the fleet's longest lock, 60 s unless --max-ttl says otherwise.
    const double left = std::stod(line.substr(marked + mark.size()));
    EXPECT_GT(left, 55.0) << r.out;
    EXPECT_LE(left, 61.0) << r.out;
}

/// `redlock ARGS` with the default settings (no $REDLOCK_MAX_TTL either).
status_run redlock(const std::vector<std::string>& args) {
    std::vector<std::string> argv{REDLOCK_CLI_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    child_process p(argv, {}, {"REDLOCK_MAX_TTL"});
    status_run r;
    r.status = p.wait(10s);
    r.out = p.out();
    r.err = p.err();
    return r;
}

/// The double grant of issue 22: A's 60 s lock stands on nodes 1-3, node 3 restarts empty,
/// and B, asking for a 1 s lock, counted node 3 once 1 s had passed: its quarantine was its
/// own --ttl, blind to A's. Now every command weighs the restart against the fleet's maximum.
TEST_F(nodes_test, a_short_ttl_does_not_shorten_the_quarantine_of_a_longer_lock) {
    const std::string key = "fleet:restart";
    std::string list;
    for (const auto& node : topology::addresses()) {
        list += (list.empty() ? "" : ",") + node;
    }
    // A short blocker on nodes 4 and 5: A's majority is nodes 1-3.
    for (int node : {4, 5}) {
        ASSERT_EQ(inspector(node).run({"SET", key, "blocker", "PX", "1000"}), "OK");
    }
    // A is the setup: earlier tests restarted nodes, which may be in quarantine still.
    const auto a = redlock({"--no-quarantine", "--nodes", list, "acquire", "--ttl", "60s", key});
    ASSERT_EQ(a.status, 0) << a.out << a.err;
    const std::string a_token = a.out.substr(0, a.out.find_first_of(" \n"));
    topology::restart(3);
    std::this_thread::sleep_for(2s);

    const auto b = redlock({"--nodes", list, "acquire", "--ttl", "1s", key});
    EXPECT_EQ(b.status, 75) << "nodes in restart quarantine, not a second holder\n"
                            << b.out << b.err;
    for (int node : {1, 2}) {
        EXPECT_EQ(inspector(node).run({"GET", key}), a_token) << "A still holds node " << node;
    }
    EXPECT_NE(b.err.find(": quarantined: node restarted "), std::string::npos) << b.err;
    // Decided once a quorum was out of reach, B may not have waited for node 3's answer; if
    // it names node 3, it is as quarantined.
    const std::string third = topology::addresses()[2];
    if (const auto at = b.err.find(third + ": "); at != std::string::npos) {
        const auto said = b.err.substr(at + third.size() + 2, 20);
        EXPECT_TRUE(said.starts_with("quarantined") || said.starts_with("no answer yet")) << b.err;
    }

    // status weighs node 3 as acquire did.
    const auto st = redlock({"--nodes", list, "status", key});
    const auto line_at = st.out.find(third + " ");
    ASSERT_NE(line_at, std::string::npos) << st.out << st.err;
    const auto line = st.out.substr(line_at, st.out.find('\n', line_at) - line_at);
    EXPECT_NE(line.find("(quarantined: node restarted, votes count again in "), std::string::npos)
        << st.out;
    const auto held_by_a = count_of(st.out, a_token);
    EXPECT_EQ(held_by_a, 2u) << st.out;
    redlock({"--no-quarantine", "--nodes", list, "release", key, a_token});
}

TEST_F(nodes_test, status_marks_a_node_that_can_evict_keys) {
    inspector one(1);
    ASSERT_EQ(one.run({"CONFIG", "SET", "maxmemory", "3mb"}), "OK");
    ASSERT_EQ(one.run({"CONFIG", "SET", "maxmemory-policy", "volatile-ttl"}), "OK");
    std::vector<std::string> nodes;
    for (int n = 1; n <= 3; ++n) {
        nodes.push_back("127.0.0.1:" + std::to_string(topology::port(n)));
    }
    const std::string mark = "(can evict keys: maxmemory-policy volatile-ttl";
    const auto r = status(nodes, {"status:evict"});
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_EQ(count_of(r.out, mark + ": votes do not count)"), 1u) << r.out;
    const auto at = r.out.find(nodes[0] + " ");
    ASSERT_NE(at, std::string::npos) << r.out;
    EXPECT_NE(r.out.substr(at, r.out.find('\n', at) - at).find("free  " + mark), std::string::npos)
        << "on node 1's line: " << r.out;
    const auto accepted = status(nodes, {"--accept-evicting-nodes", "status:evict"});
    EXPECT_EQ(count_of(accepted.out, mark + ": accepted, --accept-evicting-nodes)"), 1u)
        << accepted.out;
}

TEST_F(nodes_test, status_escapes_what_a_node_holds_before_it_reaches_the_terminal) {
    const std::string paint = "\x1b]0;owned\x07\x1b[2J\r\nfake line\x9b\x7f\\x";
    hold_everywhere("status:paint", paint);
    const auto r = status(topology::addresses(), {"status:paint"});
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_FALSE(has_terminal_controls(r.out)) << r.out;
    EXPECT_EQ(count_of(r.out, "\n"), topology::size()) << "one line per node\n" << r.out;
    EXPECT_EQ(count_of(r.out, "\\x1b]0;owned\\x07\\x1b[2J\\x0d\\x0afake line\\x9b\\x7f\\x5cx"),
              topology::size())
        << r.out;
}

/// A Redis impostor on 127.0.0.1 that answers INFO, GET and PTTL with the bytes it was
/// given (anything else: +OK), one connection at a time, until destroyed.
class impostor {
public:
    impostor(std::string info, std::string get_reply, std::string pttl_reply)
        : info_(std::move(info))
        , get_reply_(std::move(get_reply))
        , pttl_reply_(std::move(pttl_reply)) {
        listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t size = sizeof a;
        if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
            ::listen(listener_, 8) != 0 ||
            ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &size) != 0) {
            throw std::runtime_error("impostor: cannot listen");
        }
        port_ = ntohs(a.sin_port);
        thread_ = std::thread([this] { serve(); });
    }
    ~impostor() {
        stop_ = true;
        thread_.join();
        ::close(listener_);
    }
    impostor(const impostor&) = delete;
    impostor& operator=(const impostor&) = delete;

    std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

    static std::string bulk(const std::string& text) {
        return "$" + std::to_string(text.size()) + "\r\n" + text + "\r\n";
    }
    /// INFO server memory stats' reply with this run_id and uptime_in_seconds, of a node
    /// that does not evict.
    static std::string info(const std::string& run_id, const std::string& uptime) {
        return bulk("# Server\r\nredis_version:7.0.0\r\nrun_id:" + run_id +
                    "\r\nuptime_in_seconds:" + uptime +
                    "\r\nmaxmemory:0\r\nmaxmemory_policy:noeviction\r\nevicted_keys:0\r\n");
    }

private:
    /// Waits until `fd` is readable or 50 ms passed; false once the impostor is stopping.
    bool readable(int fd) const {
        pollfd p{fd, POLLIN, 0};
        while (!stop_) {
            if (::poll(&p, 1, 50) > 0) {
                return true;
            }
        }
        return false;
    }

    void serve() {
        while (readable(listener_)) {
            const int connection = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
            if (connection >= 0) {
                converse(connection);
                ::close(connection);
            }
        }
    }

    void converse(int connection) {
        redisReader* reader = redisReaderCreate();
        char buffer[4096];
        while (readable(connection)) {
            const auto got = ::read(connection, buffer, sizeof buffer);
            if (got <= 0) {
                break;
            }
            redisReaderFeed(reader, buffer, static_cast<std::size_t>(got));
            void* parsed = nullptr;
            while (redisReaderGetReply(reader, &parsed) == REDIS_OK && parsed) {
                const auto* request = static_cast<redisReply*>(parsed);
                std::string name;
                if (request->type == REDIS_REPLY_ARRAY && request->elements > 0) {
                    name.assign(request->element[0]->str, request->element[0]->len);
                }
                const std::string& reply = name == "INFO"   ? info_
                                           : name == "GET"  ? get_reply_
                                           : name == "PTTL" ? pttl_reply_
                                                            : ok_;
                freeReplyObject(parsed);
                if (::send(connection, reply.data(), reply.size(), MSG_NOSIGNAL) < 0) {
                    break;
                }
            }
        }
        redisReaderFree(reader);
    }

    const std::string info_;
    const std::string get_reply_;
    const std::string pttl_reply_;
    const std::string ok_ = "+OK\r\n";
    int listener_ = -1;
    std::uint16_t port_ = 0;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

TEST(status_impostors, hostile_uptimes_values_and_errors_cannot_break_status) {
    const std::string painted_error = "-NOPERM \x1b[31mred\x07 " + std::string(5000, 'e') + "\r\n";
    // Three servers whose uptimes would overflow any arithmetic, or are not numbers at all,
    // whose values and errors paint the terminal, and two of which are one server (run_id).
    impostor huge(impostor::info("a1", "99999999999999999999999999"), impostor::bulk(token),
                  ":9223372036854775807\r\n");
    impostor negative(impostor::info("b2", "-9223372036854775808"),
                      impostor::bulk("\x1b[2J" + token), painted_error);
    impostor garbage(impostor::info("a1", "\x1b]0;x\x07 not a number"), impostor::bulk(token),
                     ":-9223372036854775807\r\n");
    const auto r =
        status({huge.address(), negative.address(), garbage.address()}, {"status:hostile", token});
    ASSERT_TRUE(r.status) << "status hung";
    EXPECT_EQ(*r.status, 79) << "the token on huge only: garbage is huge under another name\n"
                             << r.out << r.err;
    EXPECT_FALSE(has_terminal_controls(r.out)) << r.out;
    EXPECT_FALSE(has_terminal_controls(r.err)) << r.err;
    EXPECT_EQ(count_of(r.out, "\n"), 3u) << r.out;
    EXPECT_NE(r.out.find("pttl 9223372036854775807 ms"), std::string::npos) << r.out;
    // Server text reaches status as every vote has it: printable (controls as '?'), and cut
    // at 256 bytes and marked, before the CLI shortens it further for the line.
    EXPECT_NE(r.out.find("pttl refused (NOPERM ?[31mred? eee"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find(std::string(300, 'e')), std::string::npos) << "cut short\n" << r.out;
    EXPECT_NE(r.out.find("... ("), std::string::npos) << "cut, and said so\n" << r.out;
    EXPECT_NE(r.out.find("same server as " + huge.address() + " (run_id a1)"), std::string::npos)
        << r.out;
}

TEST_F(nodes_test, status_takes_the_keys_of_a_lock_over_several_and_a_token_shaped_as_one) {
    const auto nodes = topology::addresses();
    const auto run = [&](const std::vector<std::string>& args) {
        std::vector<std::string> argv{REDLOCK_CLI_PATH, "--no-quarantine", "--nodes", ""};
        for (const auto& node : nodes) {
            argv[3] += (argv[3].empty() ? "" : ",") + node;
        }
        argv.insert(argv.end(), args.begin(), args.end());
        child_process p(argv);
        status_run r;
        r.status = p.wait(10s);
        r.out = p.out();
        r.err = p.err();
        return r;
    };
    const auto acquired = run({"acquire", "-t", "20s", "status:a", "status:b"});
    ASSERT_EQ(acquired.status, 0) << acquired.err;
    const std::string held_by = acquired.out.substr(0, 32);

    // Typed as acquire takes it: two keys, each shown under its name, no token.
    auto r = run({"status", "status:a", "status:b"});
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("status:a:\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("status:b:\n"), std::string::npos) << r.out;
    EXPECT_EQ(count_of(r.out, "held"), 2 * topology::size()) << r.out;
    EXPECT_EQ(count_of(r.out, "(matches)"), 0u) << r.out;

    // With the holder's token after the keys, or with --token: held on every node, both keys.
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"status", "status:a", "status:b", held_by},
             {"status", "--token", held_by, "status:a", "status:b"}}) {
        r = run(args);
        EXPECT_EQ(r.status, 0) << r.out << r.err;
        EXPECT_EQ(count_of(r.out, "(matches)"), 2 * topology::size()) << r.out;
    }
    r = run({"status", "status:a", "status:b", "ffffffffffffffffffffffffffffffff"});
    EXPECT_EQ(r.status, 79) << r.out << r.err;
    // One key held, the other not: the lock over both is not held by this token.
    ASSERT_EQ(run({"release", "status:a", "status:b", held_by}).status, 0);
    ASSERT_EQ(run({"acquire", "-t", "20s", "status:a"}).status, 0);
    r = run({"status", "status:a", "status:b", held_by});
    EXPECT_EQ(r.status, 79) << r.out << r.err;

    // A token that is not one: a usage error that says what a token looks like.
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"status", "--token", "mytoken", "status:a"},
             {"status", "status:a", held_by.substr(0, 31)},
             {"status", "status:a", "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF"}}) {
        r = run(args);
        EXPECT_EQ(r.status, 64) << args.back() << "\n" << r.out << r.err;
        EXPECT_NE(r.err.find("32 lowercase hex digits"), std::string::npos) << r.err;
        EXPECT_TRUE(r.out.empty()) << r.out;
    }

    // --json: one entry per node and key.
    r = run({"status", "--json", "status:a", "status:b"});
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_EQ(count_of(r.out, "\"key\":\"status:a\""), topology::size()) << r.out;
    EXPECT_EQ(count_of(r.out, "\"key\":\"status:b\""), topology::size()) << r.out;
    EXPECT_NE(r.out.find("\"keys\":[\"status:a\",\"status:b\"]"), std::string::npos) << r.out;
}

} // namespace
} // namespace redlock::test
