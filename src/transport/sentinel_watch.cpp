#include "transport/sentinel_watch.hpp"

#include "transport/sentinel_connector.hpp"
#include "transport/server_text.hpp"

#include <algorithm>
#include <charconv>

namespace redlock::detail {

struct sentinel_watch::sentinel {
    std::string display; ///< host:port, for what `moved` is told
    std::unique_ptr<subscription_link> link;
    std::unique_ptr<alarm> retry;
    /// The generation of the SUBSCRIBE in flight or in force; 0: none.
    std::uint64_t generation = 0;
    /// The next retry's delay after a refusal (doubling while it fails).
    std::chrono::milliseconds backoff{};
    bool warned = false;
};

namespace {

/// The payload's five fields, separated by single spaces; empty when it has another shape.
std::vector<std::string_view> fields_of(std::string_view payload) {
    std::vector<std::string_view> fields;
    while (fields.size() < 6) {
        const auto space = payload.find(' ');
        fields.push_back(payload.substr(0, space));
        if (space == std::string_view::npos) {
            break;
        }
        payload.remove_prefix(space + 1);
    }
    if (fields.size() != 5) {
        fields.clear();
    }
    return fields;
}

} // namespace

sentinel_watch::sentinel_watch(const node_address& node, std::vector<std::string> secrets,
                               subscriber_fn make_subscriber, std::unique_ptr<time_source> time,
                               std::chrono::milliseconds pace, moved_fn moved, warn_fn warn)
    : master_name_(node.master_name)
    , secrets_(std::move(secrets))
    , make_subscriber_(std::move(make_subscriber))
    , time_(std::move(time))
    , pace_(pace)
    , moved_(std::move(moved))
    , warn_(std::move(warn))
    , sentinels_(node.sentinels.size())
    , waiting_(node.sentinels.size())
    , next_turn_(time_->make_alarm())
    , starting_(time_->make_alarm()) {
    for (std::size_t i = 0; i < node.sentinels.size(); ++i) {
        // The Sentinel itself, with the Sentinels' credentials (never the data nodes').
        node_address target;
        target.host = node.sentinels[i].host;
        target.port = node.sentinels[i].port;
        target.tls = node.tls;
        target.user = node.sentinel_user;
        target.password = node.sentinel_password;
        sentinels_[i].display = target.display();
        sentinels_[i].link = make_subscriber_(std::move(target), i, *this);
        sentinels_[i].retry = time_->make_alarm();
        sentinels_[i].backoff = pace_;
    }
}

sentinel_watch::~sentinel_watch() {
    shutdown();
}

void sentinel_watch::start() {
    if (std::exchange(started_, true) || shut_down_) {
        return;
    }
    starting_->arm(time_->now() + start_delay, [this] {
        for (std::size_t i = 0; i < sentinels_.size(); ++i) {
            subscribe(i);
        }
    });
}

void sentinel_watch::shutdown() {
    if (std::exchange(shut_down_, true)) {
        return;
    }
    next_turn_->cancel();
    starting_->cancel();
    waiting_.assign(waiting_.size(), std::nullopt);
    for (auto& s : sentinels_) {
        s.retry->cancel();
        s.link->shutdown();
    }
}

void sentinel_watch::subscribe(std::size_t index) {
    auto& s = sentinels_[index];
    s.generation = ++generations_;
    s.link->subscribe(channel, s.generation);
}

void sentinel_watch::on_subscribed(std::size_t node, std::string_view, std::uint64_t generation) {
    auto& s = sentinels_[node];
    if (generation == s.generation) {
        s.backoff = pace_;
        s.warned = false;
    }
}

void sentinel_watch::retry_after(std::size_t node, std::chrono::milliseconds delay) {
    sentinels_[node].generation = 0;
    sentinels_[node].retry->arm(time_->now() + delay, [this, node] { subscribe(node); });
}

void sentinel_watch::on_subscribe_failed(std::size_t node, std::uint64_t generation) {
    if (shut_down_ || generation != sentinels_[node].generation) {
        return;
    }
    // Lost on the way (the Sentinel unreachable, the connection backing off after a break,
    // which node_connection logs): again at its pace, not in a loop.
    retry_after(node, pace_);
}

void sentinel_watch::on_subscribe_refused(std::size_t node, std::uint64_t generation,
                                          std::string_view why) {
    auto& s = sentinels_[node];
    if (shut_down_ || generation != s.generation) {
        return;
    }
    if (!std::exchange(s.warned, true) && warn_) {
        warn_("the Sentinel at " + s.display + " refused SUBSCRIBE " + channel + " (" +
              printable_server_text(why, secrets_) +
              "): this client hears of a failover from it only at its next connect, a READONLY "
              "reply or INFO (the Sentinels' user needs +subscribe &" +
              channel + "); trying again");
    }
    // Refused: less and less often while it stays so.
    const auto delay = s.backoff;
    s.backoff = std::min(s.backoff * 2, std::max(pace_, std::chrono::milliseconds(60000)));
    retry_after(node, delay);
}

void sentinel_watch::on_subscriptions_lost(std::size_t node) {
    auto& s = sentinels_[node];
    if (shut_down_ || s.generation == 0) {
        return; // a retry is already armed
    }
    // What was announced meanwhile is lost; a switch missed here still shows at the next
    // connect, on READONLY, or in the role the next INFO reports.
    subscribe(node);
}

void sentinel_watch::on_message(std::size_t node, std::string_view from_channel,
                                std::string_view payload) {
    if (shut_down_ || from_channel != channel) {
        return;
    }
    const auto fields = fields_of(payload);
    if (fields.empty() || fields[0] != master_name_) {
        return; // another group this Sentinel watches, or a payload of another shape
    }
    std::uint16_t port = 0;
    const auto& text = fields[4];
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
    if (ec != std::errc() || end != text.data() + text.size() || port == 0 ||
        !plausible_sentinel_host(fields[3], secrets_)) {
        return;
    }
    waiting_[node] = announcement{std::string(fields[3]), port, sentinels_[node].display};
    deliver();
}

void sentinel_watch::deliver() {
    const auto any =
        std::any_of(waiting_.begin(), waiting_.end(), [](const auto& a) { return a.has_value(); });
    if (!any || shut_down_) {
        return;
    }
    const auto now = time_->now();
    if (last_moved_ && now < *last_moved_ + pace_) {
        // One turn per pace: a flood costs one reconnect per pace; each Sentinel's latest
        // word waits for its turn.
        next_turn_->arm(*last_moved_ + pace_, [this] { deliver(); });
        return;
    }
    while (!waiting_[turn_]) {
        turn_ = (turn_ + 1) % waiting_.size();
    }
    const auto a = std::move(*std::exchange(waiting_[turn_], std::nullopt));
    turn_ = (turn_ + 1) % waiting_.size();
    last_moved_ = now;
    moved_(a.host, a.port, a.sentinel);
    deliver(); // arms the next turn if more wait
}

} // namespace redlock::detail
