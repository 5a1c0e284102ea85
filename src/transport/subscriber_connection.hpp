#ifndef REDLOCK_SRC_TRANSPORT_SUBSCRIBER_CONNECTION_HPP
#define REDLOCK_SRC_TRANSPORT_SUBSCRIBER_CONNECTION_HPP

#include "transport/node_connection.hpp"
#include "transport/subscription_link.hpp"

#include <memory>

namespace redlock::detail {

/// subscription_link over a node_connection in its subscriber role: connect, TLS,
/// AUTH/SELECT and the bounded reader are the command connection's. One SUBSCRIBE or
/// UNSUBSCRIBE per channel, so each gets exactly one reply (RESP2: ["subscribe", channel,
/// count]) in order with the commands; ["message", channel, payload] arrays are taken out of
/// the stream before the matching. Anything else from the node breaks the connection, as on
/// the command connection.
class subscriber_connection final : public subscription_link {
public:
    /// `time` and `connector` as for node_connection.
    subscriber_connection(boost::asio::any_io_executor strand, node_address address,
                          const client_config& config, std::unique_ptr<time_source> time,
                          std::unique_ptr<stream_connector> connector, std::size_t node,
                          subscription_events& events);
    ~subscriber_connection() override;

    void subscribe(const std::string& channel, std::uint64_t generation) override;
    void unsubscribe(const std::string& channel) override;
    void shutdown() override;

private:
    class replies;

    bool on_push(const redisReply& reply);

    boost::asio::any_io_executor strand_;
    std::size_t node_;
    subscription_events* events_;
    std::shared_ptr<replies> replies_;
    std::unique_ptr<node_connection> connection_;
};

} // namespace redlock::detail

#endif
