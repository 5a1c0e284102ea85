#ifndef REDLOCK_SRC_TRANSPORT_SOCKET_CONNECTOR_HPP
#define REDLOCK_SRC_TRANSPORT_SOCKET_CONNECTOR_HPP

#include "transport/stream_connector.hpp"

#include "redlock/config.hpp"
#include "redlock/node_address.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include <memory>
#include <string>

namespace redlock::detail {

/// stream_connector over real sockets: the host name resolved in the background (the first
/// IPv4 address, else the first), then TCP (no delay, keep-alive) or a unix socket, then TLS
/// for `rediss://` (verified as client_config::tls says). Sockets are close-on-exec.
class socket_connector final : public stream_connector {
public:
    /// `tls` is needed (non-null) when the address is `rediss://`; `config` outlives this.
    /// `role` names the connection in the log beside the address, as node_connection does
    /// ("subscriber"), so that a warning says which of a node's connections it is about.
    socket_connector(boost::asio::any_io_executor strand, node_address address,
                     const client_config& config, std::shared_ptr<boost::asio::ssl::context> tls,
                     std::string_view role = {});
    ~socket_connector() override;
    socket_connector(const socket_connector&) = delete;
    socket_connector& operator=(const socket_connector&) = delete;

    void open(opened_fn opened) override;
    void abort() noexcept override;
    std::string_view step() const noexcept override;
    std::string_view hint() const noexcept override;

private:
    struct attempt;

    void resolve(const std::shared_ptr<attempt>& a);
    void connect_tcp(const std::shared_ptr<attempt>& a,
                     const boost::asio::ip::tcp::endpoint& endpoint);
    void connect_unix(const std::shared_ptr<attempt>& a);
    template <typename Socket, typename Next>
    void connect_socket(const std::shared_ptr<attempt>& a, const std::shared_ptr<Socket>& socket,
                        const typename Socket::endpoint_type& endpoint, Next next);
    void start_tls(const std::shared_ptr<attempt>& a, boost::asio::ip::tcp::socket socket);

    boost::asio::any_io_executor strand_;
    node_address address_;
    const client_config& config_;
    std::shared_ptr<boost::asio::ssl::context> tls_;
    std::string display_; ///< the redacted address and the role, for the log
    // The attempt under way: its handlers hold it too, and see that it was aborted (or this
    // connector destroyed) by its `over` flag.
    std::shared_ptr<attempt> current_;
};

} // namespace redlock::detail

#endif
