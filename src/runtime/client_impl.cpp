#include "runtime/client_impl.hpp"

#include "transport/server_text.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include <algorithm>
#include <cstdio>

namespace redlock::detail {
namespace {

/// "2.1 s": how long ago a node restarted, how long until it votes again.
std::string seconds_text(clock::duration d) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f s",
                  std::chrono::duration<double>(std::max(d, clock::duration::zero())).count());
    return text;
}

} // namespace

std::shared_ptr<client_impl> client_impl::create(const boost::asio::any_io_executor& executor,
                                                 client_config config,
                                                 std::vector<node_address> addresses,
                                                 environment env) {
    struct destroy_on_strand {
        void operator()(client_impl* impl) const noexcept {
            struct owner {
                void operator()(client_impl* p) const noexcept { delete p; }
            };
            std::unique_ptr<client_impl, owner> owned(impl);
            try {
                const auto strand = impl->strand_;
                boost::asio::post(strand, [owned = std::move(owned)] {});
            } catch (...) {
                // Out of memory: destroyed here, as before the strand could be asked.
            }
        }
    };
    return std::shared_ptr<client_impl>(
        new client_impl(executor, std::move(config), std::move(addresses), std::move(env)),
        destroy_on_strand{});
}

client_impl::client_impl(const boost::asio::any_io_executor& executor, client_config config,
                         std::vector<node_address> addresses, environment env)
    : strand_(boost::asio::make_strand(executor))
    , config_(std::move(config))
    , env_(std::move(env))
    , time_(env_.make_time(strand_))
    , jitter_(env_.jitter_seed)
    , reported_quarantined_(addresses.size(), false)
    , servers_(addresses.size())
    , reported_duplicate_(addresses.size())
    , timers_(std::make_shared<renewal_timers>(*time_)) {
    release_watch::link_factory subscriber;
    if (env_.make_subscriber) {
        subscriber = [this, addresses](std::size_t node, subscription_events& events) {
            return env_.make_subscriber(strand_, addresses[node], config_, node, events);
        };
    }
    releases_ = std::make_unique<release_watch>(addresses, std::move(subscriber));
    nodes_.reserve(addresses.size());
    for (auto& address : addresses) {
        nodes_.push_back(env_.make_link(strand_, std::move(address), config_));
    }
}

void client_impl::log(log_level level, const std::string& message) const {
    if (config_.log) {
        config_.log(level, message);
    }
}

void client_impl::note_options(const lock_options& options) noexcept {
    largest_drift_factor_ = std::max(largest_drift_factor_, options.clock_drift_factor);
    largest_drift_allowance_ = std::max(largest_drift_allowance_, options.drift_allowance);
    if (options.clock_drift_factor > clock_drift_allowed_) {
        // The rate a node's clock may run at without counting as a step: the one the
        // validity of the locks in use subtracts (the quarantine uses the same).
        clock_drift_allowed_ = options.clock_drift_factor;
        for (auto& node : nodes_) {
            node->allow_clock_drift(clock_drift_allowed_);
        }
    }
    note_node_timeout(options.node_timeout);
}

void client_impl::note_node_timeout(std::chrono::milliseconds node_timeout) noexcept {
    if (node_timeout > largest_node_timeout_) {
        largest_node_timeout_ = node_timeout;
        // Every command of ours is abandoned after its node_timeout; a connection whose
        // oldest command waited several times the longest of them serves nobody. The floor
        // keeps a busy machine's scheduling hiccups from churning connections.
        const auto patience =
            std::max<std::chrono::milliseconds>(4 * largest_node_timeout_, std::chrono::seconds(1));
        for (auto& node : nodes_) {
            node->expect_replies_within(patience);
        }
    }
}

void client_impl::extend_alive(const std::string& token) {
    ++extends_alive_[token];
}

void client_impl::extend_gone(const std::string& token) {
    const auto it = extends_alive_.find(token);
    if (it != extends_alive_.end() && --it->second == 0) {
        extends_alive_.erase(it);
        released_.erase(token);
    }
}

void client_impl::lock_granted(const lock& granted) {
    if (auto* m = metrics()) {
        held_locks_.granted(granted.token(), granted.valid_until());
        m->on_locks_held(held_locks_.count(now()));
    }
}

void client_impl::lock_extended(const lock& extended) {
    if (auto* m = metrics()) {
        held_locks_.extended(extended.token(), extended.valid_until());
        m->on_locks_held(held_locks_.count(now()));
    }
}

void client_impl::lock_released(const lock& released) {
    if (auto* m = metrics()) {
        held_locks_.released(released.token());
        m->on_locks_held(held_locks_.count(now()));
    }
}

void client_impl::note_release(const std::string& token) {
    if (extends_alive_.count(token) != 0) {
        released_.insert(token);
    }
}

std::optional<std::chrono::milliseconds> client_impl::quarantine_left(std::size_t node,
                                                                      clock::time_point now) {
    const auto& q = config_.quarantine;
    const auto started = nodes_[node]->started_at();
    std::optional<std::chrono::milliseconds> left;
    if (q.enabled && started) {
        // No client of these nodes holds a lock longer than the fleet's maximum (each refuses
        // a longer ttl): whatever ttl this client uses, that is what the node may have held.
        lock_options longest;
        longest.ttl = config_.fleet_max_ttl;
        longest.clock_drift_factor = largest_drift_factor_;
        longest.drift_allowance = largest_drift_allowance_;
        const auto until = *started + longest.ttl + drift(longest);
        if (now < until) {
            left = std::chrono::ceil<std::chrono::milliseconds>(until - now);
        }
    }
    if (left.has_value() != reported_quarantined_[node]) {
        reported_quarantined_[node] = left.has_value();
        if (auto* m = metrics()) {
            m->on_quarantine(node, left.has_value());
        }
    }
    return left;
}

std::optional<client_impl::veto> client_impl::veto_grant(std::size_t node, clock::time_point now) {
    const auto run_id = nodes_[node]->run_id();
    if (!run_id.empty()) {
        std::vector<std::string_view> live;
        live.reserve(nodes_.size());
        for (const auto& link : nodes_) {
            live.push_back(link->run_id());
        }
        const auto counted = servers_.counted_through(node, run_id, live);
        if (counted != node) {
            const auto& other = nodes_[counted]->address().display();
            // Compared as sent; shown without the secrets, as all server text.
            std::string message =
                "same server as " + other + " (run_id " +
                printable_server_text(
                    run_id, configured_secrets(config_, nodes_[node]->address().password)) +
                ")";
            if (reported_duplicate_[node] != run_id) {
                reported_duplicate_[node] = std::string(run_id);
                log(log_level::error,
                    "node " + nodes_[node]->address().display() + " is the " + message +
                        ": its votes do not count; list every server once in client_config::nodes");
            }
            return veto{errc::duplicate_node, std::move(message)};
        }
    }
    // INFO refused hides restarts from the quarantine and a memory policy from the eviction
    // veto: either one, while on, takes the node's vote.
    if (config_.quarantine.enabled || !config_.eviction.accept_evicting_nodes) {
        const auto undetectable = nodes_[node]->restarts_undetectable();
        if (!undetectable.empty()) {
            return veto{errc::restarts_undetectable, std::string(undetectable)};
        }
    }
    if (!config_.eviction.accept_evicting_nodes) {
        const auto risk = nodes_[node]->eviction_risk();
        if (!risk.empty()) {
            return veto{errc::node_can_evict, std::string(risk)};
        }
    }
    if (const auto left = quarantine_left(node, now)) {
        const auto started = nodes_[node]->started_at(); // set: quarantine_left needs it
        const auto cause = nodes_[node]->quarantine_cause();
        return veto{errc::node_quarantined,
                    (cause.empty() ? std::string("node restarted") : std::string(cause)) + " " +
                        seconds_text(now - *started) + " ago, votes count again in " +
                        seconds_text(*left)};
    }
    return std::nullopt;
}

void client_impl::shutdown() {
    if (shut_down_) {
        return;
    }
    shut_down_ = true;
    // Cancelling may complete and unregister operations: iterate over a copy.
    const std::vector<cancellable*> live(live_.begin(), live_.end());
    for (auto* op : live) {
        if (live_.count(op)) {
            op->cancel();
        }
    }
    timers_->clear();
    releases_->shutdown();
    for (auto& node : nodes_) {
        node->shutdown(largest_node_timeout_);
    }
}

} // namespace redlock::detail
