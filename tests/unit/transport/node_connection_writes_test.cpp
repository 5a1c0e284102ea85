// node_connection's writes against a scripted peer on a real socket: a command on a quiet
// connection is written inside send(); what the socket does not take, and what follows,
// keeps the send order; a dead peer fails each command once, never inside send().
#include "support/parsed_address.hpp"
#include "support/resp_command.hpp"
#include "transport/asio_time_source.hpp"
#include "transport/node_connection.hpp"
#include "transport/scripts.hpp"
#include "transport/socket_connector.hpp"

#include <redlock/node_address.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include <hiredis/hiredis.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <thread>
#include <vector>

namespace redlock::detail {
namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;

using test::parsed_address;

/// A node played by the test: it accepts one connection, reads commands, and answers what
/// the test says.
struct fake_node {
    int listener = -1;
    int peer = -1;
    std::string path; // unix, else tcp
    std::uint16_t port = 0;
    std::string inbox;

    explicit fake_node(bool unix_socket) {
        if (unix_socket) {
            path = "/tmp/redlock-fake-node-" + std::to_string(::getpid()) + ".sock";
            ::unlink(path.c_str());
            listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
            sockaddr_un a{};
            a.sun_family = AF_UNIX;
            std::strcpy(a.sun_path, path.c_str());
            EXPECT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
        } else {
            listener = ::socket(AF_INET, SOCK_STREAM, 0);
            sockaddr_in a{};
            a.sin_family = AF_INET;
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            EXPECT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
            socklen_t len = sizeof a;
            ::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len);
            port = ntohs(a.sin_port);
        }
        EXPECT_EQ(::listen(listener, 4), 0);
    }
    ~fake_node() {
        if (peer >= 0)
            ::close(peer);
        ::close(listener);
        if (!path.empty())
            ::unlink(path.c_str());
    }
    std::string address() const {
        return path.empty() ? "127.0.0.1:" + std::to_string(port) : "unix://" + path;
    }
    void accept_one() { peer = ::accept(listener, nullptr, nullptr); }
    std::vector<std::string> read_command() {
        std::vector<std::string> args;
        std::size_t used = 0;
        while (test::parse_command(inbox, used, args) != test::parse_result::command) {
            char buf[65536];
            const auto n = ::read(peer, buf, sizeof buf);
            if (n <= 0)
                return {};
            inbox.append(buf, static_cast<std::size_t>(n));
        }
        inbox.erase(0, used);
        return args;
    }
    void write(const std::string& s) {
        EXPECT_EQ(::write(peer, s.data(), s.size()), (ssize_t)s.size());
    }
    void answer_handshake() {
        // Every SCRIPT LOAD, INFO server and the clock mark of a fresh connection.
        for (std::size_t i = 0; i < 2 + preloaded_scripts.size(); ++i) {
            const auto c = read_command();
            ASSERT_FALSE(c.empty());
            write(c[0] == "INFO" ? "$20\r\nrun_id:0123456789abc\r\n"
                  : c[0] == "EVALSHA"
                      ? "*4\r\n$10\r\n1700000000\r\n$1\r\n0\r\n$1\r\n0\r\n$1\r\n0\r\n"
                      : "+OK\r\n");
        }
    }
    void reset() {
        linger l{1, 0};
        ::setsockopt(peer, SOL_SOCKET, SO_LINGER, &l, sizeof l);
        ::close(peer);
        peer = -1;
    }
    void close_peer() {
        ::close(peer);
        peer = -1;
    }
};

struct recording_target final : reply_target {
    bool* in_send;
    std::map<std::uint64_t, std::vector<std::string>> replies;
    void on_reply(std::uint64_t tag, const node_reply& reply) override {
        std::string what = *in_send ? "INSIDE-SEND " : "";
        if (reply.error) {
            what += "error:" + reply.error.message() + ":" + std::string(reply.message);
        } else {
            what += std::string(reply.reply->str, reply.reply->len);
        }
        replies[tag].push_back(what);
    }
};

/// Connected and idle: one PING answered, its connection quiet again.
void connect_and_settle(asio::io_context& io, node_connection& conn, fake_node& node,
                        const std::shared_ptr<recording_target>& t, bool& in_send) {
    in_send = true;
    conn.send(command{{"PING"}}, t, 1);
    in_send = false;
    std::thread server([&] {
        node.accept_one();
        node.answer_handshake();
        const auto c = node.read_command();
        EXPECT_EQ(c.at(0), "PING");
        node.write("+PONG\r\n");
    });
    while (t->replies.empty()) {
        io.run_one_for(100ms);
    }
    server.join();
    io.poll();
    ASSERT_EQ(t->replies[1], std::vector<std::string>{"PONG"});
}

/// A connection to a fake node, connected and quiet, with a target that records replies.
struct settled_connection {
    asio::io_context io;
    asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
    client_config config;
    fake_node node;
    bool in_send = false;
    std::shared_ptr<recording_target> t = std::make_shared<recording_target>();
    node_connection conn;

    explicit settled_connection(bool unix_socket)
        : node(unix_socket)
        , conn(io.get_executor(), parsed_address(node.address()), config,
               std::make_unique<asio_time_source>(io.get_executor()),
               std::make_unique<socket_connector>(io.get_executor(), parsed_address(node.address()),
                                                  config, nullptr)) {
        t->in_send = &in_send;
        connect_and_settle(io, conn, node, t, in_send);
    }
};

void dead_peer_case(bool unix_socket, bool rst) {
    settled_connection c(unix_socket);
    if (rst) {
        c.node.reset();
    } else {
        c.node.close_peer();
    }
    std::this_thread::sleep_for(50ms); // the FIN or RST is in; nothing has run the reactor
    // A quiet connection: the first is written inside send() and meets the dead socket
    // (EPIPE on unix, ECONNRESET after a reset, success after a FIN on TCP), then two more
    // in the same handler.
    c.in_send = true;
    c.conn.send(command{{"PING", "a"}}, c.t, 2);
    c.conn.send(command{{"PING", "b"}}, c.t, 3);
    c.conn.send(command{{"PING", "c"}}, c.t, 4);
    c.in_send = false;
    EXPECT_EQ(c.t->replies.count(2) + c.t->replies.count(3) + c.t->replies.count(4), 0u)
        << "a callback inside send()";
    for (int i = 0; i < 50; ++i) {
        c.io.run_one_for(20ms);
    }
    for (std::uint64_t tag = 2; tag <= 4; ++tag) {
        ASSERT_EQ(c.t->replies[tag].size(), 1u) << "tag " << tag;
        EXPECT_EQ(c.t->replies[tag][0].rfind("error:", 0), 0u) << c.t->replies[tag][0];
    }
    c.conn.shutdown(0ms);
    c.io.poll();
}

/// A write inside send() that the socket takes only in part, then more sends in the same
/// handler: the node receives every command whole, in send order.
void partial_case(bool unix_socket) {
    settled_connection c(unix_socket);
    // The order is under test, not the patience: 8 MiB through a busy machine's socket can
    // take longer than the default bound (1 s), which would reset the connection and leave
    // the fake node waiting for a command that never comes.
    c.conn.expect_replies_within(std::chrono::minutes(2));
    const std::string big(8 << 20, 'B');
    c.in_send = true;
    c.conn.send(command{{"ECHO", big}}, c.t, 10);
    c.conn.send(command{{"ECHO", "small1"}}, c.t, 11);
    c.conn.send(command{{"ECHO", std::string(100000, 'm')}}, c.t, 12);
    c.in_send = false;
    std::vector<std::vector<std::string>> got;
    std::thread server([&] {
        for (int i = 0; i < 3; ++i) {
            got.push_back(c.node.read_command());
            c.node.write("+R" + std::to_string(i) + "\r\n");
        }
    });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    while (c.t->replies.size() < 4 && std::chrono::steady_clock::now() < deadline) {
        c.io.run_one_for(100ms);
    }
    if (c.t->replies.size() < 4) {
        ::shutdown(c.node.peer, SHUT_RDWR); // wakes the fake node's read, so its thread ends
    }
    server.join();
    ASSERT_EQ(c.t->replies.size(), 4u) << "replies within two minutes";
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0].at(1), big);
    EXPECT_EQ(got[1].at(1), "small1");
    EXPECT_EQ(got[2].at(1), std::string(100000, 'm'));
    EXPECT_EQ(c.t->replies[10], std::vector<std::string>{"R0"});
    EXPECT_EQ(c.t->replies[11], std::vector<std::string>{"R1"});
    EXPECT_EQ(c.t->replies[12], std::vector<std::string>{"R2"});
    c.conn.shutdown(0ms);
    c.io.poll();
}

/// Bytes the node can read now, without waiting.
std::string readable_now(int peer) {
    std::string got;
    char buf[65536];
    for (;;) {
        const auto n = ::recv(peer, buf, sizeof buf, MSG_DONTWAIT);
        if (n <= 0) {
            return got;
        }
        got.append(buf, static_cast<std::size_t>(n));
    }
}

// A release and the SETs of the waiter it wakes: batched, they leave together when the batch
// ends, inside that call (not a scheduler step later), in send order.
void batch_case(bool unix_socket) {
    settled_connection c(unix_socket);
    c.conn.begin_batch();
    c.conn.begin_batch(); // nested: only the outermost end writes
    c.in_send = true;
    c.conn.send(command{{"PING", "first"}}, c.t, 20);
    c.conn.end_batch();
    c.conn.send(command{{"PING", "second"}}, c.t, 21);
    c.in_send = false;
    std::this_thread::sleep_for(20ms);
    EXPECT_EQ(readable_now(c.node.peer), "") << "written before the batch ended";
    c.conn.end_batch();
    std::this_thread::sleep_for(20ms); // nothing runs the io_context meanwhile
    c.node.inbox = readable_now(c.node.peer);
    std::vector<std::string> first, second;
    std::size_t used = 0;
    ASSERT_EQ(test::parse_command(c.node.inbox, used, first), test::parse_result::command);
    c.node.inbox.erase(0, used);
    ASSERT_EQ(test::parse_command(c.node.inbox, used, second), test::parse_result::command);
    EXPECT_EQ(first, (std::vector<std::string>{"PING", "first"}));
    EXPECT_EQ(second, (std::vector<std::string>{"PING", "second"}));
    c.node.write("$5\r\nfirst\r\n$6\r\nsecond\r\n");
    while (c.t->replies.size() < 3) {
        c.io.run_one_for(100ms);
    }
    EXPECT_EQ(c.t->replies[20], std::vector<std::string>{"first"});
    EXPECT_EQ(c.t->replies[21], std::vector<std::string>{"second"});
    // After the batch, a command on the quiet connection is written at once again.
    c.conn.send(command{{"PING", "third"}}, c.t, 22);
    std::this_thread::sleep_for(20ms);
    EXPECT_NE(readable_now(c.node.peer).find("third"), std::string::npos);
    c.conn.shutdown(0ms);
    c.io.poll();
}

TEST(node_connection_writes, a_batch_leaves_together_when_it_ends_on_unix) {
    batch_case(true);
}
TEST(node_connection_writes, a_batch_leaves_together_when_it_ends_on_tcp) {
    batch_case(false);
}
TEST(node_connection_writes, a_closed_unix_peer_fails_each_command_once_outside_send) {
    dead_peer_case(true, false);
}
TEST(node_connection_writes, a_closed_tcp_peer_fails_each_command_once_outside_send) {
    dead_peer_case(false, false);
}
TEST(node_connection_writes, a_reset_tcp_peer_fails_each_command_once_outside_send) {
    dead_peer_case(false, true);
}
TEST(node_connection_writes, a_partial_write_keeps_the_send_order_on_unix) {
    partial_case(true);
}
TEST(node_connection_writes, a_partial_write_keeps_the_send_order_on_tcp) {
    partial_case(false);
}

} // namespace
} // namespace redlock::detail
