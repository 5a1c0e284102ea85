#include "redlock/metrics.hpp"

#include "redlock/error.hpp"
#include "redlock/node_address.hpp"

#include <algorithm>
#include <cstdio>

namespace redlock {

namespace {

std::vector<double> latency_bounds() {
    return {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
            0.025,   0.05,   0.1,     0.25,   0.5,   1,      2.5};
}

std::vector<double> duration_bounds() {
    return {0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300};
}

double seconds(std::chrono::nanoseconds d) {
    return std::chrono::duration<double>(d).count();
}

std::string number(double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.9g", v);
    return text;
}

/// A node address given with credentials becomes its host:port: a label is shown to everyone
/// who can read the metrics. A text the parser refuses but that has a URL's scheme, user part
/// or query (where a password would be) becomes `nodes[i]`: what it holds is unknown. Anything
/// else (host:port, a name of the user's) stays as given.
std::string node_label(std::string text, std::size_t node) {
    node_address address;
    std::string why;
    if (parse_node_address(text, address, why)) {
        if (text.find("://") != std::string::npos ||
            text.find_first_of("@?") != std::string::npos) {
            return "nodes[" + std::to_string(node) + "]";
        }
        return text;
    }
    if (!address.password.empty() || !address.user.empty()) {
        return address.display();
    }
    return text;
}

/// Label values are addresses and snake_case words; escape what the format requires anyway.
std::string escape(std::string_view value) {
    std::string out;
    for (char c : value) {
        if (c == '\\' || c == '"') {
            out.push_back('\\');
            out.push_back(c);
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out.push_back(c);
        }
    }
    return out;
}

void header(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
    out.append("# HELP ").append(name).append(" ").append(help).append("\n");
    out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
}

void render_histogram(std::string& out, std::string_view name, std::string_view labels,
                      const prometheus_metrics::histogram& h) {
    std::uint64_t cumulative = 0;
    const std::string sep = labels.empty() ? "" : ",";
    for (std::size_t i = 0; i < h.bounds.size(); ++i) {
        cumulative += h.counts[i];
        out.append(name).append("_bucket{").append(labels).append(sep);
        out.append("le=\"").append(number(h.bounds[i])).append("\"} ");
        out.append(std::to_string(cumulative)).append("\n");
    }
    out.append(name).append("_bucket{").append(labels).append(sep).append("le=\"+Inf\"} ");
    out.append(std::to_string(h.count)).append("\n");
    std::string braces;
    if (!labels.empty()) {
        braces.append("{").append(labels).append("}");
    }
    out.append(name).append("_sum").append(braces).append(" ").append(number(h.sum)).append("\n");
    out.append(name).append("_count").append(braces).append(" ");
    out.append(std::to_string(h.count)).append("\n");
}

void render_counters(std::string& out, std::string_view name, std::string_view label,
                     const std::map<std::string, std::uint64_t, std::less<>>& values) {
    for (const auto& [key, value] : values) {
        out.append(name).append("{").append(label).append("=\"").append(escape(key));
        out.append("\"} ").append(std::to_string(value)).append("\n");
    }
}

std::string_view error_kind(std::error_code e) {
    if (e == errc::node_timeout) {
        return "timeout";
    }
    if (e == errc::connection_failed) {
        return "connection";
    }
    if (e == errc::server_error) {
        return "server";
    }
    if (e == errc::unexpected_reply) {
        return "unexpected_reply";
    }
    if (e == errc::node_backlogged) {
        return "backlogged";
    }
    if (e == errc::node_quarantined) {
        return "quarantined";
    }
    if (e == errc::duplicate_node) {
        return "duplicate";
    }
    if (e == errc::restarts_undetectable) {
        return "restarts_undetectable";
    }
    if (e == errc::node_can_evict) {
        return "can_evict";
    }
    if (e == errc::node_not_primary) {
        return "not_primary";
    }
    if (e == errc::cancelled) {
        return "cancelled";
    }
    if (e == errc::lock_mismatch) {
        return "mismatch";
    }
    return "other";
}

} // namespace

std::string_view outcome_label(std::error_code e) {
    if (!e) {
        return "ok";
    }
    if (e.category() != error_category()) {
        return "other";
    }
    switch (static_cast<errc>(e.value())) {
    case errc::contention:
        return "contention";
    case errc::quorum_unreachable:
        return "quorum_unreachable";
    case errc::validity_expired:
        return "validity_expired";
    case errc::lock_lost:
        return "lock_lost";
    case errc::cancelled:
        return "cancelled";
    case errc::invalid_argument:
        return "invalid_argument";
    case errc::nodes_quarantined:
        return "nodes_quarantined";
    case errc::client_closed:
        return "client_closed";
    case errc::lock_mismatch:
        return "lock_mismatch";
    case errc::fencing_counter_refused:
        return "fencing_counter_refused";
    default:
        return error_kind(e);
    }
}

prometheus_metrics::histogram::histogram(std::vector<double> b)
    : bounds(std::move(b))
    , counts(bounds.size(), 0) {}

void prometheus_metrics::histogram::observe(double value) {
    const auto at = std::lower_bound(bounds.begin(), bounds.end(), value);
    if (at != bounds.end()) {
        ++counts[static_cast<std::size_t>(at - bounds.begin())];
    }
    ++count;
    sum += value;
}

prometheus_metrics::prometheus_metrics(std::vector<std::string> node_labels,
                                       std::function<std::string(const lock_info&)> lock_label)
    : lock_label_(std::move(lock_label))
    , acquire_wait_(duration_bounds())
    , hold_(duration_bounds()) {
    for (auto& label : node_labels) {
        node_labels_.push_back(node_label(std::move(label), node_labels_.size()));
        nodes_.push_back({histogram(latency_bounds()), {}, false});
    }
}

void prometheus_metrics::on_acquire(const lock_info& lock, std::error_code e,
                                    std::chrono::nanoseconds wait, unsigned attempts) {
    // Outside the mutex: the user's function may take its time.
    auto label = lock_label_ ? lock_label_(lock) : std::string();
    std::lock_guard guard(mutex_);
    acquire_wait_.observe(seconds(wait));
    ++acquires_[{std::string(outcome_label(e)), std::move(label)}];
    attempts_ += attempts;
}

void prometheus_metrics::on_locks_held(std::size_t held) {
    std::lock_guard guard(mutex_);
    locks_held_ = held;
}

void prometheus_metrics::on_release(const lock_info&, std::error_code e,
                                    std::chrono::nanoseconds held) {
    std::lock_guard guard(mutex_);
    hold_.observe(seconds(held));
    ++releases_[std::string(outcome_label(e))];
}

void prometheus_metrics::on_renewal(std::error_code e) {
    std::lock_guard guard(mutex_);
    ++renewals_[e ? "failed" : "ok"];
}

void prometheus_metrics::on_lock_lost(std::error_code reason) {
    std::lock_guard guard(mutex_);
    ++lost_[std::string(outcome_label(reason))];
}

void prometheus_metrics::on_node_reply(std::size_t node, std::error_code e,
                                       std::chrono::microseconds latency) {
    std::lock_guard guard(mutex_);
    if (node >= nodes_.size()) {
        return;
    }
    if (e) {
        ++nodes_[node].errors[std::string(error_kind(e))];
    } else {
        nodes_[node].latency.observe(seconds(latency));
    }
}

void prometheus_metrics::on_quarantine(std::size_t node, bool quarantined) {
    std::lock_guard guard(mutex_);
    if (node < nodes_.size()) {
        nodes_[node].quarantined = quarantined;
    }
}

void prometheus_metrics::on_acquire_wake(bool by_release) {
    std::lock_guard guard(mutex_);
    ++wakes_[by_release ? "release" : "backoff"];
}

std::string prometheus_metrics::render() const {
    std::lock_guard guard(mutex_);
    std::string out;
    header(out, "redlock_acquire_wait_seconds", "histogram",
           "Time from an acquire call to its completion, retries included.");
    render_histogram(out, "redlock_acquire_wait_seconds", "", acquire_wait_);
    header(out, "redlock_acquires_total", "counter",
           "Completed acquires by outcome (and the kind of lock, when labelled).");
    for (const auto& [key, value] : acquires_) {
        const auto& [outcome, lock] = key;
        out.append("redlock_acquires_total{outcome=\"").append(escape(outcome));
        if (!lock.empty()) {
            out.append("\",lock=\"").append(escape(lock));
        }
        out.append("\"} ").append(std::to_string(value)).append("\n");
    }
    header(out, "redlock_locks_held", "gauge",
           "Locks this client holds: granted, not released, within their validity.");
    out.append("redlock_locks_held ").append(std::to_string(locks_held_)).append("\n");
    header(out, "redlock_acquire_attempts_total", "counter",
           "Attempts made by completed acquires.");
    out.append("redlock_acquire_attempts_total ").append(std::to_string(attempts_)).append("\n");
    header(out, "redlock_acquire_wakes_total", "counter",
           "Acquires woken between attempts: by announced releases, or at the end of the backoff.");
    render_counters(out, "redlock_acquire_wakes_total", "by", wakes_);
    header(out, "redlock_lock_hold_seconds", "histogram",
           "Time from the granting attempt to the release.");
    render_histogram(out, "redlock_lock_hold_seconds", "", hold_);
    header(out, "redlock_releases_total", "counter", "Completed releases by outcome.");
    render_counters(out, "redlock_releases_total", "outcome", releases_);
    header(out, "redlock_renewals_total", "counter", "Watchdog renewals by outcome.");
    render_counters(out, "redlock_renewals_total", "outcome", renewals_);
    header(out, "redlock_locks_lost_total", "counter",
           "Locks whose holder was told they can no longer be trusted, by reason.");
    render_counters(out, "redlock_locks_lost_total", "reason", lost_);
    header(out, "redlock_node_latency_seconds", "histogram",
           "Round trip of commands a node answered.");
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        render_histogram(out, "redlock_node_latency_seconds",
                         "node=\"" + escape(node_labels_[i]) + "\"", nodes_[i].latency);
    }
    header(out, "redlock_node_errors_total", "counter", "Failed node votes by kind.");
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        for (const auto& [kind, value] : nodes_[i].errors) {
            out.append("redlock_node_errors_total{node=\"").append(escape(node_labels_[i]));
            out.append("\",kind=\"").append(kind).append("\"} ");
            out.append(std::to_string(value)).append("\n");
        }
    }
    header(out, "redlock_node_quarantined", "gauge",
           "1 while a node's votes do not count after a restart.");
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        out.append("redlock_node_quarantined{node=\"").append(escape(node_labels_[i]));
        out.append("\"} ").append(nodes_[i].quarantined ? "1" : "0").append("\n");
    }
    return out;
}

} // namespace redlock
