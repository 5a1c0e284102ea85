#include "runtime/release_watch.hpp"

#include <algorithm>

namespace redlock::detail {

namespace {
constexpr std::string_view release_prefix = "redlock:released:";
}

release_watch::release_watch(std::vector<node_address> addresses, link_factory make)
    : addresses_(std::move(addresses))
    , make_(std::move(make))
    , links_(addresses_.size()) {}

release_watch::~release_watch() {
    shutdown();
}

std::string release_watch::keyspace_channel(std::size_t node, const std::string& key) const {
    return "__keyspace@" + std::to_string(addresses_[node].db) + "__:" + key;
}

std::string_view release_watch::key_of(std::size_t node, std::string_view channel) const {
    if (channel.starts_with(release_prefix)) {
        return channel.substr(release_prefix.size());
    }
    const auto keyspace = "__keyspace@" + std::to_string(addresses_[node].db) + "__:";
    if (channel.starts_with(keyspace)) {
        return channel.substr(keyspace.size());
    }
    return {};
}

release_watch::key_state& release_watch::add(const std::string& key, release_listener* waiter) {
    auto& k = keys_[key];
    if (k.nodes.empty()) {
        k.nodes.assign(addresses_.size(), sub::none);
        k.generation.assign(addresses_.size(), 0);
    }
    if (std::find(k.waiters.begin(), k.waiters.end(), waiter) == k.waiters.end()) {
        k.waiters.push_back(waiter);
    }
    return k;
}

void release_watch::join(const std::string& key, release_listener* waiter) {
    if (!shut_down_) {
        add(key, waiter);
    }
}

void release_watch::watch(const std::string& key, release_listener* waiter) {
    if (shut_down_) {
        return;
    }
    // The queue is this client's own, announcements or not: its releases reach its waiters
    // at once, and its waiters keep their order.
    auto& k = add(key, waiter);
    if (!make_) {
        return;
    }
    for (std::size_t node = 0; node < addresses_.size(); ++node) {
        if (k.nodes[node] == sub::none) {
            subscribe(key, k, node);
        }
    }
}

void release_watch::subscribe(const std::string& key, key_state& k, std::size_t node) {
    if (!links_[node]) {
        links_[node] = make_(node, *this);
    }
    k.nodes[node] = sub::pending;
    k.generation[node] = ++generations_;
    unanswered_.emplace(generations_, key);
    // The release channel carries the generation: its confirmation is what covers an
    // attempt. The keyspace channel is best effort (notifications may be off anyway).
    links_[node]->subscribe(std::string(release_prefix) + key, k.generation[node]);
    links_[node]->subscribe(keyspace_channel(node, key), 0);
}

void release_watch::unwatch(const std::string& key, release_listener* waiter) {
    const auto it = keys_.find(key);
    if (it == keys_.end()) {
        return;
    }
    auto& waiters = it->second.waiters;
    const auto gone = std::find(waiters.begin(), waiters.end(), waiter);
    if (gone == waiters.end()) {
        return;
    }
    const auto from = gone - waiters.begin();
    const auto wanted = waiter->wanted();
    waiters.erase(gone);
    if (!waiters.empty()) {
        // Only the oldest waiter of an exclusive lock (among those that want the same keys)
        // wakes on a release: one that leaves without the key (cancelled, out of attempts or
        // budget) may have been woken by a release that the next one heard too and let pass,
        // leaving it to sleep out its backoff while the key is free. Waiters that want other
        // keys kept their places.
        std::vector<release_listener*> behind;
        std::copy_if(waiters.begin() + from, waiters.end(), std::back_inserter(behind),
                     [&](const release_listener* w) { return w->wanted() == wanted; });
        tell_each(key, behind,
                  [](release_listener& w, std::size_t position) { w.on_moved_up(position); });
        return;
    }
    for (std::size_t node = 0; node < addresses_.size(); ++node) {
        if (it->second.nodes[node] != sub::none && links_[node] && !shut_down_) {
            links_[node]->unsubscribe(std::string(release_prefix) + key);
            links_[node]->unsubscribe(keyspace_channel(node, key));
        }
    }
    keys_.erase(it);
}

void release_watch::released_here(const std::string& key, const std::string& announcement) {
    const auto it = keys_.find(key);
    if (it == keys_.end()) {
        return;
    }
    // A few suffice: each is heard within a round trip of its release.
    constexpr std::size_t remembered = 8;
    auto& announced = it->second.announced;
    if (announced.size() == remembered) {
        announced.erase(announced.begin());
    }
    announced.push_back(announcement);
    tell_each(key, it->second.waiters, [](release_listener& w, std::size_t position) {
        w.on_released_everywhere(position);
    });
}

void release_watch::granted(const std::string& key, const release_listener* winner,
                            lock_mode mode) {
    const auto it = keys_.find(key);
    if (it == keys_.end()) {
        return;
    }
    tell_each(key, it->second.waiters, [winner, mode](release_listener& w, std::size_t) {
        if (&w != winner) {
            w.on_local_grant(mode);
        }
    });
}

void release_watch::nudge(const std::string& key, const release_listener* from) {
    const auto it = keys_.find(key);
    if (it == keys_.end()) {
        return;
    }
    const auto& waiters = it->second.waiters;
    const auto oldest =
        std::find_if(waiters.begin(), waiters.end(),
                     [&](const release_listener* w) { return w->wanted() == from->wanted(); });
    if (oldest != waiters.end() && *oldest != from) {
        tell_each(key, {*oldest}, [](release_listener& w, std::size_t) { w.on_nudged(); });
    }
}

bool release_watch::confirmed(const std::string& key, std::size_t node) const {
    const auto it = keys_.find(key);
    return it != keys_.end() && it->second.nodes[node] == sub::confirmed;
}

std::size_t release_watch::ahead_of(const std::vector<release_listener*>& waiters, std::size_t end,
                                    const release_listener& waiter) {
    return static_cast<std::size_t>(
        std::count_if(waiters.begin(), waiters.begin() + static_cast<std::ptrdiff_t>(end),
                      [&](const release_listener* w) { return w->wanted() == waiter.wanted(); }));
}

std::size_t release_watch::position(const std::string& key, const release_listener* waiter) const {
    const auto it = keys_.find(key);
    if (it == keys_.end()) {
        return 0;
    }
    const auto& w = it->second.waiters;
    const auto at = static_cast<std::size_t>(std::find(w.begin(), w.end(), waiter) - w.begin());
    return at < w.size() ? ahead_of(w, at, *waiter) : 0;
}

bool release_watch::queued_like(const std::string& key, const release_listener* like) const {
    const auto it = keys_.find(key);
    return it != keys_.end() && std::any_of(it->second.waiters.begin(), it->second.waiters.end(),
                                            [&](const release_listener* w) {
                                                return w != like && w->wanted() == like->wanted();
                                            });
}

void release_watch::shutdown() {
    if (shut_down_) {
        return;
    }
    shut_down_ = true;
    for (auto& link : links_) {
        if (link) {
            link->shutdown();
        }
    }
}

void release_watch::on_subscribed(std::size_t node, std::string_view channel,
                                  std::uint64_t generation) {
    unanswered_.erase(generation);
    const auto key = key_of(node, channel);
    const auto it = keys_.find(std::string(key));
    // A confirmation of an earlier SUBSCRIBE (unsubscribed since, or lost and sent again)
    // says nothing about the one that counts now.
    if (it == keys_.end() || it->second.generation[node] != generation ||
        it->second.nodes[node] != sub::pending) {
        return;
    }
    it->second.nodes[node] = sub::confirmed;
    tell_each(it->first, it->second.waiters, [node](release_listener& w, std::size_t position) {
        w.on_subscribed(node, position);
    });
}

void release_watch::on_subscribe_failed(std::size_t node, std::uint64_t generation) {
    const auto unanswered = unanswered_.find(generation);
    if (unanswered == unanswered_.end()) {
        return;
    }
    const auto it = keys_.find(unanswered->second);
    unanswered_.erase(unanswered);
    if (it != keys_.end() && it->second.generation[node] == generation &&
        it->second.nodes[node] == sub::pending) {
        // Subscribed again by the waiter's next sleep (watch()).
        it->second.nodes[node] = sub::none;
    }
}

void release_watch::on_message(std::size_t node, std::string_view channel,
                               std::string_view payload) {
    const bool release = channel.starts_with(release_prefix);
    if (!release && payload != "expired") {
        return; // a keyspace event other than expiry: our own DEL was announced already
    }
    const auto it = keys_.find(std::string(key_of(node, channel)));
    if (it == keys_.end()) {
        return;
    }
    const auto& announced = it->second.announced;
    if (release && !payload.empty() &&
        std::find(announced.begin(), announced.end(), payload) != announced.end()) {
        return;
    }
    tell_each(it->first, it->second.waiters,
              [node](release_listener& w, std::size_t position) { w.on_released(node, position); });
}

void release_watch::on_subscriptions_lost(std::size_t node) {
    for (auto& [key, k] : keys_) {
        if (k.nodes[node] == sub::none) {
            continue;
        }
        k.nodes[node] = sub::none;
        const auto waiters = k.waiters;
        for (auto* w : waiters) {
            w->on_subscription_lost(node);
        }
    }
}

} // namespace redlock::detail
