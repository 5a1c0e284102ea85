// The TLS stream on its own against a real TLS redis-server: the handshake and its refusal,
// a write of many records that outgrows the socket's send buffer (OpenSSL asks to wait for
// writability) while a read is in flight on the same session, a reply of many records, and
// the node closing the connection. Then the stream against a server scripted in the test
// (OpenSSL over memory BIOs), which decides which TLS records arrive and when: a KeyUpdate
// while a write is stalled, a post-handshake message split across records, close() with a
// completion already queued, zero-length operations.
#include "transport/tls_stream.hpp"

#include "support/tls_nodes.hpp"
#include "transport/tls_context.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <gtest/gtest.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

namespace redlock::test {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using detail::tls_stream;
using namespace std::chrono_literals;

/// Keeps one read in flight on `stream` until `enough` bytes arrived or the stream fails.
struct reader {
    explicit reader(tls_stream& s, std::size_t enough_bytes = std::string::npos)
        : stream(s)
        , enough(enough_bytes) {}
    reader(const reader&) = delete;
    reader& operator=(const reader&) = delete;

    void start() {
        stream.async_read_some(asio::buffer(chunk), [this](const error_code& e, std::size_t n) {
            received.append(chunk.data(), n);
            if (e) {
                error = e;
            } else if (received.size() < enough) {
                start();
            }
        });
    }
    std::string failure() const { return error ? error->message() : ""; }

    tls_stream& stream;
    std::size_t enough;
    std::string received;
    std::optional<error_code> error;
    std::array<char, 16384> chunk{};
};

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

    reader in(*stream, expected.size());
    in.start(); // in flight on the same session for the whole write
    error_code write_error;
    std::size_t written = 0;
    stream->async_write(asio::buffer(request), [&](const error_code& e, std::size_t n) {
        write_error = e;
        written = n;
    });
    io_.run();
    EXPECT_FALSE(write_error) << write_error.message();
    EXPECT_EQ(written, request.size());
    EXPECT_FALSE(in.error) << in.failure();
    ASSERT_EQ(in.received.size(), expected.size());
    EXPECT_TRUE(in.received == expected);
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
    reader in(*stream);
    in.start();
    io_.run();
    EXPECT_EQ(in.received, "+OK\r\n");
    EXPECT_EQ(in.error, asio::error::eof) << in.failure();
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

/// One TLS server connection, run by `script` on its own thread. The server's SSL object
/// reads from `rbio` and writes to `wbio` (memory BIOs); the script moves bytes to and from
/// the socket itself, so it can split, delay or forge records.
class scripted_tls_server {
public:
    using script_fn = std::function<void(scripted_tls_server&)>;

    scripted_tls_server(const test_certificates& certs, script_fn script,
                        std::function<void(SSL_CTX*)> tune = {}) {
        ctx_ = SSL_CTX_new(TLS_server_method());
        SSL_CTX_use_certificate_chain_file(ctx_, certs.server_certificate().c_str());
        SSL_CTX_use_PrivateKey_file(ctx_, certs.server_key().c_str(), SSL_FILETYPE_PEM);
        if (tune) {
            tune(ctx_);
        }
        listen_ = ::socket(AF_INET, SOCK_STREAM, 0);
        int one = 1;
        ::setsockopt(listen_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof a;
        if (::bind(listen_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
            ::getsockname(listen_, reinterpret_cast<sockaddr*>(&a), &length) != 0) {
            throw std::runtime_error("scripted_tls_server: cannot bind a port");
        }
        port_ = ntohs(a.sin_port);
        ::listen(listen_, 4);
        thread_ = std::thread([this, script = std::move(script)] {
            fd_ = ::accept(listen_, nullptr, nullptr);
            ssl_ = SSL_new(ctx_);
            rbio_ = BIO_new(BIO_s_mem());
            wbio_ = BIO_new(BIO_s_mem());
            SSL_set_bio(ssl_, rbio_, wbio_);
            SSL_set_accept_state(ssl_);
            script(*this);
        });
    }
    ~scripted_tls_server() {
        stop_ = true;
        thread_.join();
        if (ssl_) {
            SSL_free(ssl_);
        }
        if (fd_ >= 0) {
            ::close(fd_);
        }
        ::close(listen_);
        SSL_CTX_free(ctx_);
    }

    int port() const { return port_; }
    bool stopping() const { return stop_; }

    /// What the server's SSL object wrote, not yet sent.
    std::string take_output() {
        std::string out;
        char buf[4096];
        int n;
        while ((n = BIO_read(wbio_, buf, sizeof buf)) > 0) {
            out.append(buf, static_cast<std::size_t>(n));
        }
        return out;
    }
    void send_raw(const std::string& bytes) {
        std::size_t at = 0;
        while (at < bytes.size()) {
            const auto n = ::send(fd_, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
            if (n <= 0) {
                return;
            }
            at += static_cast<std::size_t>(n);
        }
    }
    void flush() { send_raw(take_output()); }
    /// Reads what the client sent within `wait` into the server's SSL object; false on EOF.
    bool pump_in(std::chrono::milliseconds wait) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(wait.count())) <= 0) {
            return true;
        }
        char buf[65536];
        const auto n = ::recv(fd_, buf, sizeof buf, 0);
        if (n <= 0) {
            return false;
        }
        BIO_write(rbio_, buf, static_cast<int>(n));
        return true;
    }
    bool handshake() {
        for (int i = 0; i < 200; ++i) {
            const int r = SSL_accept(ssl_);
            flush();
            if (r == 1) {
                return true;
            }
            if (SSL_get_error(ssl_, r) != SSL_ERROR_WANT_READ || !pump_in(50ms)) {
                return false;
            }
        }
        return false;
    }
    /// Reads and discards application data until the client goes or the test ends.
    void drain() {
        char buf[65536];
        while (!stop_ && pump_in(20ms)) {
            while (SSL_read(ssl_, buf, sizeof buf) > 0) {
            }
            flush();
        }
    }
    SSL* ssl() { return ssl_; }

private:
    SSL_CTX* ctx_ = nullptr;
    int listen_ = -1;
    int fd_ = -1;
    int port_ = 0;
    SSL* ssl_ = nullptr;
    BIO* rbio_ = nullptr;
    BIO* wbio_ = nullptr;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

/// Splits TLS records.
std::vector<std::string> records_of(const std::string& bytes) {
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at + 5 <= bytes.size()) {
        const std::size_t len = (static_cast<unsigned char>(bytes[at + 3]) << 8) |
                                static_cast<unsigned char>(bytes[at + 4]);
        out.push_back(bytes.substr(at, 5 + len));
        at += 5 + len;
    }
    return out;
}

class tls_stream_scripted_test : public ::testing::Test {
protected:
    std::optional<tls_stream> connect(int port) {
        tls_options options;
        options.ca_file = certs_.ca();
        std::string why;
        context_ = detail::make_tls_context(options, why);
        EXPECT_TRUE(context_) << why;
        asio::ip::tcp::socket socket(io_);
        error_code ec;
        socket.connect({asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)},
                       ec);
        EXPECT_FALSE(ec) << ec.message();
        std::optional<tls_stream> stream;
        stream.emplace(std::move(socket), context_->native_handle(), ec);
        EXPECT_TRUE(detail::prepare_tls_session(stream->native_handle(), options, "127.0.0.1", why))
            << why;
        std::optional<error_code> handshake;
        stream->async_handshake([&](const error_code& e) { handshake = e; });
        io_.run_for(5s);
        io_.restart();
        EXPECT_TRUE(handshake);
        EXPECT_FALSE(handshake && *handshake) << handshake->message();
        return stream;
    }

    test_certificates certs_;
    asio::io_context io_;
    std::shared_ptr<asio::ssl::context> context_;
};

// TLS 1.3 allows a KeyUpdate (update_requested) at any time. The server sends one while the
// client's write is stalled (server not reading; OpenSSL holds a partly sent record). The
// read op's SSL_read must answer with its own KeyUpdate while the write is pending.
TEST_F(tls_stream_scripted_test, key_update_while_a_write_is_stalled) {
    scripted_tls_server server(certs_, [](scripted_tls_server& s) {
        if (!s.handshake()) {
            return;
        }
        std::this_thread::sleep_for(700ms); // the client fills the socket buffers meanwhile
        SSL_key_update(s.ssl(), SSL_KEY_UPDATE_REQUESTED);
        SSL_write(s.ssl(), "x", 1);
        s.flush();
        s.drain();
    });
    auto stream = connect(server.port());
    ASSERT_TRUE(stream);
    std::string big(32 << 20, 'a');
    std::optional<error_code> write_error;
    reader in(*stream);
    in.start();
    stream->async_write(asio::buffer(big),
                        [&](const error_code& e, std::size_t) { write_error = e; });
    io_.run_for(6s);
    ASSERT_TRUE(write_error) << "write never completed";
    EXPECT_FALSE(*write_error) << "write: " << write_error->message();
    EXPECT_FALSE(in.error) << "read: " << in.failure() << " ("
                           << (in.error
                                   ? detail::tls_failure_reason(stream->native_handle(), *in.error)
                                   : "")
                           << ")";
    EXPECT_EQ(in.received, "x");
    stream->close();
}

// A post-handshake message split across two records (legal: a large session ticket, or a
// small max_send_fragment): after the first record SSL_read leaves OpenSSL mid-message ("in
// init"), and an SSL_write then wants to read: it must wait for the read in flight to bring
// the rest, not fail.
TEST_F(tls_stream_scripted_test, a_write_while_a_new_session_ticket_is_half_received) {
    scripted_tls_server server(
        certs_,
        [](scripted_tls_server& s) {
            // The handshake, but hold back what SSL_accept writes last (the tickets).
            for (int i = 0; i < 200; ++i) {
                const int r = SSL_accept(s.ssl());
                if (r == 1) {
                    break;
                }
                s.flush();
                if (SSL_get_error(s.ssl(), r) != SSL_ERROR_WANT_READ || !s.pump_in(50ms)) {
                    return;
                }
            }
            const auto records = records_of(s.take_output());
            ASSERT_GE(records.size(), 2u);
            s.send_raw(records[0]); // first fragment of the ticket
            std::this_thread::sleep_for(500ms);
            for (std::size_t i = 1; i < records.size(); ++i) {
                s.send_raw(records[i]);
            }
            s.drain();
        },
        [](SSL_CTX* ctx) {
            SSL_CTX_set_num_tickets(ctx, 1);
            SSL_CTX_set_max_send_fragment(ctx, 512);
            SSL_CTX_set_session_ticket_cb(
                ctx,
                [](SSL* ssl, void*) -> int {
                    static const std::string appdata(3000, 'z'); // a ticket of ~3 KB
                    return SSL_SESSION_set1_ticket_appdata(SSL_get_session(ssl), appdata.data(),
                                                           appdata.size());
                },
                [](SSL*, SSL_SESSION*, const unsigned char*, size_t, SSL_TICKET_STATUS,
                   void*) -> SSL_TICKET_RETURN { return SSL_TICKET_RETURN_IGNORE; },
                nullptr);
        });
    auto stream = connect(server.port());
    ASSERT_TRUE(stream);
    std::optional<error_code> write_error;
    reader in(*stream);
    in.start();
    asio::steady_timer later(io_, 200ms);
    const std::string ping = "*1\r\n$4\r\nPING\r\n";
    later.async_wait([&](const error_code&) {
        stream->async_write(asio::buffer(ping),
                            [&](const error_code& e, std::size_t) { write_error = e; });
    });
    io_.run_for(2s);
    ASSERT_TRUE(write_error) << "write never completed";
    EXPECT_FALSE(*write_error) << "write: " << write_error->message();
    EXPECT_FALSE(in.error) << "read: " << in.failure();
    stream->close();
}

// close() while the completion of a successful socket read is already queued: the queued
// handler must not run OpenSSL, whose BIO would send (here a fatal alert for the garbage
// record) to the descriptor number, which another socket may have taken meanwhile.
TEST_F(tls_stream_scripted_test,
       after_close_a_queued_read_completion_sends_nothing_to_a_reused_descriptor) {
    std::atomic<bool> garbage_sent{false};
    scripted_tls_server server(certs_, [&](scripted_tls_server& s) {
        if (!s.handshake()) {
            return;
        }
        std::string record = "\x17\x03\x03";
        record += '\0';
        record += '\x40';
        record += std::string(0x40, '\x5a'); // fails decryption: bad_record_mac
        s.send_raw(record);
        garbage_sent = true;
        while (!s.stopping()) {
            std::this_thread::sleep_for(10ms);
        }
    });
    auto stream = connect(server.port());
    ASSERT_TRUE(stream);
    while (!garbage_sent) {
        std::this_thread::sleep_for(5ms);
    }
    std::this_thread::sleep_for(100ms); // the record is in the client's receive buffer
    std::optional<error_code> read_error;
    std::array<char, 256> chunk{};
    // The socket read completes at once (Asio reads speculatively); its handler is queued.
    stream->async_read_some(asio::buffer(chunk),
                            [&](const error_code& e, std::size_t) { read_error = e; });
    stream->close();
    // Another connection of the process gets the lowest free descriptor: the one just closed.
    int pair[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, pair), 0);
    io_.run_for(2s);
    char leaked[256];
    const auto n = ::recv(pair[1], leaked, sizeof leaked, 0);
    EXPECT_LE(n, 0) << "bytes of the closed TLS session went to an unrelated socket: " << n
                    << " bytes, first byte 0x" << std::hex
                    << (n > 0 ? static_cast<unsigned>(static_cast<unsigned char>(leaked[0])) : 0u);
    ASSERT_TRUE(read_error);
    EXPECT_EQ(*read_error, asio::error::operation_aborted)
        << "read after close() completed with: " << read_error->message();
    ::close(pair[0]);
    ::close(pair[1]);
}

// Zero-length reads and writes: Asio's convention is success with 0 bytes at once.
TEST_F(tls_stream_scripted_test, zero_length_read_and_write) {
    scripted_tls_server server(certs_, [](scripted_tls_server& s) {
        if (s.handshake()) {
            s.drain();
        }
    });
    auto stream = connect(server.port());
    ASSERT_TRUE(stream);
    std::optional<error_code> read_error, write_error;
    stream->async_read_some(asio::mutable_buffer(),
                            [&](const error_code& e, std::size_t) { read_error = e; });
    stream->async_write(asio::const_buffer(),
                        [&](const error_code& e, std::size_t) { write_error = e; });
    io_.run_for(1s);
    ASSERT_TRUE(read_error) << "0-byte read never completed";
    EXPECT_FALSE(*read_error) << "0-byte read: " << read_error->message();
    ASSERT_TRUE(write_error);
    EXPECT_FALSE(*write_error) << write_error->message();
    stream->close();
}

} // namespace
} // namespace redlock::test
