#ifndef REDLOCK_SRC_TRANSPORT_NODE_LINK_HPP
#define REDLOCK_SRC_TRANSPORT_NODE_LINK_HPP

#include "core/validity.hpp"
#include "transport/commands.hpp"
#include "transport/node_reply.hpp"

#include "redlock/node_address.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>

namespace redlock::detail {

/// How soon a command sent on a link now would reach its node.
enum class link_readiness {
    /// Connected, handshake answered, the server's INFO read: only the node's own time.
    ready,
    /// A connection or its handshake is on its way: a command would wait for it.
    connecting,
    /// Nothing is connected or on its way (not used yet, backing off after a failure, shut
    /// down): a command would fail at once, or wait for a whole new connect.
    unavailable,
};

/// What the operations need of one Redis master: the seam between them and the wire, so that
/// the same operations run over real connections (node_connection) and simulated ones.
///
/// Every command sent gets exactly one reply_target::on_reply, never from inside send(), and
/// the replies of one link come in send order: the node runs one link's commands in sequence.
/// Used on the client's strand only.
class node_link {
public:
    virtual ~node_link() = default;

    /// Commands sent from here to end_batch() leave together at end_batch(), rather than
    /// each as soon as it is sent: a release and the acquire of the waiter it wakes, sent in
    /// one handler, reach the node in one write. Batches may nest: the outermost end writes.
    virtual void begin_batch() = 0;
    virtual void end_batch() = 0;
    virtual void send(const command& cmd, const std::shared_ptr<reply_target>& target,
                      std::uint64_t tag) = 0;
    /// Refuses new commands. Commands already sent still get their replies for up to
    /// `drain` (the cleanups and releases of a client being torn down reach their node);
    /// what is left then fails with errc::cancelled.
    virtual void shutdown(std::chrono::milliseconds drain) = 0;
    /// A connection whose oldest command has waited this long for its reply is reset (its
    /// commands fail): a stuck node must not hold a queue and its memory for ever.
    virtual void expect_replies_within(std::chrono::milliseconds patience) = 0;

    /// When the server was last (re)started, as far as the link could tell; empty until known.
    virtual std::optional<clock::time_point> started_at() const noexcept = 0;
    /// When the link last found another server behind the address (INFO's run_id changed on
    /// a reconnect), placed at the break of the connection before the one that found it,
    /// or earlier, at the break before a connection that broke before reading the run_id;
    /// empty if it never did. A restart breaks every connection, so every command sent
    /// before this moment reached the old server or nothing, and one sent after it may have
    /// reached the new one (held back for the new connection, sent on it before its INFO was
    /// answered, or on a connection in between whose INFO never came). Unlike
    /// started_at(), which a reconnect places from INFO's whole-second uptime (it may move
    /// earlier with no restart) and which an eviction moves too (an eviction does not say which
    /// keys went: a missing key there may as well have been deleted on purpose), this is
    /// what a renewal weighs before writing a missing key back (recreate_where).
    virtual std::optional<clock::time_point> restart_seen_at() const noexcept = 0;
    /// The server's run_id, empty until known. Two links with one run_id reach one server,
    /// whose vote must count once.
    virtual std::string_view run_id() const noexcept = 0;
    /// Why this link cannot tell when the server restarts or evicts keys (INFO refused), or
    /// empty when it can.
    virtual std::string_view restarts_undetectable() const noexcept = 0;
    /// Why the server can evict (and so forget) lock keys, as its INFO memory said at the
    /// last connect or refresh ("can evict keys: maxmemory-policy volatile-ttl"), or empty
    /// when it cannot or INFO was refused (restarts_undetectable says so then). An eviction
    /// seen (evicted_keys changed) moves started_at() to the moment it was seen.
    virtual std::string_view eviction_risk() const noexcept = 0;
    /// Why the server is not a primary, as the last INFO replication answered said ("not a
    /// primary: INFO replication says role:slave"; kept while INFO is refused), or empty when
    /// it is one or never said. Its votes do not count.
    virtual std::string_view not_primary() const noexcept = 0;
    /// Why started_at() was last moved to a moment after the server started, when that was
    /// not a restart or an eviction: "promoted to primary" (INFO replication says the server
    /// was promoted since it started: started_at() is the promotion, as dated by the
    /// Sentinels or this client's first sight), "clock stepped by +1500 ms" (the node's TIME moved
    /// against this client's steady clock beyond the drift bound: core/clock_watch). Such a
    /// node may have expired locks early, so it is quarantined as after a restart, but
    /// restart_seen_at() stays: its keys were not lost to a restart. Else empty.
    virtual std::string_view quarantine_cause() const noexcept = 0;
    /// Why this link cannot tell when the node's wall clock steps (TIME refused), or empty
    /// when it can. The node's votes still count: docs/safety.md, "Node clocks".
    virtual std::string_view clock_steps_undetectable() const noexcept = 0;
    /// The clock rate the node may drift at against this client without counting as a
    /// step: the largest clock_drift_factor of this client's locks (the one the quarantine
    /// uses). Only grows.
    virtual void allow_clock_drift(double rate) = 0;
    /// `seen` runs on the strand each time the link has read the server's INFO or clock mark
    /// (every connect and refresh), once started_at() took what they said: a restart, an
    /// eviction or a clock step is noticed then, even by a client with nothing to send to the
    /// node (client_impl::notice_restart reads the other nodes' TTL ceilings).
    virtual void on_server_read(std::function<void()> seen) = 0;

    /// Changes whenever the connection that the next command will travel on changes (a
    /// break, a reconnect): what was confirmed on one connection (the TTL ceiling's raise)
    /// says nothing of the server behind the next.
    virtual std::uint64_t connection_generation() const noexcept = 0;
    virtual link_readiness readiness() const noexcept = 0;
    /// Starts connecting now if nothing is connected or on its way and no backoff after a
    /// failed connect forbids it (a command sent would do the same).
    virtual void warm_up() = 0;
    /// `changed` runs on the strand whenever readiness() may have changed: the server's INFO
    /// read on a new connection, a connection or connect attempt dropped.
    virtual void on_readiness_changed(std::function<void()> changed) = 0;

    virtual const node_address& address() const noexcept = 0;
};

} // namespace redlock::detail

#endif
