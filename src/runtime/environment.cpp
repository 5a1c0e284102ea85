#include "runtime/environment.hpp"

#include "runtime/token.hpp"
#include "transport/asio_time_source.hpp"
#include "transport/node_connection.hpp"
#include "transport/sentinel_connector.hpp"
#include "transport/sentinel_link.hpp"
#include "transport/server_text.hpp"
#include "transport/socket_connector.hpp"
#include "transport/subscriber_connection.hpp"
#include "transport/tls_context.hpp"

#include "redlock/error.hpp"

#include <system_error>

namespace redlock::detail {

environment environment::production() {
    environment env;
    env.make_time = [](const boost::asio::any_io_executor& strand) {
        return std::make_unique<asio_time_source>(strand);
    };
    // One TLS context for all of a client's connections (subscribers included), made when
    // the first rediss:// node needs it.
    auto tls = std::make_shared<std::shared_ptr<boost::asio::ssl::context>>();
    auto context_for = [tls](const node_address& address, const client_config& config) {
        if (address.tls && !*tls) {
            std::string why;
            *tls = make_tls_context(config.tls, why);
            if (!*tls) {
                throw std::system_error(make_error_code(errc::invalid_argument), "TLS: " + why);
            }
        }
        return address.tls ? *tls : nullptr;
    };
    // A node that names a Sentinel group asks its Sentinels at every connect.
    auto connector_for = [context_for](const boost::asio::any_io_executor& strand,
                                       const node_address& address, const client_config& config,
                                       std::string_view role) -> std::unique_ptr<stream_connector> {
        if (address.kind == node_address::transport::sentinel) {
            return std::make_unique<sentinel_connector>(
                strand, address, config, context_for(address, config), [] { return clock::now(); },
                role);
        }
        return std::make_unique<socket_connector>(strand, address, config,
                                                  context_for(address, config), role);
    };
    env.make_link = [connector_for](const boost::asio::any_io_executor& strand,
                                    node_address address,
                                    const client_config& config) -> std::unique_ptr<node_link> {
        auto connector = connector_for(strand, address, config, {});
        auto connection = std::make_unique<node_connection>(
            strand, address, config, std::make_unique<asio_time_source>(strand),
            std::move(connector));
        if (address.kind != node_address::transport::sentinel) {
            return connection;
        }
        auto secrets = configured_secrets(config, address.password);
        if (!address.sentinel_password.empty()) {
            secrets.insert(secrets.begin(), address.sentinel_password);
        }
        // Failovers as the Sentinels announce them, on subscriber connections of its own.
        auto sentinel_subscriber = [strand, &config, connector_for](node_address at,
                                                                    std::size_t index,
                                                                    subscription_events& events) {
            auto opens = connector_for(strand, at, config, "Sentinel subscription");
            return std::make_unique<subscriber_connection>(
                strand, std::move(at), config, std::make_unique<asio_time_source>(strand),
                std::move(opens), index, events);
        };
        auto watch = std::make_unique<sentinel_watch>(
            address, std::move(secrets), sentinel_subscriber,
            std::make_unique<asio_time_source>(strand),
            std::max(config.reconnect_delay_max, std::chrono::milliseconds(1000)),
            [link = connection.get()](const std::string& host, std::uint16_t port,
                                      const std::string& by) {
                link->primary_moved(host, port, by);
            },
            [&config, node = address.redacted()](const std::string& message) {
                if (config.log) {
                    config.log(log_level::warning, "node " + node + ": " + message);
                }
            });
        return std::make_unique<sentinel_link>(std::move(connection), std::move(watch));
    };
    env.make_subscriber =
        [connector_for](const boost::asio::any_io_executor& strand, node_address address,
                        const client_config& config, std::size_t node,
                        subscription_events& events) -> std::unique_ptr<subscription_link> {
        auto connector = connector_for(strand, address, config, "subscriber");
        return std::make_unique<subscriber_connection>(strand, std::move(address), config,
                                                       std::make_unique<asio_time_source>(strand),
                                                       std::move(connector), node, events);
    };
    auto tokens = std::make_shared<token_source>();
    env.jitter_seed = std::hash<std::string>{}(tokens->next());
    env.next_token = [tokens] { return tokens->next(); };
    return env;
}

} // namespace redlock::detail
