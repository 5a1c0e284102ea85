#ifndef REDLOCK_SRC_TRANSPORT_BYTE_STREAM_HPP
#define REDLOCK_SRC_TRANSPORT_BYTE_STREAM_HPP

#include "transport/tls_stream.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/system/error_code.hpp>

#include <type_traits>
#include <utility>
#include <variant>

namespace redlock::detail {

/// One connected socket to a node, whichever kind: TCP, unix, or TLS over TCP. Supports one
/// read and one write in flight at a time, which is all a pipelined connection needs.
class byte_stream {
public:
    using tcp_socket = boost::asio::ip::tcp::socket;
    using unix_socket = boost::asio::local::stream_protocol::socket;
    using tls_socket = tls_stream;

    explicit byte_stream(tcp_socket socket)
        : socket_(std::move(socket)) {}
    explicit byte_stream(unix_socket socket)
        : socket_(std::move(socket)) {}
    explicit byte_stream(tls_socket socket)
        : socket_(std::move(socket)) {}

    /// Writes all of `buffer`, then calls handler(error_code, bytes_written).
    template <typename Handler>
    void async_write(boost::asio::const_buffer buffer, Handler&& handler) {
        std::visit(
            [&](auto& s) {
                if constexpr (std::is_same_v<std::decay_t<decltype(s)>, tls_socket>) {
                    s.async_write(buffer, std::forward<Handler>(handler));
                } else {
                    boost::asio::async_write(s, buffer, std::forward<Handler>(handler));
                }
            },
            socket_);
    }

    /// Writes what the socket takes at once, without waiting, and returns how much that was
    /// (0 when it takes nothing now; `ec` only for a real failure). A TLS stream takes
    /// nothing here: its records always go through async_write. Never while an async_write
    /// is in flight: its bytes would be overtaken.
    std::size_t write_now(boost::asio::const_buffer buffer, boost::system::error_code& ec);

    /// Reads what has arrived (at least one byte), then calls handler(error_code, bytes_read).
    template <typename Handler>
    void async_read_some(boost::asio::mutable_buffer buffer, Handler&& handler) {
        std::visit([&](auto& s) { s.async_read_some(buffer, std::forward<Handler>(handler)); },
                   socket_);
    }

    /// Cancels what is in flight (its handlers get operation_aborted) and closes the socket.
    /// A TLS session is not shut down politely: the node needs no close_notify.
    void close() noexcept;

private:
    std::variant<tcp_socket, unix_socket, tls_socket> socket_;
};

/// Opens `socket` for `protocol` with close-on-exec set atomically (SOCK_CLOEXEC): a child
/// process started at any moment, by any thread, never inherits a connection to a node.
template <typename Socket>
void open_close_on_exec(Socket& socket, const typename Socket::protocol_type& protocol,
                        boost::system::error_code& ec);

} // namespace redlock::detail

#endif
