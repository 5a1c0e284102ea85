#include "client/client_impl.hpp"

#include <boost/asio/strand.hpp>

#include <algorithm>

namespace redlock::detail {

namespace {
std::uint64_t jitter_seed(token_source& tokens) {
    // Jitter needs no secrecy, only independence between processes started together.
    return std::hash<std::string>{}(tokens.next());
}
} // namespace

client_impl::client_impl(const boost::asio::any_io_executor& executor, client_config config,
                         std::vector<node_address> addresses)
    : strand_(boost::asio::make_strand(executor))
    , config_(std::move(config))
    , jitter_(jitter_seed(tokens_))
    , reported_quarantined_(addresses.size(), false)
    , timers_(std::make_shared<renewal_timers>(strand_)) {
    nodes_.reserve(addresses.size());
    for (std::size_t i = 0; i < addresses.size(); ++i) {
        nodes_.push_back(
            std::make_unique<node_connection>(strand_, i, std::move(addresses[i]), config_));
    }
}

void client_impl::log(log_level level, const std::string& message) const {
    if (config_.log) {
        config_.log(level, message);
    }
}

void client_impl::note_ttl(std::chrono::milliseconds ttl) noexcept {
    largest_ttl_ = std::max(largest_ttl_, ttl);
}

std::optional<std::chrono::milliseconds> client_impl::quarantine_left(std::size_t node,
                                                                      clock::time_point now) {
    const auto& q = config_.quarantine;
    const auto started = nodes_[node]->started_at();
    std::optional<std::chrono::milliseconds> left;
    if (q.enabled && started) {
        lock_options longest;
        longest.ttl = std::max(q.assumed_max_ttl, largest_ttl_);
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
    for (auto& node : nodes_) {
        node->shutdown();
    }
}

} // namespace redlock::detail
