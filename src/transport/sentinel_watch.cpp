#include "transport/sentinel_watch.hpp"

#include "transport/sentinel_connector.hpp"

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
                               std::chrono::milliseconds retry_delay, moved_fn moved, warn_fn warn)
    : master_name_(node.master_name)
    , secrets_(std::move(secrets))
    , make_subscriber_(std::move(make_subscriber))
    , time_(std::move(time))
    , retry_delay_(retry_delay)
    , moved_(std::move(moved))
    , warn_(std::move(warn))
    , sentinels_(node.sentinels.size()) {
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
        sentinels_[i].backoff = retry_delay_;
    }
}

sentinel_watch::~sentinel_watch() {
    shutdown();
}

void sentinel_watch::start() {
    if (std::exchange(started_, true) || shut_down_) {
        return;
    }
    for (std::size_t i = 0; i < sentinels_.size(); ++i) {
        subscribe(i);
    }
}

void sentinel_watch::shutdown() {
    if (std::exchange(shut_down_, true)) {
        return;
    }
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
        s.backoff = retry_delay_;
        s.warned = false;
    }
}

void sentinel_watch::on_subscribe_failed(std::size_t node, std::uint64_t generation) {
    auto& s = sentinels_[node];
    if (shut_down_ || generation != s.generation) {
        return;
    }
    // Refused (an ACL without the channel), or the Sentinel could not be reached: again
    // later, less and less often, not in a loop.
    s.generation = 0;
    if (!std::exchange(s.warned, true) && warn_) {
        warn_("the Sentinel at " + s.display + " refused SUBSCRIBE " + channel +
              " or could not be reached: failovers are learned only at the next connect, a "
              "READONLY reply or INFO (the Sentinels' user needs +subscribe &" +
              channel + "); trying again");
    }
    const auto delay = s.backoff;
    s.backoff = std::min(s.backoff * 2, std::chrono::milliseconds(std::chrono::minutes(1)));
    s.retry->arm(time_->now() + delay, [this, node] { subscribe(node); });
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
    // Each Sentinel counts once per address; a majority of the node's Sentinels moves it.
    auto& named_by = announced_[{std::string(fields[3]), port}];
    named_by.insert(node);
    if (named_by.size() < sentinels_.size() / 2 + 1) {
        return;
    }
    announced_.clear();
    moved_(std::string(fields[3]), port, sentinels_[node].display);
}

} // namespace redlock::detail
