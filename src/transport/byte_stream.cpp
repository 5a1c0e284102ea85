#include "transport/byte_stream.hpp"

#include <sys/socket.h>
#include <unistd.h>

namespace redlock::detail {

void byte_stream::close() noexcept {
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

template void open_close_on_exec(byte_stream::tcp_socket&, const boost::asio::ip::tcp&,
                                 boost::system::error_code&);
template void open_close_on_exec(byte_stream::unix_socket&,
                                 const boost::asio::local::stream_protocol&,
                                 boost::system::error_code&);

} // namespace redlock::detail
