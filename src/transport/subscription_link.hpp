#ifndef REDLOCK_SRC_TRANSPORT_SUBSCRIPTION_LINK_HPP
#define REDLOCK_SRC_TRANSPORT_SUBSCRIPTION_LINK_HPP

#include <string>
#include <string_view>

namespace redlock::detail {

/// What a node's subscriber connection reports, on the client's strand, never from inside
/// subscribe() or unsubscribe().
class subscription_events {
public:
    /// The SUBSCRIBE of `channel` sent with `generation` is in force on the node: every
    /// message published there after the node ran it comes to on_message.
    virtual void on_subscribed(std::size_t node, std::string_view channel,
                               std::uint64_t generation) = 0;
    /// A SUBSCRIBE was refused (an ACL without the channel) or never reached the node.
    virtual void on_subscribe_failed(std::size_t node, std::uint64_t generation) = 0;
    /// A SUBSCRIBE the node refused (`why`, as the node said it: NOPERM, NOAUTH), not lost
    /// on the way. Reported as a failure unless the receiver tells them apart.
    virtual void on_subscribe_refused(std::size_t node, std::uint64_t generation,
                                      std::string_view why) {
        (void)why;
        on_subscribe_failed(node, generation);
    }
    virtual void on_message(std::size_t node, std::string_view channel,
                            std::string_view payload) = 0;
    /// The connection broke: every subscription on it is gone (messages may have been lost).
    virtual void on_subscriptions_lost(std::size_t node) = 0;

protected:
    ~subscription_events() = default;
};

/// One subscriber connection to one node (Redis serves nothing but (UN)SUBSCRIBE on a
/// connection that subscribed, so it is not the command connection). Connected lazily by the
/// first subscribe(), and again by the first one after it broke.
class subscription_link {
public:
    virtual ~subscription_link() = default;
    virtual void subscribe(const std::string& channel, std::uint64_t generation) = 0;
    virtual void unsubscribe(const std::string& channel) = 0;
    /// Closes the connection; nothing is reported afterwards.
    virtual void shutdown() = 0;
};

} // namespace redlock::detail

#endif
