#ifndef REDLOCK_SRC_TRANSPORT_SENTINEL_WATCH_HPP
#define REDLOCK_SRC_TRANSPORT_SENTINEL_WATCH_HPP

#include "core/time_source.hpp"
#include "transport/subscription_link.hpp"

#include "redlock/node_address.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace redlock::detail {

/// Hears a Sentinel group's failovers as the Sentinels announce them: one subscriber
/// connection to each Sentinel of a `redis-sentinel://` node (with the Sentinels' own
/// credentials), subscribed to `+switch-master`. Messages for the node's master name
/// ("<name> <old-ip> <old-port> <new-ip> <new-port>") are tallied per new address, each
/// Sentinel once: when a majority of the node's Sentinels have named the same one, `moved`
/// runs with it (and the last of them). One Sentinel, stale or hostile, decides nothing, and
/// cannot keep a node's connection dropping; during a real failover every Sentinel
/// announces the switch within a few seconds. The node's connection then drops itself when
/// it is connected elsewhere, and its next connect asks every Sentinel again. A subscription
/// lost is made again at once (behind the connection's reconnect delay); one refused (an
/// ACL without `+subscribe` or the channel) or that could not be made is tried again after
/// `retry_delay`, doubled up to a minute while it fails, with a warning the first time.
class sentinel_watch final : private subscription_events {
public:
    using moved_fn = std::function<void(const std::string& host, std::uint16_t port,
                                        const std::string& sentinel)>;
    using warn_fn = std::function<void(const std::string& message)>;
    /// A subscriber connection to the Sentinel at `address` (its index: `sentinel`).
    using subscriber_fn = std::function<std::unique_ptr<subscription_link>(
        node_address address, std::size_t sentinel, subscription_events& events)>;

    static constexpr const char* channel = "+switch-master";

    sentinel_watch(const node_address& node, std::vector<std::string> secrets,
                   subscriber_fn make_subscriber, std::unique_ptr<time_source> time,
                   std::chrono::milliseconds retry_delay, moved_fn moved, warn_fn warn);
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
    warn_fn warn_;
    std::vector<sentinel> sentinels_;
    /// Per announced primary (host, port): which Sentinels named it since the last move.
    std::map<std::pair<std::string, std::uint16_t>, std::set<std::size_t>> announced_;
    std::uint64_t generations_ = 0;
    bool started_ = false;
    bool shut_down_ = false;
};

} // namespace redlock::detail

#endif
