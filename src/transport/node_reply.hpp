#ifndef REDLOCK_SRC_NODE_REPLY_HPP
#define REDLOCK_SRC_NODE_REPLY_HPP

#include <hiredis/hiredis.h>

#include <cstdint>
#include <string_view>
#include <system_error>

namespace redlock::detail {

/// One command's answer as seen by whoever sent it. Valid only during the callback.
struct node_reply {
    /// connection_failed, node_backlogged or cancelled when no reply exists.
    std::error_code error;
    /// The node's reply, error replies included; null when `error` is set.
    const redisReply* reply = nullptr;
    /// The server's error text, or what went wrong with the connection.
    std::string_view message;
};

/// Whoever waits for replies from node connections: an operation in flight.
class reply_target {
public:
    virtual void on_reply(std::uint64_t tag, const node_reply& reply) = 0;

protected:
    ~reply_target() = default;
};

} // namespace redlock::detail

#endif
