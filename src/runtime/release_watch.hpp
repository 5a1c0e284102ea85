#ifndef REDLOCK_SRC_RUNTIME_RELEASE_WATCH_HPP
#define REDLOCK_SRC_RUNTIME_RELEASE_WATCH_HPP

#include "transport/subscription_link.hpp"

#include "redlock/config.hpp"
#include "redlock/node_address.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace redlock::detail {

/// A waiter for a key: an acquire sleeping between attempts.
///
/// Positions count only the waiters that want the same keys (wanted()): among them arrival
/// order holds, and only the oldest of an exclusive lock retries on a release; a waiter
/// that wants other keys too (a, b, with b held elsewhere) cannot use a release of a that a
/// waiter for a alone can, and never holds that one back (docs/design.md, "Handoff").
class release_listener {
public:
    /// The keys this waiter wants, in a canonical form: waiters with equal ones are queued.
    virtual const std::string& wanted() const = 0;
    /// `position`: how many local waiters of the key that want the same keys have waited
    /// longer than this one.
    virtual void on_released(std::size_t node, std::size_t position) = 0;
    /// A release by this client: as if every node had announced it, all at once.
    virtual void on_released_everywhere(std::size_t position) = 0;
    virtual void on_subscribed(std::size_t node, std::size_t position) = 0;
    virtual void on_subscription_lost(std::size_t node) = 0;
    /// Another local waiter of the key got it, as a holder of mode `winner`.
    virtual void on_local_grant(lock_mode winner) = 0;
    /// A waiter ahead of this one (that wants the same keys) stopped waiting: `position` is
    /// this one's now.
    virtual void on_moved_up(std::size_t position) = 0;
    /// A later waiter for the same keys had its backoff run out while this one is the
    /// oldest: the key may have been freed unannounced (an expiry), and this one polls for
    /// all of them, in their order.
    virtual void on_nudged() = 0;

protected:
    ~release_listener() = default;
};

/// The client's handoff: one subscriber connection per node, made when the first waiter
/// needs it, shared by every waiter of the client; per key, the channels
/// `redlock:released:<key>` (release.lua publishes there) and `__keyspace@<db>__:<key>`
/// (an "expired" there is a release too, where notify-keyspace-events has K and x) are
/// subscribed while at least one waiter waits for the key, and unsubscribed after the last.
/// Confined to the client's strand.
class release_watch final : private subscription_events {
public:
    using link_factory =
        std::function<std::unique_ptr<subscription_link>(std::size_t node, subscription_events&)>;

    /// `make` may be empty: no notifications from the nodes; the waiters still queue, and
    /// hear of this client's own releases.
    release_watch(std::vector<node_address> addresses, link_factory make);
    ~release_watch();
    release_watch(const release_watch&) = delete;
    release_watch& operator=(const release_watch&) = delete;

    /// Registers an acquire as it begins, before its first attempt, without subscribing:
    /// the waiters that arrive later queue behind it, also while that attempt is out, so
    /// that one client's waiters for the same keys are served in the order they arrived
    /// (docs/design.md, "Herd control and fairness"). Once per acquire; watch() after it
    /// keeps the place.
    void join(const std::string& key, release_listener* waiter);
    /// Registers a waiter (once; later calls only subscribe again where a subscription was
    /// lost) and subscribes. Confirmed subscriptions are reported to it through
    /// on_subscribed, posted by the caller's own loop: see confirmed().
    void watch(const std::string& key, release_listener* waiter);
    void unwatch(const std::string& key, release_listener* waiter);
    /// A release of `key` by this client was just queued on every node's connection: its
    /// waiters are told as if every node had announced it, and when the nodes do (with
    /// `announcement`), that is not news.
    void released_here(const std::string& key, const std::string& announcement);
    /// `winner` got `key` as a holder of mode `mode`: the other local waiters are told.
    void granted(const std::string& key, const release_listener* winner, lock_mode mode);
    /// `from`'s backoff ran out behind older waiters of `key` that want the same keys: the
    /// oldest of them is told (on_nudged).
    void nudge(const std::string& key, const release_listener* from);
    /// Whether another waiter waits for `key` that wants the same keys as `like`.
    bool queued_like(const std::string& key, const release_listener* like) const;
    /// Whether the release channel of `key` is subscribed on `node` now.
    bool confirmed(const std::string& key, std::size_t node) const;
    std::size_t position(const std::string& key, const release_listener* waiter) const;
    void shutdown();

private:
    enum class sub { none, pending, confirmed };
    struct key_state {
        std::vector<release_listener*> waiters; ///< in the order they joined
        std::vector<sub> nodes;
        std::vector<std::uint64_t> generation; ///< of the SUBSCRIBE in flight or in force
        /// The latest releases of the key by this client, told already: their
        /// announcements, heard after a waiter got the key, would wake the next one early
        /// for a refusal.
        std::vector<std::string> announced;
    };

    key_state& add(const std::string& key, release_listener* waiter);
    void subscribe(const std::string& key, key_state& k, std::size_t node);
    /// How many of `waiters[0, end)` want what `waiter` wants.
    static std::size_t ahead_of(const std::vector<release_listener*>& waiters, std::size_t end,
                                const release_listener& waiter);
    /// Calls `tell(waiter, position)` for each of `waiters` (of `key`), in order, that still
    /// waits for the key when its turn comes, with its position then. A waiter told may wake,
    /// finish and unwatch, and so may others it sets off (a client closing cancels them in a
    /// chain): one that left meanwhile may be gone, and is not told; the key's state may be
    /// gone too, and is looked up again each time.
    /// Both taken by value: the key's state they come from may change or go meanwhile.
    template <typename Tell>
    void tell_each(std::string key, std::vector<release_listener*> waiters, Tell tell) {
        for (auto* waiter : waiters) {
            const auto it = keys_.find(key);
            if (it == keys_.end()) {
                return;
            }
            const auto& now = it->second.waiters;
            const auto at = std::find(now.begin(), now.end(), waiter);
            if (at != now.end()) {
                tell(*waiter, ahead_of(now, static_cast<std::size_t>(at - now.begin()), *waiter));
            }
        }
    }
    std::string keyspace_channel(std::size_t node, const std::string& key) const;
    /// The key a channel of ours is about, or empty.
    std::string_view key_of(std::size_t node, std::string_view channel) const;

    void on_subscribed(std::size_t node, std::string_view channel,
                       std::uint64_t generation) override;
    void on_subscribe_failed(std::size_t node, std::uint64_t generation) override;
    void on_message(std::size_t node, std::string_view channel, std::string_view payload) override;
    void on_subscriptions_lost(std::size_t node) override;

    std::vector<node_address> addresses_;
    link_factory make_;
    std::vector<std::unique_ptr<subscription_link>> links_;
    std::unordered_map<std::string, key_state> keys_;
    /// The key of each SUBSCRIBE still unanswered, by generation: a refusal (an ACL without
    /// the channels refuses every one, at every sleep of every waiter) finds its key at once
    /// instead of scanning every key watched.
    std::unordered_map<std::uint64_t, std::string> unanswered_;
    std::uint64_t generations_ = 0;
    bool shut_down_ = false;
};

} // namespace redlock::detail

#endif
