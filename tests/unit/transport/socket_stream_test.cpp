#include "transport/socket_stream.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/connect_pair.hpp>
#include <boost/asio/read.hpp>

#include <string>

namespace redlock::detail {
namespace {

namespace asio = boost::asio;
using unix_socket = socket_stream::unix_socket;

struct pair_of_sockets {
    asio::io_context io;
    unix_socket ours{io};
    unix_socket theirs{io};
    pair_of_sockets() {
        asio::local::connect_pair(ours, theirs);
        // A small buffer, so that the test fills it quickly.
        ours.set_option(asio::socket_base::send_buffer_size(4096));
    }
};

TEST(socket_stream, write_now_writes_what_the_socket_takes_and_never_waits) {
    pair_of_sockets p;
    socket_stream stream(std::move(p.ours));
    const std::string big(1 << 20, 'x');
    boost::system::error_code ec;
    const auto first = stream.write_now(asio::buffer(big), ec);
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_GT(first, 0u);
    EXPECT_LT(first, big.size());
    // Full: nothing more goes, and that is not an error.
    EXPECT_EQ(stream.write_now(asio::buffer(big), ec), 0u);
    EXPECT_FALSE(ec) << ec.message();
    // What went is what the peer reads, in order.
    std::string received(first, '\0');
    asio::read(p.theirs, asio::buffer(received));
    EXPECT_EQ(received, big.substr(0, first));
}

TEST(socket_stream, write_now_reports_a_closed_peer_as_an_error_without_a_signal) {
    pair_of_sockets p;
    socket_stream stream(std::move(p.ours));
    p.theirs.close();
    boost::system::error_code ec;
    EXPECT_EQ(stream.write_now(asio::buffer(std::string("PING\r\n")), ec), 0u);
    EXPECT_EQ(ec, asio::error::broken_pipe) << ec.message();
}

} // namespace
} // namespace redlock::detail
