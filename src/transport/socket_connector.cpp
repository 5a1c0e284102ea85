#include "transport/socket_connector.hpp"

#include "transport/socket_stream.hpp"
#include "transport/tls_context.hpp"

#include <boost/asio/ip/tcp.hpp>

#include <utility>

namespace redlock::detail {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {
constexpr std::string_view tls_step = "TLS handshake";
} // namespace

struct socket_connector::attempt {
    opened_fn opened;
    bool over = false;
    std::string step;
    /// Closes the socket (or cancels the resolve) of the step under way.
    std::function<void()> close;

    /// Hands the outcome over once; an attempt already over (aborted) says nothing.
    void finish(std::unique_ptr<byte_stream> stream, std::string why) {
        if (over) {
            return;
        }
        over = true;
        close = nullptr;
        std::exchange(opened, nullptr)(std::move(stream), std::move(why));
    }
};

socket_connector::socket_connector(asio::any_io_executor strand, node_address address,
                                   const client_config& config,
                                   std::shared_ptr<asio::ssl::context> tls, std::string_view role)
    : strand_(std::move(strand))
    , address_(std::move(address))
    , config_(config)
    , tls_(std::move(tls))
    , display_(address_.redacted() + (role.empty() ? "" : " (" + std::string(role) + ")")) {}

socket_connector::~socket_connector() {
    abort();
}

void socket_connector::abort() noexcept {
    if (!current_) {
        return;
    }
    auto a = std::exchange(current_, nullptr);
    a->over = true;
    a->opened = nullptr;
    if (auto close = std::exchange(a->close, nullptr)) {
        close();
    }
}

std::string_view socket_connector::step() const noexcept {
    return current_ ? std::string_view(current_->step) : std::string_view("connect");
}

std::string_view socket_connector::hint() const noexcept {
    return step() == tls_step ? "is it a TLS port?" : "";
}

void socket_connector::open(opened_fn opened) {
    abort();
    current_ = std::make_shared<attempt>();
    current_->opened = std::move(opened);
    const auto a = current_;
    if (address_.kind == node_address::transport::unix_socket) {
        connect_unix(a);
        return;
    }
    error_code not_numeric;
    const auto numeric = asio::ip::make_address(address_.host, not_numeric);
    if (not_numeric) {
        resolve(a);
        return;
    }
    connect_tcp(a, {numeric, address_.port});
}

void socket_connector::resolve(const std::shared_ptr<attempt>& a) {
    a->step = "resolving " + address_.host;
    auto resolver = std::make_shared<asio::ip::tcp::resolver>(strand_);
    a->close = [resolver] { resolver->cancel(); };
    resolver->async_resolve(
        address_.host, std::to_string(address_.port),
        [this, a, resolver](const error_code& ec,
                            const asio::ip::tcp::resolver::results_type& results) {
            // getaddrinfo cannot be interrupted: this may come after the deadline, or after
            // this connector is gone, and still report success.
            if (a->over) {
                return;
            }
            if (ec || results.empty()) {
                a->finish(nullptr, "cannot resolve " + address_.host + ": " +
                                       (ec ? ec.message() : std::string("no address")));
                return;
            }
            // The first IPv4 address, else the first one.
            auto chosen = results.begin()->endpoint();
            for (const auto& entry : results) {
                if (entry.endpoint().address().is_v4()) {
                    chosen = entry.endpoint();
                    break;
                }
            }
            connect_tcp(a, chosen);
        });
}

void socket_connector::connect_tcp(const std::shared_ptr<attempt>& a,
                                   const asio::ip::tcp::endpoint& endpoint) {
    auto socket = std::make_shared<socket_stream::tcp_socket>(strand_);
    error_code ec;
    open_close_on_exec(*socket, endpoint.protocol(), ec);
    if (!ec) {
        socket->set_option(asio::ip::tcp::no_delay(true), ec);
    }
    if (!ec) {
        socket->set_option(asio::socket_base::keep_alive(true), ec);
    }
    if (ec) {
        a->finish(nullptr, "cannot open a socket: " + ec.message());
        return;
    }
    connect_socket(a, socket, endpoint, [this, a](socket_stream::tcp_socket connected) {
        if (address_.tls) {
            start_tls(a, std::move(connected));
        } else {
            a->finish(std::make_unique<socket_stream>(std::move(connected)), {});
        }
    });
}

void socket_connector::connect_unix(const std::shared_ptr<attempt>& a) {
    auto socket = std::make_shared<socket_stream::unix_socket>(strand_);
    error_code ec;
    open_close_on_exec(*socket, asio::local::stream_protocol(), ec);
    if (ec) {
        a->finish(nullptr, "cannot open a socket: " + ec.message());
        return;
    }
    connect_socket(a, socket, asio::local::stream_protocol::endpoint(address_.path),
                   [a](socket_stream::unix_socket connected) {
                       a->finish(std::make_unique<socket_stream>(std::move(connected)), {});
                   });
}

template <typename Socket, typename Next>
void socket_connector::connect_socket(const std::shared_ptr<attempt>& a,
                                      const std::shared_ptr<Socket>& socket,
                                      const typename Socket::endpoint_type& endpoint, Next next) {
    a->close = [socket] {
        error_code ignored;
        socket->close(ignored);
    };
    a->step = "connect";
    socket->async_connect(endpoint,
                          [a, socket, next = std::move(next)](const error_code& ec) mutable {
                              if (a->over) {
                                  return;
                              }
                              if (ec) {
                                  a->finish(nullptr, "cannot connect: " + ec.message());
                                  return;
                              }
                              next(std::move(*socket));
                          });
}

void socket_connector::start_tls(const std::shared_ptr<attempt>& a, asio::ip::tcp::socket socket) {
    error_code ec;
    auto session = std::make_shared<tls_stream>(std::move(socket), tls_->native_handle(), ec);
    if (ec) {
        a->finish(nullptr, "cannot start a TLS session: " + ec.message());
        return;
    }
    std::string why;
    if (!prepare_tls_session(session->native_handle(), config_.tls, address_.host, why)) {
        a->finish(nullptr, why);
        return;
    }
    if (config_.tls.dangerously_skip_verification && config_.log) {
        config_.log(log_level::warning,
                    "node " + display_ +
                        ": TLS certificate NOT verified (dangerously_skip_verification): anyone "
                        "on the path can impersonate this node");
    }
    a->close = [session] { session->close(); };
    a->step = tls_step;
    session->async_handshake([a, session](const error_code& ec) {
        if (a->over) {
            return;
        }
        if (ec) {
            a->finish(nullptr, tls_failure_reason(session->native_handle(), ec));
            return;
        }
        a->finish(std::make_unique<socket_stream>(std::move(*session)), {});
    });
}

} // namespace redlock::detail
