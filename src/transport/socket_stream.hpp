#ifndef REDLOCK_SRC_TRANSPORT_SOCKET_STREAM_HPP
#define REDLOCK_SRC_TRANSPORT_SOCKET_STREAM_HPP

#include "transport/byte_stream.hpp"
#include "transport/tls_stream.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>

#include <variant>

namespace redlock::detail {

/// byte_stream over a real connected socket, whichever kind: TCP, unix, or TLS over TCP.
class socket_stream final : public byte_stream {
public:
    using tcp_socket = boost::asio::ip::tcp::socket;
    using unix_socket = boost::asio::local::stream_protocol::socket;
    using tls_socket = tls_stream;

    explicit socket_stream(tcp_socket socket)
        : socket_(std::move(socket)) {}
    explicit socket_stream(unix_socket socket)
        : socket_(std::move(socket)) {}
    explicit socket_stream(tls_socket socket)
        : socket_(std::move(socket)) {}

    void async_write(boost::asio::const_buffer buffer, io_handler handler) override;
    /// A TLS stream takes nothing here: its records always go through async_write.
    std::size_t write_now(boost::asio::const_buffer buffer, boost::system::error_code& ec) override;
    void async_read_some(boost::asio::mutable_buffer buffer, io_handler handler) override;
    /// A TLS session is not shut down politely: the node needs no close_notify.
    void close() noexcept override;

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
