#ifndef REDLOCK_SRC_TRANSPORT_TLS_STREAM_HPP
#define REDLOCK_SRC_TRANSPORT_TLS_STREAM_HPP

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/system/error_code.hpp>

#include <openssl/ssl.h>

#include <array>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

namespace redlock::detail {

/// What arrived from the node and OpenSSL has not consumed yet. On the heap: the BIO
/// keeps its address while the stream moves.
struct tls_ciphertext {
    int socket = -1;
    std::array<char, 17 * 1024> bytes{}; // one TLS record and a bit
    std::size_t begin = 0;
    std::size_t end = 0;
};

/// A TLS session that OpenSSL runs over a TCP socket through a BIO of our own: records are
/// sent with send(2) as OpenSSL produces them, and what arrives is read by the socket's own
/// asynchronous reads into a buffer OpenSSL takes its input from. Asio's ssl::stream instead
/// passes every record through a memory BIO pair and its engine's state machine (a copy and
/// several scheduler steps per record); waiting for readiness with async_wait instead of
/// reading re-arms epoll on every wait. Supports one read and one write in flight at a time,
/// all on the socket's executor (a strand), which is all a pipelined connection needs.
class tls_stream {
public:
    using tcp_socket = boost::asio::ip::tcp::socket;

    /// Takes a connected socket and a new session of `context`. Check `error` before use:
    /// set when OpenSSL could not create the session.
    tls_stream(tcp_socket socket, SSL_CTX* context, boost::system::error_code& error);

    tls_stream(tls_stream&&) noexcept = default;
    tls_stream& operator=(tls_stream&&) noexcept = default;

    SSL* native_handle() const noexcept { return session_.get(); }

    /// Runs the client handshake, then calls handler(error_code).
    template <typename Handler>
    void async_handshake(Handler&& handler) {
        run(handshake_op<std::decay_t<Handler>>{std::forward<Handler>(handler)}, true);
    }

    /// Writes all of `buffer`, then calls handler(error_code, bytes_written).
    template <typename Handler>
    void async_write(boost::asio::const_buffer buffer, Handler&& handler) {
        run(write_op<std::decay_t<Handler>>{buffer, 0, std::forward<Handler>(handler)}, true);
    }

    /// Reads what has arrived (at least one byte), then calls handler(error_code, bytes_read).
    template <typename Handler>
    void async_read_some(boost::asio::mutable_buffer buffer, Handler&& handler) {
        run(read_op<std::decay_t<Handler>>{buffer, 0, std::forward<Handler>(handler)}, true);
    }

    /// Cancels what is in flight (its handlers get operation_aborted, also those whose
    /// readiness had already been queued) and closes the socket. No close_notify: the node
    /// needs none.
    void close() noexcept;

private:
    enum class progress { finished, wants_read, wants_write };

    /// What an OpenSSL call that returned `result` asks for next; `error` set when it failed.
    static progress outcome_of(SSL* session, int result, boost::system::error_code& error);

    // One non-blocking step of each operation; `error` is set when it failed.
    progress handshake_step(boost::system::error_code& error);
    progress write_step(boost::asio::const_buffer buffer, std::size_t& written,
                        boost::system::error_code& error);
    progress read_step(boost::asio::mutable_buffer buffer, std::size_t& read,
                       boost::system::error_code& error);

    template <typename Handler>
    struct handshake_op {
        Handler handler;
        progress step(tls_stream& s, boost::system::error_code& e) { return s.handshake_step(e); }
        void complete(const boost::system::error_code& e) { std::move(handler)(e); }
    };
    template <typename Handler>
    struct write_op {
        boost::asio::const_buffer buffer;
        std::size_t written;
        Handler handler;
        progress step(tls_stream& s, boost::system::error_code& e) {
            return s.write_step(buffer, written, e);
        }
        void complete(const boost::system::error_code& e) { std::move(handler)(e, written); }
    };
    template <typename Handler>
    struct read_op {
        boost::asio::mutable_buffer buffer;
        std::size_t read;
        Handler handler;
        progress step(tls_stream& s, boost::system::error_code& e) {
            return s.read_step(buffer, read, e);
        }
        void complete(const boost::system::error_code& e) { std::move(handler)(e, read); }
    };

    // Steps `op` until it finishes, waiting for what OpenSSL asks for in between. A handler
    // never runs inside the call that started its operation, and nothing reaches OpenSSL (or
    // the socket's descriptor, which may already belong to another socket) after close().
    template <typename Op>
    void run(Op op, bool started_now) {
        boost::system::error_code error;
        progress p = progress::finished;
        if (closed_) {
            error = boost::asio::error::operation_aborted;
        } else {
            p = op.step(*this, error);
        }
        if (p == progress::finished) {
            if (started_now) {
                boost::asio::post(socket_.get_executor(),
                                  [op = std::move(op), error]() mutable { op.complete(error); });
            } else {
                op.complete(error);
            }
            return;
        }
        if (p == progress::wants_write) {
            socket_.async_wait(
                tcp_socket::wait_write,
                [this, op = std::move(op)](const boost::system::error_code& waited) mutable {
                    resume(std::move(op), waited);
                });
            return;
        }
        if (reading_) {
            // The other operation is reading the socket (a write can need input too: the
            // rest of a post-handshake message). One reader; this one waits for its input.
            waiting_for_input_.emplace_back(
                [this, op = std::move(op)](const boost::system::error_code& failed) mutable {
                    resume(std::move(op), failed);
                });
            return;
        }
        reading_ = true;
        socket_.async_read_some(boost::asio::buffer(input_->bytes),
                                [this, op = std::move(op)](const boost::system::error_code& failed,
                                                           std::size_t length) mutable {
                                    reading_ = false;
                                    if (!failed && !closed_) {
                                        input_->begin = 0;
                                        input_->end = length;
                                    }
                                    auto waiting = std::exchange(waiting_for_input_, {});
                                    resume(std::move(op), failed);
                                    for (auto& waiter : waiting) {
                                        std::move(waiter)(failed);
                                    }
                                });
    }

    template <typename Op>
    void resume(Op op, const boost::system::error_code& failed) {
        if (failed || closed_) {
            op.complete(failed ? failed : boost::asio::error::operation_aborted);
        } else {
            run(std::move(op), false);
        }
    }

    struct session_free {
        void operator()(SSL* s) const noexcept { SSL_free(s); }
    };

    tcp_socket socket_;
    bool closed_ = false;
    bool reading_ = false;
    // At most one operation: the other one holds the socket's read (see run).
    std::vector<boost::asio::any_completion_handler<void(boost::system::error_code)>>
        waiting_for_input_;
    std::unique_ptr<tls_ciphertext> input_;
    std::unique_ptr<SSL, session_free> session_;
};

} // namespace redlock::detail

#endif
