#ifndef REDLOCK_SRC_TRANSPORT_SENTINEL_CONNECTOR_HPP
#define REDLOCK_SRC_TRANSPORT_SENTINEL_CONNECTOR_HPP

#include "transport/stream_connector.hpp"

#include "redlock/config.hpp"
#include "redlock/node_address.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ssl/context.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace redlock::detail {

/// stream_connector for a node that names a Sentinel group (`redis-sentinel://...#name`).
/// Every open asks all the node's Sentinels at once, each on a connection of its own (AUTH
/// with the Sentinels' own credentials when given, `SENTINEL get-master-addr-by-name` and
/// `SENTINEL MASTER`), and connects, as socket_connector does, to the primary that a
/// majority of them name; with no such majority it fails, naming what each one said. A
/// Sentinel cut off with an old primary, or one that has not heard of a failover yet, is
/// outvoted. The most recent `role-reported-time` among the Sentinels that named the primary
/// says since when, at the latest, it holds its role: primary_since(). The connect timeout
/// is node_connection's; a Sentinel that never answers only waits for the others.
class sentinel_connector final : public stream_connector {
public:
    /// `now` reads the connection's clock. `tls` is needed (non-null) for
    /// `rediss-sentinel://`, which is TLS to the Sentinels and to the primary alike.
    sentinel_connector(boost::asio::any_io_executor strand, node_address address,
                       const client_config& config, std::shared_ptr<boost::asio::ssl::context> tls,
                       std::function<clock::time_point()> now, std::string_view role = {});
    ~sentinel_connector() override;
    sentinel_connector(const sentinel_connector&) = delete;
    sentinel_connector& operator=(const sentinel_connector&) = delete;

    void open(opened_fn opened) override;
    void abort() noexcept override;
    std::string_view step() const noexcept override;
    std::string_view hint() const noexcept override;
    std::optional<clock::time_point> primary_since() const override { return primary_since_; }
    std::optional<std::pair<std::string, std::uint16_t>> reached() const override {
        return reached_;
    }

private:
    struct attempt;
    struct exchange;

    void ask(const std::shared_ptr<attempt>& a, std::size_t sentinel);
    void read_answer(const std::shared_ptr<attempt>& a, std::size_t sentinel);
    /// One Sentinel is done: with the primary it names (`host` empty when it named none)
    /// and the age of that primary's role (0 when it did not say), or with `why` it could
    /// not say.
    void answered(const std::shared_ptr<attempt>& a, std::size_t sentinel, std::string host,
                  std::uint16_t port, std::chrono::milliseconds role_age, std::string why);
    void connect_primary(const std::shared_ptr<attempt>& a, std::size_t chosen);

    boost::asio::any_io_executor strand_;
    node_address address_;
    const client_config& config_;
    std::shared_ptr<boost::asio::ssl::context> tls_;
    std::function<clock::time_point()> now_;
    std::string role_;
    std::vector<std::string> secrets_;
    std::string request_; ///< what every Sentinel is sent, formatted once
    std::size_t replies_expected_ = 0;
    std::shared_ptr<attempt> current_;
    std::optional<clock::time_point> primary_since_;
    std::optional<std::pair<std::string, std::uint16_t>> reached_;
};

/// Whether `host`, from a Sentinel, can be a primary's address: the characters of a host
/// name or an IP literal, and none of `secrets` inside. Anything else (a control character,
/// a NUL that getaddrinfo would stop at, a password sent back) is no address.
bool plausible_sentinel_host(std::string_view host, const std::vector<std::string>& secrets);

} // namespace redlock::detail

#endif
