#ifndef REDLOCK_SRC_ACQUIRE_OP_HPP
#define REDLOCK_SRC_ACQUIRE_OP_HPP

#include "core/acquire_fsm.hpp"
#include "operations/completion.hpp"
#include "operations/operation.hpp"

#include "redlock/client.hpp"

#include <optional>

namespace redlock::detail {

/// Carries out what acquire_fsm decides: the SETs, the cleanups, the timers. Sleeping
/// between attempts, it waits for the key's releases (release_watch) too. Before each
/// attempt it waits, up to connect_timeout and within the wait budget, for connections on
/// their way when fewer than a quorum are ready (core/link_gate): the votes of a fresh
/// client, or of one whose connections are coming back after an outage, would otherwise pay
/// for the connect and handshake inside their node_timeout.
class acquire_op final : public operation, private release_listener, private link_watcher {
public:
    /// `keys` valid and sorted (client::async_acquire checks and sorts them).
    acquire_op(std::shared_ptr<client_impl> impl, std::vector<std::string> keys,
               lock_options options, completion<client::acquire_signature> done);
    ~acquire_op() override;

    void start();
    void cancel() override;
    void on_reply(std::uint64_t tag, const node_reply& reply) override;

private:
    void on_timer() override;
    /// The first attempt, or the sleep behind this client's other waiters of the keys (or,
    /// its wait budget spent already, the end behind them).
    void begin();
    /// Before an attempt: true when it must wait for connections on their way (then
    /// links_waited_for() follows, at the latest at the bound).
    bool wait_for_links();
    /// Whether an attempt may go now (core/link_gate).
    bool links_allow_an_attempt() const;
    /// No more waiting for connections: unregisters from the client's link waiters.
    void stop_waiting_for_links();
    void on_links_changed() override;
    /// A handoff event's action, unless the op woke and waits for its links (the fsm still
    /// heard the event).
    void act_on_handoff(const acquire_action& action);
    /// The wait is over: the first attempt (begin()) or the next one (retry()).
    void links_waited_for();
    /// The next attempt, once woken and its links allow it (the fsm's wake).
    void retry();
    /// Ends the sleep between attempts: the next attempt, or the end when shut down.
    void wake();
    void act(const acquire_action& action);
    void send_sets();
    void send_set(std::size_t node, reply_tag tag, bool as_eval);
    void send_raises();
    void send_raise(std::size_t node, reply_tag tag, bool as_eval);
    void send_cleanups();
    void send_writer_waiting_marks();
    void on_set_reply(reply_tag tag, const node_reply& reply, clock::time_point now);
    void on_refusal_ttl_reply(reply_tag tag, const node_reply& reply, clock::time_point now);
    /// Counts what `node` answered to the current attempt's SET (or its PTTL look).
    void count_set_vote(reply_tag tag, const classified& c, std::string message, bool landed,
                        clock::time_point now);
    void on_raise_reply(reply_tag tag, const node_reply& reply, clock::time_point now);
    void on_cleanup_reply(reply_tag tag, const node_reply& reply, clock::time_point now);
    void finish(std::error_code error);
    void warn_about_counters_behind() const;
    /// For errc::fencing_counter_refused: which node, which counter, against what.
    std::string counter_refusal_text(const counter_rejection& r) const;
    std::uint64_t fence_floor() const;
    /// The keys, space-separated, for log lines and messages.
    std::string keys_text() const;
    /// The key whose releases wake this waiter: the first (a lock over several keys wakes
    /// on the others' releases by its backoff only).
    const std::string& watched_key() const { return keys_.front(); }
    const std::string& wanted() const override { return wanted_; }
    /// Starts waiting for the key's releases (again, where a subscription was lost).
    void watch_releases();

    void on_released(std::size_t node, std::size_t position) override;
    void on_released_everywhere(std::size_t position) override;
    void on_subscribed(std::size_t node, std::size_t position) override;
    void on_subscription_lost(std::size_t node) override;
    void on_local_grant(lock_mode winner) override;
    void on_moved_up(std::size_t position) override;
    void on_nudged() override;

    std::vector<std::string> keys_;
    /// The keys, sorted, each with its length in front: release_listener::wanted().
    std::string wanted_;
    /// The token of the attempt in flight (or the last one). Each attempt draws its own: a
    /// command of a finished attempt (a cleanup still queued on a slow node) then matches
    /// only that attempt's key, never a later attempt's grant.
    std::string token_;
    std::string ttl_text_;
    /// What holders_acquire.lua is told the lock is: "shared" or the permit count.
    std::string kind_text_;
    /// How long a writer's mark keeps new readers out: past its sleep and its next attempt.
    std::string mark_ttl_text_;
    /// When this writer's marks were last sent.
    std::optional<clock::time_point> marked_at_;
    /// Fenced locks only: the counter of each key, in the order of keys_.
    std::vector<std::string> counter_keys_;
    std::string fence_text_;
    lock_options options_;
    acquire_fsm fsm_;
    completion<client::acquire_signature> completion_;
    bool sleeping_ = false;
    /// Waiting for connections before an attempt (the timer is the wait's bound).
    bool waiting_for_links_ = false;
    /// begin() has run: a wait for links is followed by the fsm's wake, not by begin().
    bool started_ = false;
    /// A semaphore's holder: the slot of the attempt in flight, 0 to permits - 1.
    unsigned slot_ = 0;
    /// The latest end the options allow for the sleep in progress (environment::observe_sleep).
    clock::time_point sleep_bound_{};
    /// In the client's queue of waiters for the keys: since begin() for an exclusive lock
    /// (arrival order), else since the first sleep.
    bool queued_ = false;
    /// Subscribed to the key's releases (the first sleep, watch_releases()).
    bool watching_ = false;
    clock::time_point called_at_ = now();
};

} // namespace redlock::detail

#endif
