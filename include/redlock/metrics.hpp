#ifndef REDLOCK_METRICS_HPP
#define REDLOCK_METRICS_HPP

#include <redlock/config.hpp>
#include <redlock/export.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace redlock {

/// The lock an operation was for, as an observer sees it. Valid during the call only.
struct lock_info {
    std::span<const std::string> keys;     ///< the lock's keys, in canonical order
    lock_mode mode = lock_mode::exclusive; ///< lock_options::mode
};

/// One operation of a client (an acquire with all its attempts, an extend or renewal, a
/// release) as a tracing span, for metrics_observer::on_operation. Valid during the call only.
struct operation_span {
    std::string_view operation;                  ///< "acquire", "extend" or "release"
    lock_info lock;                              ///< the lock it was for
    std::chrono::system_clock::time_point start; ///< when the call was made
    std::chrono::nanoseconds duration{0};        ///< until it completed
    std::error_code error;                       ///< empty on success
    unsigned attempts = 1;                       ///< acquire rounds (1 for the others)
    std::size_t nodes = 0;                       ///< nodes asked
    std::size_t succeeded = 0;                   ///< nodes that granted, extended or released
};

/// `span`'s attributes under OpenTelemetry's semantic conventions for database client spans
/// (db.system.name "redis", db.operation.name the operation, error.type the outcome label
/// on failure), then redlock's own (redlock.keys, redlock.mode, redlock.attempts,
/// redlock.nodes, redlock.nodes.succeeded): what a tracer bridge copies
/// onto its span. The span's name, by the same conventions, is "redlock.<operation>".
REDLOCK_API std::vector<std::pair<std::string, std::string>>
span_attributes(const operation_span& span);

/// What a client reports as it works; implement the members you care about. Called on the
/// client's strand: keep each call short and never block.
class REDLOCK_API metrics_observer {
public:
    virtual ~metrics_observer() = default;

    /// An acquire of `lock` completed (`outcome` empty on success) after `wait`, in
    /// `attempts`.
    virtual void on_acquire(const lock_info& /*lock*/, std::error_code,
                            std::chrono::nanoseconds /*wait*/, unsigned /*attempts*/) {}
    /// A release of `lock` completed; `held` runs from the granting attempt's start.
    virtual void on_release(const lock_info& /*lock*/, std::error_code,
                            std::chrono::nanoseconds /*held*/) {}
    /// The number of locks this client holds changed: granted by it, not released, and
    /// within their validity (extends and renewals move it). A lock left to expire without
    /// a release leaves the count at the client's next acquire, extend or release after its
    /// validity ended.
    virtual void on_locks_held(std::size_t /*held*/) {}
    /// An operation completed, as a span: see operation_span and span_attributes().
    virtual void on_operation(const operation_span&) {}
    /// A watchdog renewal completed.
    virtual void on_renewal(std::error_code) {}
    /// A watchdog told its holder the lock can no longer be trusted.
    virtual void on_lock_lost(std::error_code /*reason*/) {}
    /// One node's answer to one command (`error` empty for granted or refused).
    virtual void on_node_reply(std::size_t /*node*/, std::error_code /*error*/,
                               std::chrono::microseconds /*latency*/) {}
    /// A node entered (true) or left (false) restart quarantine.
    virtual void on_quarantine(std::size_t /*node*/, bool /*quarantined*/) {}
    /// An acquire sleeping between attempts woke: early, because a majority could be free
    /// after releases announced by the nodes (`by_release`), or at the end of its backoff.
    virtual void on_acquire_wake(bool /*by_release*/) {}
};

/// The snake_case name used as a metric label for an outcome: "ok", "contention",
/// "quorum_unreachable", ..., or "other" for errors of other categories.
REDLOCK_API std::string_view outcome_label(std::error_code error);

/// A metrics_observer that keeps counters and histograms and renders them in the Prometheus
/// text exposition format (version 0.0.4). Thread-safe: render() may run on any thread.
class REDLOCK_API prometheus_metrics final : public metrics_observer {
public:
    /// `node_labels[i]` is the `node` label of node i, e.g. client_config::nodes. A label that
    /// is a node address with credentials is shown as its host:port (node_address::display()),
    /// never with the user or password; one that fails to parse as an address but has a
    /// scheme (`://`), a `@` or a `?` (it may hold a password) is shown as `nodes[i]`;
    /// host:port and names of your own stay as given.
    ///
    /// `lock_label`, when given, names the kind of each acquired lock (from its keys and
    /// mode: "checkout" for every `stock:*` key, say), and a non-empty name becomes the
    /// acquire series' `lock` label. Its cardinality is yours: name kinds of locks, never
    /// one per key or request. It runs on the client's strand: keep it quick.
    explicit prometheus_metrics(std::vector<std::string> node_labels,
                                std::function<std::string(const lock_info&)> lock_label = {});

    /// Everything observed so far, in the Prometheus text format.
    std::string render() const;

    void on_acquire(const lock_info&, std::error_code, std::chrono::nanoseconds, unsigned) override;
    void on_release(const lock_info&, std::error_code, std::chrono::nanoseconds) override;
    void on_locks_held(std::size_t) override;
    void on_renewal(std::error_code) override;
    void on_lock_lost(std::error_code) override;
    void on_node_reply(std::size_t, std::error_code, std::chrono::microseconds) override;
    void on_quarantine(std::size_t, bool) override;
    void on_acquire_wake(bool) override;

    /// Fixed buckets, in seconds: a histogram as Prometheus counts it.
    struct histogram {
        /// Empty, with these upper bounds (ascending).
        explicit histogram(std::vector<double> bounds);
        /// Counts `seconds` in the first bucket whose bound is at least as large.
        void observe(double seconds);
        std::vector<double> bounds;        ///< upper bound of each bucket, ascending
        std::vector<std::uint64_t> counts; ///< per bucket, not cumulative
        std::uint64_t count = 0;           ///< observations, those above every bound included
        double sum = 0;                    ///< of all observations
    };

private:
    struct node_series {
        histogram latency;
        std::map<std::string, std::uint64_t, std::less<>> errors;
        bool quarantined = false;
    };

    mutable std::mutex mutex_;
    std::vector<std::string> node_labels_;
    std::function<std::string(const lock_info&)> lock_label_;
    histogram acquire_wait_;
    histogram hold_;
    /// Per outcome, then per lock label ("" for none).
    std::map<std::pair<std::string, std::string>, std::uint64_t, std::less<>> acquires_;
    std::size_t locks_held_ = 0;
    std::uint64_t attempts_ = 0;
    std::map<std::string, std::uint64_t, std::less<>> wakes_;
    std::map<std::string, std::uint64_t, std::less<>> releases_;
    std::map<std::string, std::uint64_t, std::less<>> renewals_;
    std::map<std::string, std::uint64_t, std::less<>> lost_;
    std::vector<node_series> nodes_;
};

} // namespace redlock

#endif
