#ifndef REDLOCK_SRC_RUNTIME_CLIENT_IMPL_HPP
#define REDLOCK_SRC_RUNTIME_CLIENT_IMPL_HPP

#include "core/held_locks.hpp"
#include "core/server_identities.hpp"
#include "core/time_source.hpp"
#include "core/validity.hpp"
#include "runtime/ceiling_reads.hpp"
#include "runtime/environment.hpp"
#include "runtime/fence_floors.hpp"
#include "runtime/link_watchers.hpp"
#include "runtime/release_watch.hpp"
#include "runtime/renewal_timers.hpp"
#include "transport/ceiling_link.hpp"
#include "transport/node_link.hpp"

#include "redlock/config.hpp"
#include "redlock/error.hpp"
#include "redlock/lock.hpp"
#include "redlock/metrics.hpp"
#include "redlock/node_address.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace redlock::detail {

/// Something that must stop when the client shuts down.
class cancellable {
public:
    virtual void cancel() = 0;

protected:
    ~cancellable() = default;
};

/// The state shared by a client and its operations, confined to one strand.
class client_impl {
public:
    /// The only way to make one: whoever lets go of it last (a client's destructor on any
    /// thread, an operation's handler), it is destroyed in a handler on its strand, after
    /// the handlers already queued there (replies failed by the shutdown, a subscriber's
    /// last reply) that still reach into its connections. Destroyed with the executor's
    /// context if that never runs again.
    static std::shared_ptr<client_impl> create(const boost::asio::any_io_executor& executor,
                                               client_config config,
                                               std::vector<node_address> addresses,
                                               environment env = environment::production());
    client_impl(const client_impl&) = delete;
    client_impl& operator=(const client_impl&) = delete;

    const boost::asio::any_io_executor& strand() const noexcept { return strand_; }
    std::size_t node_count() const noexcept { return nodes_.size(); }
    node_link& node(std::size_t index) { return *nodes_[index]; }
    /// Runs `fn` with every link batching (node_link::begin_batch): what `fn` sends leaves
    /// in one write per node when it returns.
    template <typename Fn>
    void batched(Fn&& fn) {
        for (auto& n : nodes_) {
            n->begin_batch();
        }
        struct end_batch {
            std::vector<std::unique_ptr<node_link>>& nodes;
            ~end_batch() {
                for (auto& n : nodes) {
                    n->end_batch();
                }
            }
        } end{nodes_};
        std::forward<Fn>(fn)();
    }

    clock::time_point now() const { return time_->now(); }
    std::unique_ptr<alarm> make_alarm() { return time_->make_alarm(); }

    std::string next_token() { return env_.next_token(); }
    std::uint64_t next_random() { return jitter_(); }
    void log(log_level level, const std::string& message) const;
    const client_config& config() const noexcept { return config_; }

    /// Every operation reports the options of the keys it acts on (an extend with the ttl it
    /// sets): the quarantine covers the fleet's maximum ttl with the largest drift, and a
    /// shutdown lets the commands already sent be answered for up to the largest node_timeout.
    void note_options(const lock_options& options) noexcept;
    /// A command of ours may wait this long for its answer (a node_timeout, an inspect's
    /// timeout): connections keep their patience above it.
    void note_node_timeout(std::chrono::milliseconds node_timeout) noexcept;
    /// Whether `node`'s votes must not count now, and for how much longer.
    /// Also reports quarantine transitions to the metrics observer.
    std::optional<std::chrono::milliseconds> quarantine_left(std::size_t node,
                                                             clock::time_point now);
    /// What the quarantine of `node` lasts for as of the last quarantine_left(): "learned
    /// ceiling 1000 ms from 3 nodes" or "maximum (...)"; empty when not quarantined.
    const std::string& quarantine_basis(std::size_t node) const {
        return quarantine_basis_.at(node);
    }
    /// Why `node` is (or would be) quarantined: its connection's cause (a clock step it
    /// saw or found recorded on the node), else "node restarted".
    std::string quarantine_cause(std::size_t node) const;
    /// Whether the TTL ceilings read for `node`'s quarantine have not come back from any
    /// node yet (they were sent by the latest quarantine_left()): an inspect waits for them.
    bool ceiling_reads_unanswered(std::size_t node) const;

    /// Extend rounds register while they live (their replies may still come in); a release
    /// that starts meanwhile is remembered until the last of them is gone, so that none of
    /// them sends its extend again behind the release.
    void extend_alive(const std::string& token);
    void extend_gone(const std::string& token);
    void note_release(const std::string& token);
    bool release_started(const std::string& token) const { return released_.count(token) != 0; }
    /// Called each time `node`'s link has read its INFO or clock mark (node_link::
    /// on_server_read): a restart (or clock step) seen within the fleet maximum has the other
    /// nodes' TTL ceilings read at once, not at the node's first grant, which may come only
    /// after the maximum, too late to learn that a longer lock stands.
    void notice_restart(std::size_t node, clock::time_point now);
    /// Why a grant from a node must not count.
    struct veto {
        errc error;
        std::string message;
    };
    /// Whether a grant `node` gave now must not count: the server already counts through
    /// another node (same run_id), its restarts or evictions cannot be detected (INFO
    /// refused) while the quarantine or the eviction veto is on, it can evict keys and
    /// evicting nodes are not accepted, or it is quarantined after a restart or an eviction;
    /// a quarantine any link to the same server knows counts too.
    std::optional<veto> veto_grant(std::size_t node, clock::time_point now);
    /// What link `node` itself knows against its server's vote: a quarantine and, with
    /// `state_too`, what it read of the server's state (INFO refused, a policy that evicts).
    /// veto_grant asks the voting link for both and every other link of the server for the
    /// quarantine.
    std::optional<veto> link_veto(std::size_t node, clock::time_point now, bool state_too);

    /// environment::observe_sleep, when set.
    void observe_sleep(const void* op, std::optional<clock::time_point> bound) const {
        if (env_.observe_sleep) {
            env_.observe_sleep(op, bound);
        }
    }

    /// Handoff: the waiters of each key and the subscriptions that wake them.
    release_watch& releases() noexcept { return *releases_; }

    /// Acquires waiting for connections before an attempt.
    link_watchers& link_waiters() noexcept { return link_waiters_; }
    /// How many links are ready, and how many are connecting (link_readiness).
    std::pair<std::size_t, std::size_t> links_ready_and_connecting() const noexcept;
    /// Every link that is not connected or connecting starts connecting (unless it backs off).
    void warm_up_links();

    /// The one timer every watchdog of this client waits on.
    renewal_timers& timers() noexcept { return *timers_; }

    /// Fencing tokens this client was granted, per key.
    fence_floors& fences() noexcept { return fences_; }

    /// The observer from client_config, or null.
    metrics_observer* metrics() const noexcept { return config_.metrics.get(); }
    /// The locks-held gauge (with an observer only): a grant of this client, an extend or
    /// renewal of one, a release started. Each reports the new count to the observer.
    void lock_granted(const lock& granted);
    void lock_extended(const lock& extended);
    void lock_released(const lock& released);

    /// client::close() was called (from any thread); the shutdown itself may still be queued
    /// on the strand. True only for the first call.
    bool request_close() noexcept { return !close_requested_.exchange(true); }
    bool close_requested() const noexcept { return close_requested_.load(); }

    bool shut_down() const noexcept { return shut_down_; }
    /// Cancels every live operation and closes every connection.
    void shutdown();

    void register_operation(cancellable* op) { live_.insert(op); }
    void unregister_operation(cancellable* op) { live_.erase(op); }

private:
    client_impl(const boost::asio::any_io_executor& executor, client_config config,
                std::vector<node_address> addresses, environment env);
    ceiling_terms ceiling_terms_now() const noexcept;
    /// Whether `reader`'s ceiling may count toward the learned quarantine of another node:
    /// connected with INFO answered, not evicting, not restarted (or stepped) within the
    /// fleet's maximum.
    bool ceiling_eligible(std::size_t reader, clock::time_point now) const;
    /// Whether TTL ceiling reads can be sent (and tagged) now.
    bool can_read_ceilings() const;
    /// Sends a read of every other node's TTL ceiling for `node`'s current round.
    void send_ceiling_reads(std::size_t node);
    /// How long `node`'s locks may stand after its restart at `started`: reads the other
    /// nodes' ceilings when the restart is first seen (quarantine_left reads them again once
    /// the maximum has passed), and decides from those that came back.
    quarantine_figure quarantine_figure_for(std::size_t node, clock::time_point started,
                                            clock::time_point now);
    std::chrono::microseconds largest_drift(std::chrono::milliseconds ttl) const noexcept;
    ~client_impl() = default;

    boost::asio::any_io_executor strand_;
    client_config config_;
    environment env_;
    std::unique_ptr<time_source> time_;
    std::vector<std::unique_ptr<node_link>> nodes_;
    std::unique_ptr<release_watch> releases_;
    std::mt19937_64 jitter_;
    std::unordered_set<cancellable*> live_;
    std::chrono::milliseconds largest_node_timeout_{0};
    std::unordered_map<std::string, unsigned> extends_alive_;
    /// Tokens released while an extend round of theirs was alive.
    std::unordered_set<std::string> released_;
    // Drift settings of the locks in use, each the largest seen, never below the defaults
    // (which is all that is known of other clients' locks besides client_config::fleet_max_ttl).
    double largest_drift_factor_ = lock_options{}.clock_drift_factor;
    std::chrono::milliseconds largest_drift_allowance_ = lock_options{}.drift_allowance;
    // What the links were last told by allow_clock_drift (they start at the default).
    double clock_drift_allowed_ = lock_options{}.clock_drift_factor;
    std::vector<bool> reported_quarantined_;
    std::vector<std::string> quarantine_basis_;
    // The links as ceiling_links (the same objects as nodes_), to pass on the drift.
    std::vector<ceiling_link*> ceilings_;
    // TTL ceilings read after a restart, shared with the reads in flight.
    std::shared_ptr<ceiling_reads> ceiling_reads_;
    // Which node's votes count for each server (run_id): at most one entry per node.
    server_identities servers_;
    // The run_id under which each node was last logged as a duplicate, to log it once.
    std::vector<std::string> reported_duplicate_;
    fence_floors fences_;
    link_watchers link_waiters_;
    held_locks held_locks_;
    std::shared_ptr<renewal_timers> timers_;
    bool shut_down_ = false;
    std::atomic<bool> close_requested_{false};
};

} // namespace redlock::detail

#endif
