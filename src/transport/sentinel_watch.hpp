#ifndef REDLOCK_SRC_TRANSPORT_SENTINEL_WATCH_HPP
#define REDLOCK_SRC_TRANSPORT_SENTINEL_WATCH_HPP

#include "core/time_source.hpp"
#include "transport/subscription_link.hpp"

#include "redlock/node_address.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace redlock::detail {

/// Hears a Sentinel group's failovers as the Sentinels announce them: one subscriber
/// connection to each Sentinel of a `redis-sentinel://` node (with the Sentinels' own
/// credentials), subscribed to `+switch-master`. A message for the node's master name
/// ("<name> <old-ip> <old-port> <new-ip> <new-port>") calls `moved` with the new address and
/// the Sentinel that said it. One Sentinel decides nothing: the node's connection only
/// drops itself when it is connected elsewhere, and its next connect asks every Sentinel
/// again (sentinel_connector's majority), so a stale or hostile Sentinel can cost a
/// reconnect, never choose the primary. A subscription refused or lost is made again,
/// `retry_delay` after a refusal, at once (behind the connection's own reconnect delay)
/// after a break.
class sentinel_watch final : private subscription_events {
public:
    using moved_fn = std::function<void(const std::string& host, std::uint16_t port,
                                        const std::string& sentinel)>;
    /// A subscriber connection to the Sentinel at `address` (its index: `sentinel`).
    using subscriber_fn = std::function<std::unique_ptr<subscription_link>(
        node_address address, std::size_t sentinel, subscription_events& events)>;

    static constexpr const char* channel = "+switch-master";

    sentinel_watch(const node_address& node, std::vector<std::string> secrets,
                   subscriber_fn make_subscriber, std::unique_ptr<time_source> time,
                   std::chrono::milliseconds retry_delay, moved_fn moved);
    ~sentinel_watch();
    sentinel_watch(const sentinel_watch&) = delete;
    sentinel_watch& operator=(const sentinel_watch&) = delete;

    /// Subscribes on every Sentinel; once (later calls do nothing).
    void start();
    /// Closes every subscription; nothing is called afterwards.
    void shutdown();

private:
    struct sentinel;

    void subscribe(std::size_t sentinel);
    void on_subscribed(std::size_t node, std::string_view channel,
                       std::uint64_t generation) override;
    void on_subscribe_failed(std::size_t node, std::uint64_t generation) override;
    void on_message(std::size_t node, std::string_view channel, std::string_view payload) override;
    void on_subscriptions_lost(std::size_t node) override;

    std::string master_name_;
    std::vector<std::string> secrets_;
    subscriber_fn make_subscriber_;
    std::unique_ptr<time_source> time_;
    std::chrono::milliseconds retry_delay_;
    moved_fn moved_;
    std::vector<sentinel> sentinels_;
    std::uint64_t generations_ = 0;
    bool started_ = false;
    bool shut_down_ = false;
};

} // namespace redlock::detail

#endif
