#ifndef REDLOCK_SRC_NODE_CONNECTION_HPP
#define REDLOCK_SRC_NODE_CONNECTION_HPP

#include "core/clock_mark.hpp"
#include "core/clock_watch.hpp"
#include "core/time_source.hpp"
#include "transport/byte_stream.hpp"
#include "transport/node_link.hpp"
#include "transport/reply_pipeline.hpp"
#include "transport/stream_connector.hpp"

#include "redlock/config.hpp"
#include "redlock/error.hpp"
#include "redlock/node_address.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace redlock::detail {

/// One Redis master: a single connection, (re)connected on demand through its
/// stream_connector (socket_connector: the host name resolved in the background, then TCP,
/// a unix socket, or TLS; the simulation's network in the simulation), logged in with AUTH
/// and SELECT, on which
/// every command of every operation is pipelined in send order. That order is what makes a
/// cleanup safe: Redis runs one connection's commands in sequence, so a compare-and-delete
/// can never overtake the SET it cleans up.
///
/// Asio owns the socket; hiredis only formats commands and parses replies (reply_pipeline),
/// so whatever a node sends costs at most its own connection: never an abort, never
/// unbounded memory. A connection whose oldest command waits past the reply patience is
/// reset, so a stuck node holds no queue for ever.
///
/// Every command sent gets exactly one reply_target::on_reply, possibly long after its
/// operation stopped caring. Lives on (and must only be used from) a strand.
class node_connection final : public node_link {
public:
    /// A subscriber connection: the same connect, TLS and AUTH/SELECT handshake, but no INFO
    /// or SCRIPT LOAD (a subscribed connection serves neither, and needs neither); `push`
    /// sees every reply first and takes the pushed messages, `dropped` runs (posted) when a
    /// connection that was up breaks or is closed, its subscriptions gone with it.
    struct subscriber_hooks {
        reply_pipeline::push_fn push;
        std::function<void()> dropped;
    };
    /// `time` (the clock and timers, on `strand`) and `connector` (how streams to the node
    /// are opened) are the seams: steady_clock and real sockets in production, simulated
    /// ones in the deterministic simulation. Hooks make a subscriber connection.
    node_connection(boost::asio::any_io_executor strand, node_address address,
                    const client_config& config, std::unique_ptr<time_source> time,
                    std::unique_ptr<stream_connector> connector, subscriber_hooks hooks = {});
    ~node_connection() override;
    node_connection(const node_connection&) = delete;
    node_connection& operator=(const node_connection&) = delete;

    void begin_batch() override { ++batch_depth_; }
    void end_batch() override;
    void send(const command& cmd, const std::shared_ptr<reply_target>& target,
              std::uint64_t tag) override;
    void shutdown(std::chrono::milliseconds drain) override;
    void expect_replies_within(std::chrono::milliseconds patience) override;

    /// When the server was last (re)started, as far as INFO server told us on connect or
    /// refresh; empty until known. A changed run_id counts as a restart at the moment it was
    /// seen, and so does a changed evicted_keys (keys forgotten).
    std::optional<clock::time_point> started_at() const noexcept override { return started_at_; }
    std::optional<clock::time_point> restart_seen_at() const noexcept override {
        return restart_seen_at_;
    }
    std::string_view run_id() const noexcept override { return run_id_; }
    std::string_view restarts_undetectable() const noexcept override { return info_refused_; }
    std::string_view eviction_risk() const noexcept override { return eviction_risk_; }
    std::string_view not_primary() const noexcept override { return not_primary_; }
    std::string_view quarantine_cause() const noexcept override { return quarantine_cause_; }
    std::string_view clock_steps_undetectable() const noexcept override { return time_refused_; }
    void allow_clock_drift(double rate) override { clock_drift_ = std::max(clock_drift_, rate); }
    void on_server_read(std::function<void()> seen) override { server_read_ = std::move(seen); }

    std::uint64_t connection_generation() const noexcept override { return generation_; }
    link_readiness readiness() const noexcept override;
    void warm_up() override;
    void on_readiness_changed(std::function<void()> changed) override {
        readiness_changed_ = std::move(changed);
    }
    const node_address& address() const noexcept override { return address_; }

    /// A Sentinel (`sentinel`, its host:port) announced that this node's primary is now at
    /// `host`:`port` (+switch-master, sentinel_watch): a connection to another server drops
    /// itself, and the next connect asks every Sentinel again (their majority decides). One
    /// being made is weighed once it is up.
    void primary_moved(const std::string& host, std::uint16_t port, const std::string& sentinel);

private:
    enum class state { idle, connecting, connected, backing_off, shut_down };

    /// A command waiting for the connection and its AUTH/SELECT, already in wire format.
    struct held_back {
        std::string bytes;
        std::shared_ptr<reply_target> target;
        std::uint64_t tag;
    };

    /// One connected socket and what travels on it. Handlers hold it, so they can tell,
    /// without touching the connection, that the socket they served was dropped (or the
    /// connection destroyed) meanwhile.
    struct wire {
        wire(std::unique_ptr<byte_stream> s, std::size_t max_reply_size,
             std::vector<std::string> secrets)
            : stream(std::move(s))
            , replies(max_reply_size, std::move(secrets)) {}
        std::unique_ptr<byte_stream> stream;
        reply_pipeline replies;
        /// The error text of the latest reply while every reply on this connection was an
        /// error, else empty: a server that refuses a client says why and closes (`-DENIED
        /// ... protected mode`), and that, not the close, is the reason to report. Once a
        /// command succeeded, a later close is not explained by an earlier error.
        std::string refusal;
        bool answered = false; ///< a reply other than an error came
        bool current = true;
        std::string queued;  ///< formatted commands not yet handed to a write
        std::string writing; ///< the bytes of the write in flight
        bool write_in_flight = false;
        /// A write made inside send() failed: the next flush reports it.
        boost::system::error_code write_error;
        bool flush_posted = false;
        std::array<char, 16 * 1024> read_buffer{};
    };

    void connect();
    void connected(std::unique_ptr<byte_stream> stream);
    /// False when the connect attempt `attempt` is over (timed out, shut down, superseded).
    bool attempt_is_current(std::uint64_t attempt) const noexcept;

    void queue_handshake();
    void queue_step(std::string bytes, std::uint64_t step);
    void issue(std::string bytes, const std::shared_ptr<reply_target>& target, std::uint64_t tag);
    void release_held_back();
    void schedule_flush();
    void flush(const std::shared_ptr<wire>& w);
    void write_failed(const std::shared_ptr<wire>& w, const boost::system::error_code& ec);
    void read(const std::shared_ptr<wire>& w);
    void watch_patience();

    bool on_reply(sent_command&& sent, const node_reply& reply);
    bool on_handshake_reply(const redisReply* reply, const sent_command& sent);
    /// An INFO reply; `sent_at` is when that INFO was written.
    void on_server_info(const redisReply* reply, clock::time_point sent_at);
    /// A reply of lua/clock_mark.lua sent at `sent_at` (as EVAL when `as_eval`): a TIME
    /// sample for clock_watch_, and the step the node recorded for clock_mark_watch_.
    void on_clock_mark(const redisReply* reply, clock::time_point sent_at, bool as_eval);
    /// lua/clock_mark.lua, by EVALSHA or (after NOSCRIPT) EVAL.
    std::string clock_mark_command(bool as_eval) const;
    /// INFO and the clock mark, as at connect: the refresh.
    void queue_node_reads();
    /// INFO again after client_config::eviction::refresh_interval, on this same wire only.
    void schedule_refresh();
    void let_go(std::shared_ptr<reply_target> target);

    /// Closes the socket (if any), fails every command sent or held back, and backs off
    /// before the next connect (or stays shut down).
    void drop_connection(const std::string& why);
    void fail_later(const std::shared_ptr<reply_target>& target, std::uint64_t tag, errc error,
                    std::string message);
    void log(log_level level, const std::string& message) const;

    boost::asio::any_io_executor strand_;
    node_address address_;
    const client_config& config_;
    std::unique_ptr<time_source> time_;
    std::unique_ptr<stream_connector> connector_;
    std::string display_;
    // Cut from whatever this node says: see configured_secrets().
    std::vector<std::string> secrets_;
    subscriber_hooks subscriber_;

    state state_ = state::idle;
    std::shared_ptr<wire> wire_;
    // Commands queued behind a failing AUTH would run as the default user, and behind a
    // failing SELECT in the wrong database: until the handshake succeeds they wait here.
    std::deque<held_back> held_back_;
    std::size_t handshake_outstanding_ = 0;
    // Commands of operations written and not answered yet (the handshake's are not counted).
    std::size_t commands_awaited_ = 0;
    // A connect attempt is under way: also after shutdown(), to drain what was held back.
    bool connecting_ = false;
    std::string last_error_;
    unsigned consecutive_failures_ = 0;
    // Resolving, connecting and the TLS handshake share one deadline; an earlier connect()
    // recognises itself as stale by its attempt number.
    std::uint64_t connect_attempts_ = 0;
    /// node_link::on_server_read.
    std::function<void()> server_read_;
    /// node_link::on_readiness_changed.
    std::function<void()> readiness_changed_;
    // The server's INFO was read on the current connection (a subscriber reads none).
    bool server_read_here_ = false;
    // The server's run_id was read on the current connection.
    bool identified_here_ = false;
    /// Batches begun and not ended: while any is, commands are queued, not written at once.
    unsigned batch_depth_ = 0;
    // A connection broke before it read a run_id: dropped_at_ stays where it is until one
    // is read again.
    bool restart_placement_held_ = false;
    /// The earliest start INFO's uptime placed for the server of run_id_ (uptime_start).
    std::optional<clock::time_point> uptime_start_;
    clock::time_point connected_at_;
    std::chrono::milliseconds patience_{1000};
    bool patience_watched_ = false;
    std::string run_id_;
    // Counts drop_connection(): commands sent after a drop travel on another connection.
    std::uint64_t generation_ = 0;
    // Set while the latest INFO server was refused (an ACL user without +info), else empty.
    std::string info_refused_;
    std::optional<clock::time_point> started_at_;
    // Set while the node can evict keys (or does not say whether it can), else empty.
    std::string eviction_risk_;
    // Set while the server says it is no primary (INFO replication), else empty.
    std::string not_primary_;
    // master_replid of the last INFO: a change under one run_id is a role taken anew.
    std::string replication_id_;
    // When the last INFO that showed the current run_id and replication id was sent: a role
    // taken anew is placed there (restart_seen_at).
    std::optional<clock::time_point> identity_confirmed_at_;
    // When the current server (run_id and replication id) became a primary, if INFO says it
    // was promoted since it started: started_at_ is never earlier.
    std::optional<clock::time_point> promoted_at_;
    // The run_id of the server last warned of for taking writes without replicas.
    std::string split_brain_warned_for_;
    // evicted_keys of the last INFO of the current run_id: any change is keys forgotten.
    std::optional<std::uint64_t> evicted_keys_;
    // When keys were last seen forgotten (evicted_keys changed, or another run_id answered):
    // started_at_ is never earlier, whatever uptime later refreshes report.
    std::optional<clock::time_point> forgot_at_;
    // When another run_id last answered, placed at dropped_at_: restart_seen_at().
    std::optional<clock::time_point> restart_seen_at_;
    // When a connection (or an attempt to make one) was last dropped, except that a
    // connection made after it that broke before reading the server's run_id holds it
    // there (restart_placement_held_): that connection may already have been to a new
    // server (its INFO reply lost, say), with the commands it carried. Every command sent
    // after it may have reached another server.
    std::optional<clock::time_point> dropped_at_;
    // The node's TIME against the steady clock, at connect and on every refresh.
    clock_watch clock_watch_;
    // The backward steps lua/clock_mark.lua recorded on the node, read with that TIME.
    clock_mark_watch clock_mark_watch_;
    double clock_drift_ = lock_options{}.clock_drift_factor;
    // "clock stepped by ...": set when a step moved started_at_, cleared by a restart or an
    // eviction seen later.
    std::string quarantine_cause_;
    // Set while the latest clock mark was refused (an ACL user without +time, +evalsha or
    // the key pattern of quarantine_options::node_key_prefix), else empty.
    std::string time_refused_;
    // Posted handlers check this first: they may run after this object is gone.
    std::shared_ptr<const bool> alive_ = std::make_shared<const bool>(true);
    std::unique_ptr<alarm> connect_alarm_;
    std::unique_ptr<alarm> backoff_alarm_;
    std::unique_ptr<alarm> patience_alarm_;
    std::unique_ptr<alarm> drain_alarm_;
    std::unique_ptr<alarm> refresh_alarm_;
    /// The refresh alarm is armed: no INFO of this connection is on its way.
    bool refresh_waiting_ = false;
    /// The last switch announced while connecting (primary_moved), weighed once connected.
    struct announcement {
        std::string host;
        std::uint16_t port;
        std::string sentinel;
    };
    std::optional<announcement> announced_primary_;
};

} // namespace redlock::detail

#endif
