#include "transport/node_connection.hpp"

#include "core/clock_mark.hpp"
#include "transport/scripts.hpp"
#include "transport/server_info.hpp"
#include "transport/server_text.hpp"

#include "redlock/error.hpp"

#include <boost/asio/post.hpp>

#include <hiredis/hiredis.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>

namespace redlock::detail {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {
constexpr std::uint64_t handshake_auth = 1;
constexpr std::uint64_t handshake_select = 2;
constexpr std::uint64_t handshake_info = 3;
constexpr std::uint64_t handshake_script_load = 4;
constexpr std::uint64_t handshake_clock_mark = 5;
constexpr std::uint64_t handshake_clock_mark_eval = 6;

std::string format(std::initializer_list<std::string_view> args) {
    return wire_bytes(args.begin(), args.size());
}

std::string describe(const error_code& ec) {
    if (ec == asio::error::eof) {
        return "connection closed by the node";
    }
    return ec.message();
}
} // namespace

node_connection::node_connection(asio::any_io_executor strand, node_address address,
                                 const client_config& config, std::unique_ptr<time_source> time,
                                 std::unique_ptr<stream_connector> connector,
                                 subscriber_hooks hooks)
    : strand_(std::move(strand))
    , address_(std::move(address))
    , config_(config)
    , time_(std::move(time))
    , connector_(std::move(connector))
    , display_(address_.redacted() + (hooks.push ? " (subscriber)" : ""))
    , secrets_(configured_secrets(config_, address_.password))
    , subscriber_(std::move(hooks))
    , connect_alarm_(time_->make_alarm())
    , backoff_alarm_(time_->make_alarm())
    , patience_alarm_(time_->make_alarm())
    , drain_alarm_(time_->make_alarm())
    , refresh_alarm_(time_->make_alarm()) {}

node_connection::~node_connection() {
    // The operations are being torn down with the client: drop them without callbacks.
    alive_.reset();
    connector_->abort();
    if (wire_) {
        wire_->current = false;
        wire_->stream->close();
    }
}

void node_connection::log(log_level level, const std::string& message) const {
    if (config_.log) {
        config_.log(level, "node " + display_ + ": " + message);
    }
}

void node_connection::fail_later(const std::shared_ptr<reply_target>& target, std::uint64_t tag,
                                 errc error, std::string message) {
    // Never call back from inside send() or a loop over commands: the caller may be in the
    // middle of a loop over nodes.
    asio::post(strand_, [target, tag, error, message = std::move(message)] {
        target->on_reply(tag, node_reply{make_error_code(error), nullptr, message});
    });
}

void node_connection::send(const command& cmd, const std::shared_ptr<reply_target>& target,
                           std::uint64_t tag) {
    switch (state_) {
    case state::shut_down:
        fail_later(target, tag, errc::cancelled, "client shut down");
        return;
    case state::backing_off:
        fail_later(target, tag, errc::connection_failed, last_error_);
        return;
    case state::idle:
        connect();
        if (state_ != state::connecting) {
            fail_later(target, tag, errc::connection_failed, last_error_);
            return;
        }
        break;
    case state::connecting:
    case state::connected:
        break;
    }
    const std::size_t waiting = held_back_.size() + (wire_ ? wire_->replies.waiting() : 0);
    if (waiting >= config_.max_in_flight_per_node) {
        fail_later(target, tag, errc::node_backlogged,
                   std::to_string(waiting) + " commands awaiting replies");
        return;
    }
    if (state_ == state::connecting || handshake_outstanding_ > 0) {
        held_back_.push_back({wire_bytes(cmd), target, tag});
        return;
    }
    issue(wire_bytes(cmd), target, tag);
}

void node_connection::issue(std::string bytes, const std::shared_ptr<reply_target>& target,
                            std::uint64_t tag) {
    if (target) {
        ++commands_awaited_;
    }
    // The handshake's steps (no target) go together, in one write behind the connect: split,
    // the second part could wait for the first one's acknowledgement at a relay that
    // coalesces small writes (Nagle), 40 ms and more.
    const bool quiet = target && batch_depth_ == 0 && wire_->replies.idle() &&
                       wire_->queued.empty() && !wire_->write_in_flight;
    wire_->replies.expect({target, tag, time_->now()});
    if (quiet) {
        // An operation's command with nothing awaited here: no other command is likely to
        // join it soon, so it leaves now rather than one scheduler step later (a tenth of
        // an uncontended acquire or release). A connection with replies awaited is busy,
        // and batches.
        error_code ec;
        const auto written = wire_->stream->write_now(asio::buffer(bytes), ec);
        if (!ec && written == bytes.size()) {
            watch_patience();
            return;
        }
        // The rest goes the usual way. A failure is reported by the flush, never from inside
        // send(), and as it was: the kernel tells a socket's error only once.
        bytes.erase(0, written);
        wire_->write_error = ec;
    }
    if (wire_->queued.empty()) {
        wire_->queued = std::move(bytes); // most often alone: taken, not copied
    } else {
        wire_->queued += bytes;
    }
    if (batch_depth_ == 0) {
        schedule_flush(); // else the outermost end_batch() writes it
    }
    watch_patience();
}

void node_connection::end_batch() {
    if (batch_depth_ == 0 || --batch_depth_ > 0) {
        return;
    }
    if (!wire_ || wire_->queued.empty()) {
        return;
    }
    if (!wire_->write_in_flight && !wire_->write_error) {
        // What the batch queued (behind anything queued before it) leaves now, in one write,
        // as a command on a quiet connection does.
        error_code ec;
        const auto written = wire_->stream->write_now(asio::buffer(wire_->queued), ec);
        wire_->queued.erase(0, written);
        wire_->write_error = ec;
        if (wire_->queued.empty() && !ec) {
            return;
        }
    }
    schedule_flush(); // the rest, or the error, the usual way
}

void node_connection::queue_step(std::string bytes, std::uint64_t step) {
    issue(std::move(bytes), nullptr, step);
}

void node_connection::release_held_back() {
    for (auto& h : std::exchange(held_back_, {})) {
        issue(std::move(h.bytes), h.target, h.tag);
    }
}

void node_connection::schedule_flush() {
    // Everything queued during one handler goes out in one write, right after it.
    if (wire_->flush_posted || wire_->write_in_flight) {
        return;
    }
    wire_->flush_posted = true;
    asio::post(strand_, [this, w = wire_] {
        w->flush_posted = false;
        if (w->current) {
            flush(w);
        }
    });
}

void node_connection::flush(const std::shared_ptr<wire>& w) {
    if (w->write_in_flight || w->queued.empty()) {
        return;
    }
    if (w->write_error) {
        write_failed(w, std::exchange(w->write_error, {}));
        return;
    }
    w->writing = std::exchange(w->queued, {});
    w->write_in_flight = true;
    w->stream->async_write(asio::buffer(w->writing), [this, w](const error_code& ec, std::size_t) {
        w->write_in_flight = false;
        if (!w->current) {
            return;
        }
        if (ec) {
            write_failed(w, ec);
            return;
        }
        w->writing.clear();
        flush(w); // what was queued meanwhile
    });
}

void node_connection::write_failed(const std::shared_ptr<wire>& w, const error_code& ec) {
    if (ec == asio::error::connection_reset || ec == asio::error::broken_pipe) {
        // The node closed the connection, so the read in flight ends too, and reports what
        // the node said before closing (a TLS alert such as "certificate required", an -ERR):
        // a better reason than the reset. Nothing more is written meanwhile.
        w->write_in_flight = true;
        return;
    }
    drop_connection("write failed: " + describe(ec));
}

void node_connection::read(const std::shared_ptr<wire>& w) {
    w->stream->async_read_some(
        asio::buffer(w->read_buffer), [this, w](const error_code& ec, std::size_t length) {
            if (!w->current) {
                return;
            }
            if (ec) {
                drop_connection(w->refusal.empty() ? describe(ec)
                                                   : w->refusal + " (then " + describe(ec) + ")");
                return;
            }
            const auto broken =
                w->replies.consume(std::string_view(w->read_buffer.data(), length),
                                   [this, &w](sent_command&& sent, const node_reply& reply) {
                                       if (reply.reply && reply.reply->type != REDIS_REPLY_ERROR) {
                                           w->answered = true;
                                           w->refusal.clear();
                                       } else if (!w->answered && reply.reply) {
                                           w->refusal = std::string(reply.message);
                                       }
                                       return on_reply(std::move(sent), reply);
                                   });
            if (!w->current) {
                return; // a reply dropped the connection (a failed AUTH) or drained it
            }
            if (!broken.empty()) {
                drop_connection(broken);
                return;
            }
            read(w);
        });
}

void node_connection::connect() {
    announced_primary_.reset();
    ++connect_attempts_;
    state_ = state::connecting;
    connecting_ = true;
    const auto attempt = connect_attempts_;
    connect_alarm_->arm(time_->now() + config_.connect_timeout, [this, attempt] {
        if (!attempt_is_current(attempt)) {
            return;
        }
        const auto hint = connector_->hint();
        drop_connection(std::string(connector_->step()) + " timed out after " +
                        std::to_string(config_.connect_timeout.count()) + " ms" +
                        (hint.empty() ? "" : " (" + std::string(hint) + ")"));
    });
    connector_->open([this, attempt](std::unique_ptr<byte_stream> stream, std::string why) {
        if (!attempt_is_current(attempt)) {
            return;
        }
        if (!stream) {
            drop_connection(why);
            return;
        }
        connected(std::move(stream));
    });
}

bool node_connection::attempt_is_current(std::uint64_t attempt) const noexcept {
    return attempt == connect_attempts_ && connecting_;
}

void node_connection::connected(std::unique_ptr<byte_stream> stream) {
    connect_alarm_->cancel();
    connecting_ = false;
    if (state_ != state::shut_down) { // else it connected to drain what was held back
        state_ = state::connected;
    }
    connected_at_ = time_->now();
    server_read_here_ = false;
    identified_here_ = false;
    wire_ = std::make_shared<wire>(std::move(stream), config_.max_reply_size, secrets_);
    if (subscriber_.push) {
        wire_->replies.take_pushes(subscriber_.push);
    }
    log(log_level::debug, "connected");
    queue_handshake();
    if (handshake_outstanding_ == 0) {
        release_held_back();
    }
    read(wire_);
    // A switch announced while this connection was being made: it may have reached the
    // primary the Sentinels named before it.
    if (auto announced = std::exchange(announced_primary_, std::nullopt)) {
        primary_moved(announced->host, announced->port, announced->sentinel);
    }
}

void node_connection::queue_handshake() {
    if (!address_.password.empty()) {
        queue_step(address_.user.empty() ? format({"AUTH", address_.password})
                                         : format({"AUTH", address_.user, address_.password}),
                   handshake_auth);
        ++handshake_outstanding_;
    }
    if (address_.db != 0) {
        queue_step(format({"SELECT", std::to_string(address_.db)}), handshake_select);
        ++handshake_outstanding_;
    }
    if (subscriber_.push) {
        return;
    }
    // Every script in the node's cache before the first lock command and the first clock
    // mark, so that NOSCRIPT (and the resend it calls for) only follows a SCRIPT FLUSH.
    // Nothing waits for these: a refusal (ACL without +script) only leaves the EVAL
    // fallback to do the work.
    // Formatted once for the process: kilobytes of text that never change.
    static const auto script_loads = [] {
        std::vector<std::string> loads;
        for (const auto* s : preloaded_scripts) {
            loads.push_back(format({"SCRIPT", "LOAD", s->text}));
        }
        return loads;
    }();
    for (const auto& load : script_loads) {
        queue_step(load, handshake_script_load);
    }
    // For the restart quarantine, to recognise two addresses of one server by run_id (sent
    // with the quarantine off too, for that), and for the eviction veto. Its reply precedes
    // every vote on this connection, but nothing waits for it: it gates no command, only how
    // votes are counted. Read again on every refresh (schedule_refresh).
    queue_node_reads();
}

void node_connection::watch_patience() {
    if (patience_watched_ || !wire_ || wire_->replies.idle()) {
        return;
    }
    patience_watched_ = true;
    patience_alarm_->arm(wire_->replies.oldest().sent_at + patience_, [this, w = wire_] {
        if (!w->current) {
            return; // patience_watched_ was reset by whoever dropped it
        }
        patience_watched_ = false;
        if (w->replies.idle()) {
            return;
        }
        const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
            time_->now() - w->replies.oldest().sent_at);
        if (waited >= patience_) {
            drop_connection("no reply for " + std::to_string(waited.count()) + " ms (" +
                            std::to_string(w->replies.waiting()) +
                            " commands waiting): connection reset");
            return;
        }
        watch_patience();
    });
}

void node_connection::expect_replies_within(std::chrono::milliseconds patience) {
    patience_ = patience;
    if (patience_watched_) {
        patience_alarm_->cancel();
        patience_watched_ = false;
        watch_patience();
    }
}

bool node_connection::on_reply(sent_command&& sent, const node_reply& reply) {
    if (!sent.target) {
        if (!on_handshake_reply(reply.reply, sent)) {
            return false;
        }
    } else {
        --commands_awaited_;
        const bool readonly =
            reply.reply && reply.reply->type == REDIS_REPLY_ERROR &&
            std::string_view(reply.reply->str, reply.reply->len).starts_with("READONLY");
        sent.target->on_reply(sent.tag, reply);
        let_go(std::move(sent.target));
        if (readonly && wire_ && address_.kind == node_address::transport::sentinel) {
            // The primary the Sentinels named was demoted since: ask them again.
            drop_connection("the server is a replica now (READONLY); asking the Sentinels again");
            return false;
        }
        if (readonly && refresh_waiting_ && not_primary_.empty() && info_refused_.empty()) {
            // Demoted since the last INFO: read it now rather than at the next refresh, so
            // that a promotion in place that follows is seen at once (docs/safety.md, "A role
            // taken anew between two refreshes"). Once INFO has said role:slave (or was
            // refused), another READONLY tells nothing new: the refreshes go on at their pace.
            refresh_waiting_ = false;
            refresh_alarm_->cancel();
            queue_node_reads();
        }
    }
    if (state_ == state::shut_down && commands_awaited_ == 0 && held_back_.empty() && wire_) {
        drop_connection(last_error_); // drained
        return false;
    }
    return true;
}

void node_connection::let_go(std::shared_ptr<reply_target> target) {
    // The last owner of an operation may be the last owner of the client, and with it of
    // this connection: never destroyed while a handler of this connection runs.
    if (target.use_count() == 1) {
        asio::post(strand_, [target = std::move(target)] {});
    }
}

bool node_connection::on_handshake_reply(const redisReply* reply, const sent_command& sent) {
    const auto step = sent.tag;
    if (step == handshake_info) {
        on_server_info(reply, sent.sent_at);
        if (server_read_) {
            server_read_();
        }
        if (!std::exchange(server_read_here_, true) && readiness_changed_) {
            readiness_changed_();
        }
        if (address_.kind == node_address::transport::sentinel && !not_primary_.empty()) {
            // The Sentinels named a server that is (now) a replica: a failover under way,
            // or a stale answer. Ask them again.
            drop_connection(not_primary_ + "; asking the Sentinels again");
            return false;
        }
        return true;
    }
    if (step == handshake_clock_mark || step == handshake_clock_mark_eval) {
        on_clock_mark(reply, sent.sent_at, step == handshake_clock_mark_eval);
        if (server_read_) {
            server_read_();
        }
        return true;
    }
    if (step == handshake_script_load) {
        return true;
    }
    if (reply->type != REDIS_REPLY_ERROR) {
        if (--handshake_outstanding_ == 0) {
            release_held_back();
        }
        return true;
    }
    const std::string what = step == handshake_auth ? "AUTH" : "SELECT";
    const auto why = what + " failed: " + printable_server_text({reply->str, reply->len}, secrets_);
    log(log_level::error, why);
    // Commands queued behind the handshake would run as the wrong user or in the wrong
    // database: drop the connection.
    drop_connection(why);
    return false;
}

void node_connection::on_server_info(const redisReply* reply, clock::time_point sent_at) {
    schedule_refresh();
    if (reply->type != REDIS_REPLY_STRING) {
        const std::string why = reply->type == REDIS_REPLY_ERROR
                                    ? printable_server_text({reply->str, reply->len}, secrets_)
                                    : "no text";
        const bool was_refused = !info_refused_.empty();
        info_refused_ = "INFO refused: restarts and evictions cannot be detected (" + why + ")";
        eviction_risk_.clear();
        // evicted_keys_ stays what it was last seen: a change across the refusal is still a
        // change when INFO is answered again.
        if (was_refused) {
            return; // said at the first refusal
        }
        if (config_.quarantine.enabled || !config_.eviction.accept_evicting_nodes) {
            log(log_level::error,
                info_refused_ + ": this node's votes do not count (grant the user +info)");
        } else {
            log(log_level::warning, "INFO refused (" + why +
                                        "): another address of this same server cannot be "
                                        "recognised");
        }
        return;
    }
    info_refused_.clear();
    const auto info = parse_server_info({reply->str, reply->len});
    const auto now = time_->now();
    // Whole seconds, rounded down: the restart is placed no earlier than it happened, and
    // no later than it was first placed for this server.
    if (info.run_id != run_id_) {
        uptime_start_.reset();
    }
    auto started = uptime_start(info, now, uptime_start_);
    uptime_start_ = started;
    const bool other_server = !run_id_.empty() && info.run_id != run_id_;
    // The same process with another replication id took its role anew: promoted, or demoted
    // and resynced from another primary (which flushed what it held) and promoted again.
    const bool role_taken_anew = !other_server && !replication_id_.empty() &&
                                 !info.replication_id.empty() &&
                                 info.replication_id != replication_id_;
    if (other_server || role_taken_anew) {
        promoted_at_.reset();
    }
    if (info.promoted_since_start && !promoted_at_) {
        // A promoted server's uptime says nothing of when it became a primary, and it may
        // lack writes its old primary acknowledged: quarantined from when it took its role,
        // as the Sentinels tell it (the most recent of those that named it), or, if nobody
        // tells, from now, the first time this client sees it.
        promoted_at_ = std::min(connector_->primary_since().value_or(now), now);
    }
    if (promoted_at_ && *promoted_at_ > started) {
        started = *promoted_at_;
    }
    replication_id_ = info.replication_id;
    if (other_server || role_taken_anew) {
        // Another server now (a restart, a failover, an address moved): its uptime says
        // nothing of when it started answering here, so the quarantine runs from now, and
        // later refreshes, which see the same run_id and a long uptime, must keep it there.
        started = now;
        forgot_at_ = now;
        // Not now: the commands sent since the last break (held back for this connection,
        // sent on it before this reply, or on an earlier connection that broke before its
        // INFO came, which holds the placement at the break before it) may have reached the
        // new server too (restart_seen_at). Seed 20261206082025: a reconnect whose INFO reply was
        // lost carried a grant to the new server; placed at that connection's break, the grant
        // looked older than the restart, and a renewal wrote it back after a force release.
        restart_seen_at_ = dropped_at_.value_or(now);
        if (role_taken_anew && identity_confirmed_at_) {
            // The same process, on connections that need not have broken: whatever was sent
            // after the last INFO that showed the old replication id may have reached the
            // new data set.
            restart_seen_at_ = *identity_confirmed_at_;
        }
        quarantine_cause_.clear();
        // Another server's clock: the TIME that follows this INFO starts afresh.
        clock_watch_.forget();
        clock_mark_watch_.forget();
        log(log_level::warning,
            other_server ? "restarted (run_id changed): quarantined"
                         : "took its role anew (master_replid changed: promoted, or resynced "
                           "from another primary): quarantined as after a restart");
    } else if (evicted_keys_ && info.evicted_keys && *info.evicted_keys != *evicted_keys_) {
        // A rise is keys evicted, maybe ours; a fall is CONFIG RESETSTAT, which hides how
        // many were evicted before it. Either way the node may have forgotten locks.
        forgot_at_ = now;
        quarantine_cause_.clear();
        log(log_level::warning, "evicted_keys changed from " + std::to_string(*evicted_keys_) +
                                    " to " + std::to_string(*info.evicted_keys) +
                                    ": keys may be forgotten, quarantined as after a restart");
    }
    if (forgot_at_ && *forgot_at_ > started) {
        started = *forgot_at_;
    }
    // Only where the promotion is what holds the placement (not a restart seen at the same
    // moment, whose cause stays "node restarted").
    if (promoted_at_ && started == *promoted_at_ && !other_server && !role_taken_anew &&
        (!forgot_at_ || *forgot_at_ < *promoted_at_)) {
        quarantine_cause_ = "promoted to primary";
    }
    started_at_ = started;
    run_id_ = info.run_id;
    const bool first_on_this_connection = !std::exchange(identified_here_, true);
    restart_placement_held_ = false;
    evicted_keys_ = info.evicted_keys;
    auto risk = detail::eviction_risk(info, secrets_);
    if (!risk.empty() && risk != eviction_risk_) {
        log(config_.eviction.accept_evicting_nodes ? log_level::warning : log_level::error,
            risk + (config_.eviction.accept_evicting_nodes
                        ? " (accepted: accept_evicting_nodes is on)"
                        : ": this node's votes do not count"));
    }
    eviction_risk_ = std::move(risk);
    // The first INFO of a connection follows commands held back for it, from rounds begun
    // after the last break, which are written behind it: what that INFO confirms holds no
    // later than the break.
    identity_confirmed_at_ =
        first_on_this_connection && dropped_at_ ? std::min(sent_at, *dropped_at_) : sent_at;
    auto replica = not_primary_reason(info, secrets_);
    if (!replica.empty() && replica != not_primary_) {
        log(log_level::error, replica + ": this node's votes do not count");
    }
    // A Sentinel group's primary cut off from its replica and the Sentinels, but not from
    // some clients, keeps taking their writes while a replica is promoted (split brain),
    // unless it requires replicas: said once per server (docs/safety.md).
    if (address_.kind == node_address::transport::sentinel && info.role == "master" &&
        !info.requires_replicas && std::exchange(split_brain_warned_for_, run_id_) != run_id_) {
        log(log_level::warning, "min-replicas-to-write is off: cut off from its replica and "
                                "the Sentinels, it would go on taking this client's writes "
                                "while a replica is promoted (set min-replicas-to-write 1, "
                                "min-replicas-max-lag 10)");
    }
    not_primary_ = std::move(replica);
}

void node_connection::queue_node_reads() {
    queue_step(wire_bytes(std::data(info_sections), std::size(info_sections)), handshake_info);
    // Right behind INFO in the same write, so it costs no round trip of its own: the clock
    // mark's TIME is a sample of the node's wall clock against the steady clock (sent_at to
    // the reply), for clock_watch_, and the step back it may report one no sample of this
    // client saw. After INFO, so that a restart INFO reveals is known before the new
    // server's clock is weighed against the old one's.
    queue_step(clock_mark_command(false), handshake_clock_mark);
}

std::string node_connection::clock_mark_command(bool as_eval) const {
    const auto args = make_clock_mark_arguments(config_.fleet_max_ttl, clock_drift_);
    const auto key = config_.quarantine.node_key_prefix + "clock";
    return as_eval
               ? format({"EVAL", clock_mark_script.text, "1", key, args.tolerance_us, args.keep_ms})
               : format({"EVALSHA", clock_mark_script.sha1, "1", key, args.tolerance_us,
                         args.keep_ms});
}

void node_connection::on_clock_mark(const redisReply* reply, clock::time_point sent_at,
                                    bool as_eval) {
    const auto received = time_->now();
    if (!as_eval && reply->type == REDIS_REPLY_ERROR &&
        std::string_view(reply->str, reply->len).starts_with("NOSCRIPT")) {
        // The script cache was flushed (or SCRIPT LOAD refused): once more as EVAL, which
        // loads it again, unless the connection is on its way out. A NOSCRIPT to that is an
        // answer, never a reason to resend.
        if (wire_ && state_ == state::connected) {
            queue_step(clock_mark_command(true), handshake_clock_mark_eval);
        }
        return;
    }
    std::optional<clock_mark_reply> mark;
    if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 4) {
        const auto field = [&](std::size_t i) {
            const auto* e = reply->element[i];
            return e->type == REDIS_REPLY_STRING ? std::string_view(e->str, e->len)
                                                 : std::string_view();
        };
        mark = parse_clock_mark(field(0), field(1), field(2), field(3));
    }
    if (!mark) {
        // A read-only replica refuses the script's write: its INFO says so, and it gets no
        // vote for that (not_primary_), so there is nothing for the user to grant. Not
        // recorded either: a refusal for want of permissions once it is a primary again
        // must still be said.
        if (reply->type == REDIS_REPLY_ERROR &&
            std::string_view(reply->str, reply->len).starts_with("READONLY")) {
            return;
        }
        const std::string why = reply->type == REDIS_REPLY_ERROR
                                    ? printable_server_text({reply->str, reply->len}, secrets_)
                                    : "not four numbers";
        if (time_refused_.empty()) {
            log(log_level::warning,
                "clock mark refused (" + why +
                    "): steps of this node's clock cannot be detected; its votes still count "
                    "(grant the user +evalsha +eval +time and the keys ~" +
                    config_.quarantine.node_key_prefix +
                    "* of quarantine_options::node_key_prefix)");
        }
        time_refused_ = "clock mark refused: clock steps cannot be detected (" + why + ")";
        return;
    }
    time_refused_.clear();
    // Redis expires keys by its wall clock: a step forward dropped locks early, a step back
    // says the clock was ahead before. Either way the node's grants may be gone before
    // their time, as after a restart.
    if (const auto step =
            clock_watch_.observe({sent_at, received, mark->node_time}, clock_drift_)) {
        forgot_at_ = received;
        if (!started_at_ || *started_at_ < received) {
            started_at_ = received;
        }
        quarantine_cause_ = clock_step_text(*step);
        log(log_level::error, quarantine_cause_ + ": quarantined as after a restart");
    }
    // A step back another client's run saw (or one before this client connected): the
    // clock was ahead until then, so grants of before it may be gone early, as above.
    const auto recorded = clock_mark_watch_.observe(*mark, received, clock_drift_);
    if (!recorded) {
        return;
    }
    if (!forgot_at_ || *forgot_at_ < recorded->at) {
        forgot_at_ = recorded->at;
    }
    if (!started_at_ || *started_at_ < recorded->at) {
        started_at_ = recorded->at;
        quarantine_cause_ = recorded_step_text(recorded->by);
        // A record older than the quarantine (about a fleet maximum) costs nothing: said
        // at debug level only, since every client that connects reads it again.
        const auto ago = std::chrono::duration<double>(received - recorded->at);
        const auto lasts =
            std::chrono::duration<double>(config_.fleet_max_ttl) * (1 + clock_drift_);
        log(ago < lasts ? log_level::error : log_level::debug,
            quarantine_cause_ + " " +
                std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(ago).count()) +
                " ms ago: quarantined as after a restart from then");
    }
}

void node_connection::schedule_refresh() {
    const auto interval = config_.eviction.refresh_interval;
    if (interval <= std::chrono::milliseconds::zero() || !wire_ || state_ != state::connected) {
        return;
    }
    // One INFO at a time: the next is scheduled by this one's reply, so a slow node never
    // piles them up, and a broken connection (wire no longer current) asks nothing.
    refresh_waiting_ = true;
    refresh_alarm_->arm(time_->now() + interval, [this, w = wire_] {
        refresh_waiting_ = false;
        if (w->current && state_ == state::connected) {
            queue_node_reads();
        }
    });
}

void node_connection::primary_moved(const std::string& host, std::uint16_t port,
                                    const std::string& sentinel) {
    if (state_ == state::connecting) {
        announced_primary_ = announcement{host, port, sentinel}; // weighed once connected
        return;
    }
    const auto reached = connector_->reached();
    if (state_ != state::connected || !reached ||
        (reached->first == host && reached->second == port)) {
        return; // not connected (the next connect asks the Sentinels), or already there
    }
    node_address to;
    to.host = host;
    to.port = port;
    const auto why = "the Sentinel at " + sentinel + " announced that \"" +
                     printable_server_text(address_.master_name, secrets_) + "\" moved to " +
                     to.display() + " (+switch-master): asking the Sentinels again";
    log(log_level::warning, why);
    drop_connection(why);
}

void node_connection::drop_connection(const std::string& why) {
    // A connection that was made but never read the server's run_id may have carried
    // commands to a new server: the restart is placed no later than the break before it
    // until a run_id is read again. A connect that failed carried nothing.
    if (wire_ && !identified_here_ && !subscriber_.push) {
        restart_placement_held_ = true;
    } else if (!restart_placement_held_) {
        dropped_at_ = time_->now();
    }
    ++generation_;
    const bool was_connected = state_ == state::connected;
    const errc error = state_ == state::shut_down ? errc::cancelled : errc::connection_failed;
    connector_->abort();
    connecting_ = false;
    connect_alarm_->cancel();
    patience_alarm_->cancel();
    drain_alarm_->cancel();
    refresh_alarm_->cancel();
    refresh_waiting_ = false;
    patience_watched_ = false;
    handshake_outstanding_ = 0;
    commands_awaited_ = 0;
    if (wire_) {
        auto w = std::exchange(wire_, nullptr);
        w->current = false;
        w->stream->close();
        for (auto& sent : w->replies.take_waiting()) {
            if (sent.target) {
                fail_later(sent.target, sent.tag, error, why);
            }
        }
        if (subscriber_.dropped) {
            asio::post(strand_,
                       [dropped = subscriber_.dropped, alive = std::weak_ptr<const bool>(alive_)] {
                           if (!alive.expired()) {
                               dropped();
                           }
                       });
        }
    }
    for (auto& h : std::exchange(held_back_, {})) {
        fail_later(h.target, h.tag, error, why);
    }
    if (state_ == state::shut_down) {
        return;
    }
    last_error_ = why;
    // A connection that broke soon after it was made (a failed AUTH, a node answering
    // garbage or nothing) counts as another failure, so the delays keep growing; one that
    // served for a while starts the count afresh.
    if (was_connected && time_->now() - connected_at_ >= config_.reconnect_delay_max) {
        consecutive_failures_ = 0;
    }
    ++consecutive_failures_;
    auto delay = config_.reconnect_delay_initial;
    for (unsigned i = 1; i < consecutive_failures_ && delay < config_.reconnect_delay_max; ++i) {
        delay *= 2;
    }
    delay = std::min(delay, config_.reconnect_delay_max);
    log(was_connected ? log_level::warning : log_level::debug,
        last_error_ + "; next connect attempt in " + std::to_string(delay.count()) + " ms");
    state_ = state::backing_off;
    if (readiness_changed_) {
        // Posted: a drop can happen inside send() (a connect that fails at once), which
        // never calls back.
        asio::post(strand_,
                   [changed = readiness_changed_, alive = std::weak_ptr<const bool>(alive_)] {
                       if (!alive.expired()) {
                           changed();
                       }
                   });
    }
    backoff_alarm_->arm(time_->now() + delay, [this] {
        if (state_ == state::backing_off) {
            state_ = state::idle;
        }
    });
}

link_readiness node_connection::readiness() const noexcept {
    switch (state_) {
    case state::connecting:
        return link_readiness::connecting;
    case state::connected:
        return handshake_outstanding_ == 0 && (server_read_here_ || subscriber_.push)
                   ? link_readiness::ready
                   : link_readiness::connecting;
    case state::idle:
    case state::backing_off:
    case state::shut_down:
        return link_readiness::unavailable;
    }
    return link_readiness::unavailable;
}

void node_connection::warm_up() {
    if (state_ == state::idle) {
        connect();
    }
}

void node_connection::shutdown(std::chrono::milliseconds drain) {
    if (state_ == state::shut_down) {
        return;
    }
    // Commands sent, or held back for the connection or its handshake: the cleanups and
    // releases of a client being torn down.
    const bool unanswered = commands_awaited_ > 0 || !held_back_.empty();
    const bool reachable = state_ == state::connected || state_ == state::connecting;
    state_ = state::shut_down;
    backoff_alarm_->cancel();
    refresh_alarm_->cancel();
    refresh_waiting_ = false;
    last_error_ = "client shut down";
    if (unanswered && reachable && drain.count() > 0) {
        // They still go out (once connected and logged in, for those held back) and are
        // answered, bounded by `drain`; the connection closes once they are.
        patience_alarm_->cancel();
        patience_watched_ = false;
        drain_alarm_->arm(time_->now() + drain, [this] {
            drop_connection("client shut down; " +
                            std::to_string(commands_awaited_ + held_back_.size()) +
                            " commands unanswered");
        });
        return;
    }
    drop_connection(last_error_);
}

} // namespace redlock::detail
