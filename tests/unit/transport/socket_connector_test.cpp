// socket_connector against real local sockets: what stream_connector promises node_connection
// (one outcome, on the strand, never from inside open() for a success, nothing after abort()),
// and the reasons it gives.
#include "support/parsed_address.hpp"
#include "transport/socket_connector.hpp"
#include "transport/tls_context.hpp"

#include <redlock/node_address.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <optional>
#include <string>
#include <vector>

namespace redlock::detail {
namespace {

namespace asio = boost::asio;

using test::parsed_address;

struct outcome {
    int calls = 0;
    bool stream = false;
    std::string why;
};

stream_connector::opened_fn record(outcome& o) {
    return [&o](std::unique_ptr<byte_stream> s, std::string why) {
        ++o.calls;
        o.stream = s != nullptr;
        o.why = std::move(why);
    };
}

/// One attempt, run until the context has nothing left to do.
outcome attempt(asio::io_context& io, socket_connector& connector) {
    outcome o;
    io.restart();
    connector.open(record(o));
    io.run();
    return o;
}

void expect_refused(const outcome& o) {
    EXPECT_EQ(o.calls, 1);
    EXPECT_FALSE(o.stream);
    EXPECT_EQ(o.why.rfind("cannot connect: ", 0), 0u) << o.why;
}

TEST(socket_connector, a_listening_tcp_port_gives_a_stream_once) {
    asio::io_context io;
    asio::ip::tcp::acceptor listener(io, {asio::ip::make_address("127.0.0.1"), 0});
    const auto port = listener.local_endpoint().port();
    client_config config;
    socket_connector connector(
        io.get_executor(), parsed_address("127.0.0.1:" + std::to_string(port)), config, nullptr);
    outcome o;
    connector.open(record(o));
    EXPECT_EQ(o.calls, 0) << "a connect in progress never completes inside open()";
    io.run();
    EXPECT_EQ(o.calls, 1);
    EXPECT_TRUE(o.stream) << o.why;
}

TEST(socket_connector, a_closed_tcp_port_says_the_connect_was_refused) {
    asio::io_context io;
    std::uint16_t port = 0;
    {
        // A port that was just free: nothing listens there now.
        asio::ip::tcp::acceptor probe(io, {asio::ip::make_address("127.0.0.1"), 0});
        port = probe.local_endpoint().port();
    }
    client_config config;
    socket_connector connector(
        io.get_executor(), parsed_address("127.0.0.1:" + std::to_string(port)), config, nullptr);
    expect_refused(attempt(io, connector));
    EXPECT_EQ(connector.step(), "connect");
    EXPECT_EQ(connector.hint(), "");
}

TEST(socket_connector, an_aborted_attempt_says_nothing) {
    asio::io_context io;
    asio::ip::tcp::acceptor listener(io, {asio::ip::make_address("127.0.0.1"), 0});
    const auto port = listener.local_endpoint().port();
    client_config config;
    outcome o;
    {
        socket_connector connector(io.get_executor(),
                                   parsed_address("127.0.0.1:" + std::to_string(port)), config,
                                   nullptr);
        connector.open(record(o));
        connector.abort();
        io.run();
        EXPECT_EQ(o.calls, 0);
        // A second attempt after the abort is one of its own.
        io.restart();
        connector.open(record(o));
    }
    // Destroyed with the attempt under way: nothing either.
    io.run();
    EXPECT_EQ(o.calls, 0);
}

TEST(socket_connector, a_unix_socket_gives_a_stream_and_a_missing_one_says_why) {
    asio::io_context io;
    const std::string path = "/tmp/redlock-connector-" + std::to_string(::getpid()) + ".sock";
    ::unlink(path.c_str());
    client_config config;
    {
        asio::local::stream_protocol::acceptor listener(io, {path});
        socket_connector connector(io.get_executor(), parsed_address("unix://" + path), config,
                                   nullptr);
        const auto o = attempt(io, connector);
        EXPECT_EQ(o.calls, 1);
        EXPECT_TRUE(o.stream) << o.why;
    }
    ::unlink(path.c_str());
    socket_connector connector(io.get_executor(), parsed_address("unix://" + path), config,
                               nullptr);
    expect_refused(attempt(io, connector));
}

// The warning that anyone on the path can impersonate the node names which of the node's
// connections it is about, as node_connection's own log lines do.
TEST(socket_connector, an_unverified_tls_connection_is_named_in_its_warning) {
    asio::io_context io;
    asio::ip::tcp::acceptor listener(io, {asio::ip::make_address("127.0.0.1"), 0});
    const auto where = "127.0.0.1:" + std::to_string(listener.local_endpoint().port());
    client_config config;
    config.tls.dangerously_skip_verification = true;
    std::vector<std::string> warnings;
    config.log = [&](log_level level, std::string_view message) {
        if (level == log_level::warning) {
            warnings.emplace_back(message);
        }
    };
    std::string why;
    const auto tls = make_tls_context(config.tls, why);
    ASSERT_TRUE(tls) << why;
    for (const std::string role : {"", "subscriber"}) {
        warnings.clear();
        socket_connector connector(io.get_executor(), parsed_address("rediss://" + where), config,
                                   tls, role);
        outcome o;
        io.restart();
        connector.open(record(o));
        // The listener never answers the TLS handshake: the warning comes before it.
        while (warnings.empty() && io.run_one() > 0) {
        }
        connector.abort();
        io.run();
        EXPECT_EQ(o.calls, 0);
        ASSERT_EQ(warnings.size(), 1u);
        const auto name = "node rediss://" + where + (role.empty() ? ": " : " (subscriber): ");
        EXPECT_EQ(warnings[0].rfind(name + "TLS certificate NOT verified", 0), 0u) << warnings[0];
    }
}

} // namespace
} // namespace redlock::detail
