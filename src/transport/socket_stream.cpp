#include "transport/socket_stream.hpp"

#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <sys/socket.h>
#include <unistd.h>

namespace redlock::detail {

void socket_stream::async_write(boost::asio::const_buffer buffer, io_handler handler) {
    std::visit(
        [&](auto& s) {
            if constexpr (std::is_same_v<std::decay_t<decltype(s)>, tls_socket>) {
                s.async_write(buffer, std::move(handler));
            } else {
                boost::asio::async_write(s, buffer, std::move(handler));
            }
        },
        socket_);
}

void socket_stream::async_read_some(boost::asio::mutable_buffer buffer, io_handler handler) {
    std::visit([&](auto& s) { s.async_read_some(buffer, std::move(handler)); }, socket_);
}

void socket_stream::close() noexcept {
    boost::system::error_code ignored;
    std::visit(
        [&](auto& s) {
            if constexpr (std::is_same_v<std::decay_t<decltype(s)>, tls_socket>) {
                s.close();
            } else {
                s.close(ignored);
            }
        },
        socket_);
}

std::size_t socket_stream::write_now(boost::asio::const_buffer buffer,
                                     boost::system::error_code& ec) {
    ec = {};
    return std::visit(
        [&](auto& s) -> std::size_t {
            if constexpr (std::is_same_v<std::decay_t<decltype(s)>, tls_socket>) {
                return 0;
            } else {
                if (!s.non_blocking()) {
                    s.non_blocking(true, ec);
                    if (ec) {
                        return 0;
                    }
                }
                const auto written = s.write_some(buffer, ec);
                if (ec == boost::asio::error::would_block || ec == boost::asio::error::try_again) {
                    ec = {};
                    return 0;
                }
                return ec ? 0 : written;
            }
        },
        socket_);
}

template <typename Socket>
void open_close_on_exec(Socket& socket, const typename Socket::protocol_type& protocol,
                        boost::system::error_code& ec) {
    const int fd = ::socket(protocol.family(), protocol.type() | SOCK_CLOEXEC, protocol.protocol());
    if (fd < 0) {
        ec.assign(errno, boost::system::system_category());
        return;
    }
    socket.assign(protocol, fd, ec);
    if (ec) {
        ::close(fd);
    }
}

template void open_close_on_exec(socket_stream::tcp_socket&, const boost::asio::ip::tcp&,
                                 boost::system::error_code&);
template void open_close_on_exec(socket_stream::unix_socket&,
                                 const boost::asio::local::stream_protocol&,
                                 boost::system::error_code&);

} // namespace redlock::detail
