#ifndef REDLOCK_SRC_TRANSPORT_SENTINEL_WATCH_HPP
#define REDLOCK_SRC_TRANSPORT_SENTINEL_WATCH_HPP

#include "core/time_source.hpp"
#include "transport/subscription_link.hpp"

#include "redlock/node_address.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace redlock::detail {

/// Hears a Sentinel group's failovers as the Sentinels announce them: one subscriber
/// connection to each Sentinel of a `redis-sentinel://` node (with the Sentinels' own
/// credentials), subscribed to `+switch-master`. A message for the node's master name
/// ("<name> <old-ip> <old-port> <new-ip> <new-port>") calls `moved` with the new address and
/// the Sentinel that said it, at most once per `pace`: each Sentinel's latest announcement
/// waits for its turn, the Sentinels taken in rotation, so that one cannot hide another's. `moved`
/// decides nothing by itself: the node's connection drops itself when it is connected elsewhere,
/// and its next connect asks every Sentinel (their majority). So one Sentinel heard is enough to
/// leave a cut-off primary, and a stale or hostile one costs at most one reconnect per `pace`,
/// never the choice of the primary (nor memory: one announcement per Sentinel is kept). Each
/// Sentinel announces a switch once, when it adopts it; a majority that catches up later announces
/// it then. A subscription refused (an error reply: an ACL without `+subscribe` or the channel) is
/// said once and tried again after `pace`, doubled up to a minute (or `pace`, if longer) while
/// refused; one lost is tried again at once, one that could not be made every `pace` while it
/// fails.
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
                   std::chrono::milliseconds pace, moved_fn moved, warn_fn warn);
    ~sentinel_watch();
    sentinel_watch(const sentinel_watch&) = delete;
    sentinel_watch& operator=(const sentinel_watch&) = delete;

    /// Subscribes on every Sentinel `start_delay` after the first call (later calls do
    /// nothing): a command-line call that ends sooner never opens the subscriptions, and a
    /// node's first round never waits behind their connects.
    void start();
    static constexpr std::chrono::milliseconds start_delay{1000};
    /// Closes every subscription; nothing is called afterwards.
    void shutdown();

private:
    struct sentinel;

    void subscribe(std::size_t sentinel);
    void on_subscribed(std::size_t node, std::string_view channel,
                       std::uint64_t generation) override;
    void on_subscribe_failed(std::size_t node, std::uint64_t generation) override;
    void on_subscribe_refused(std::size_t node, std::uint64_t generation,
                              std::string_view why) override;
    void retry_after(std::size_t node, std::chrono::milliseconds delay);
    /// Hands the waiting announcement to `moved_`, now or at the next turn.
    void deliver();
    void on_message(std::size_t node, std::string_view channel, std::string_view payload) override;
    void on_subscriptions_lost(std::size_t node) override;

    std::string master_name_;
    std::vector<std::string> secrets_;
    subscriber_fn make_subscriber_;
    std::unique_ptr<time_source> time_;
    std::chrono::milliseconds pace_;
    moved_fn moved_;
    warn_fn warn_;
    std::vector<sentinel> sentinels_;
    /// The latest announcement not handed on yet: host, port, the Sentinel that said it.
    struct announcement {
        std::string host;
        std::uint16_t port = 0;
        std::string sentinel;
    };
    /// Per Sentinel, its latest announcement not handed on yet; `turn_` is the next to go.
    std::vector<std::optional<announcement>> waiting_;
    std::size_t turn_ = 0;
    std::unique_ptr<alarm> next_turn_;
    std::unique_ptr<alarm> starting_;
    std::optional<clock::time_point> last_moved_;
    std::uint64_t generations_ = 0;
    bool started_ = false;
    bool shut_down_ = false;
};

} // namespace redlock::detail

#endif
