// The TLS stream on its own against a real TLS redis-server: the handshake and its refusal,
// a write of many records that outgrows the socket's send buffer (OpenSSL asks to wait for
// writability) while a read is in flight on the same session, a reply of many records, and
// the node closing the connection.
#include "transport/tls_stream.hpp"

#include "support/tls_nodes.hpp"
#include "transport/tls_context.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <gtest/gtest.h>

#include <array>
#include <functional>
#include <optional>
#include <string>

namespace redlock::test {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using detail::tls_stream;

class tls_stream_test : public ::testing::Test {
protected:
    /// A handshaken session with `node`, or a failed test.
    std::optional<tls_stream> connect(const tls_node& node, const std::string& ca,
                                      error_code& handshake_error) {
        tls_options options;
        options.ca_file = ca;
        std::string why;
        context_ = detail::make_tls_context(options, why);
        EXPECT_TRUE(context_) << why;
        if (!context_) {
            return std::nullopt;
        }
        asio::ip::tcp::socket socket(io_);
        error_code ec;
        socket.connect(
            {asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(node.port())}, ec);
        EXPECT_FALSE(ec) << ec.message();
        std::optional<tls_stream> stream;
        stream.emplace(std::move(socket), context_->native_handle(), ec);
        EXPECT_FALSE(ec) << ec.message();
        EXPECT_TRUE(detail::prepare_tls_session(stream->native_handle(), options, "127.0.0.1", why))
            << why;
        bool done = false;
        stream->async_handshake([&](const error_code& e) {
            handshake_error = e;
            done = true;
        });
        io_.run();
        io_.restart();
        EXPECT_TRUE(done);
        return stream;
    }

    static std::string command(const std::vector<std::string>& words) {
        std::string out = "*" + std::to_string(words.size()) + "\r\n";
        for (const auto& w : words) {
            out += "$" + std::to_string(w.size()) + "\r\n" + w + "\r\n";
        }
        return out;
    }

    test_certificates certificates_;
    asio::io_context io_;
    std::shared_ptr<asio::ssl::context> context_;
};

TEST_F(tls_stream_test, a_write_of_many_records_and_a_reply_of_many_records_arrive_whole) {
    tls_node node(certificates_, {certificates_.server_certificate(), certificates_.server_key(),
                                  certificates_.ca(), "no"});
    error_code handshake;
    auto stream = connect(node, certificates_.ca(), handshake);
    ASSERT_TRUE(stream && !handshake) << handshake.message();

    // 24 MiB: far more than a socket send buffer holds while the node is busy reading.
    std::string value(24 << 20, '\0');
    for (std::size_t i = 0; i < value.size(); ++i) {
        value[i] = static_cast<char>('a' + i % 26);
    }
    const std::string request = command({"SET", "tls_stream:big", value}) +
                                command({"GET", "tls_stream:big"}) +
                                command({"DEL", "tls_stream:big"});
    const std::string expected =
        "+OK\r\n$" + std::to_string(value.size()) + "\r\n" + value + "\r\n:1\r\n";

    error_code read_error;
    std::string received;
    std::array<char, 16384> chunk{};
    std::function<void()> next = [&] {
        stream->async_read_some(asio::buffer(chunk), [&](const error_code& e, std::size_t n) {
            received.append(chunk.data(), n);
            if (e) {
                read_error = e;
            } else if (received.size() < expected.size()) {
                next();
            }
        });
    };
    next(); // in flight on the same session for the whole write
    error_code write_error;
    std::size_t written = 0;
    stream->async_write(asio::buffer(request), [&](const error_code& e, std::size_t n) {
        write_error = e;
        written = n;
    });
    io_.run();
    EXPECT_FALSE(write_error) << write_error.message();
    EXPECT_EQ(written, request.size());
    EXPECT_FALSE(read_error) << read_error.message();
    ASSERT_EQ(received.size(), expected.size());
    EXPECT_TRUE(received == expected);
    EXPECT_EQ(node.dbsize(), 0);
}

TEST_F(tls_stream_test, the_node_closing_the_connection_ends_the_read_with_eof) {
    tls_node node(certificates_, {certificates_.server_certificate(), certificates_.server_key(),
                                  certificates_.ca(), "no"});
    error_code handshake;
    auto stream = connect(node, certificates_.ca(), handshake);
    ASSERT_TRUE(stream && !handshake) << handshake.message();
    const std::string quit = command({"QUIT"});
    stream->async_write(asio::buffer(quit), [](const error_code&, std::size_t) {});
    error_code read_error;
    const auto received = [&] {
        std::string all;
        std::array<char, 256> chunk{};
        std::function<void()> next = [&] {
            stream->async_read_some(asio::buffer(chunk), [&](const error_code& e, std::size_t n) {
                all.append(chunk.data(), n);
                if (e) {
                    read_error = e;
                } else {
                    next();
                }
            });
        };
        next();
        io_.run();
        return all;
    }();
    EXPECT_EQ(received, "+OK\r\n");
    EXPECT_EQ(read_error, asio::error::eof) << read_error.message();
}

TEST_F(tls_stream_test, a_certificate_from_an_unknown_ca_fails_the_handshake_with_its_reason) {
    tls_node node(certificates_, {certificates_.server_certificate(), certificates_.server_key(),
                                  certificates_.ca(), "no"});
    error_code handshake;
    auto stream = connect(node, certificates_.unrelated_ca(), handshake);
    ASSERT_TRUE(stream);
    ASSERT_TRUE(handshake);
    EXPECT_EQ(detail::tls_failure_reason(stream->native_handle(), handshake)
                  .rfind("certificate verify failed: ", 0),
              0u)
        << detail::tls_failure_reason(stream->native_handle(), handshake);
}

TEST_F(tls_stream_test, close_ends_a_pending_read_with_operation_aborted) {
    tls_node node(certificates_, {certificates_.server_certificate(), certificates_.server_key(),
                                  certificates_.ca(), "no"});
    error_code handshake;
    auto stream = connect(node, certificates_.ca(), handshake);
    ASSERT_TRUE(stream && !handshake) << handshake.message();
    std::array<char, 64> chunk{};
    std::optional<error_code> read_error;
    stream->async_read_some(asio::buffer(chunk),
                            [&](const error_code& e, std::size_t) { read_error = e; });
    asio::post(io_, [&] { stream->close(); });
    io_.run();
    ASSERT_TRUE(read_error);
    EXPECT_EQ(*read_error, asio::error::operation_aborted);
}

} // namespace
} // namespace redlock::test
