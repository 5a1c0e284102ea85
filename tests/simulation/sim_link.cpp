#include "sim_link.hpp"

#include "history.hpp"

#include "core/clock_mark.hpp"
#include "core/clock_watch.hpp"
#include "transport/scripts.hpp"
#include "transport/server_info.hpp"

#include "redlock/error.hpp"

#include <boost/asio/post.hpp>

#include <hiredis/hiredis.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <memory>

namespace redlock::sim {

namespace {

struct pending {
    std::uint64_t tag = 0;
    std::shared_ptr<detail::reply_target> target;
    std::vector<std::string> args;
    std::uint64_t connection = 0;
    real_ns sent_at = 0;
    bool arrived = false;
    bool dropped = false;
    bool done = false;
};
using pending_ptr = std::shared_ptr<pending>;

/// The reply as the production reader would see it: parsed from RESP bytes by hiredis. One
/// reader for the process (the simulation is single-threaded), as node_connection keeps one
/// per connection: a reader created and freed per reply cost a few percent of a schedule. A
/// reader left with an error or with bytes of an unfinished reply is replaced, so no reply
/// is ever read with another's bytes.
struct parsed {
    redisReply* reply = nullptr;
    explicit parsed(const std::string& resp) {
        static std::unique_ptr<redisReader, void (*)(redisReader*)> reader(redisReaderCreate(),
                                                                           &redisReaderFree);
        void* out = nullptr;
        if (redisReaderFeed(reader.get(), resp.data(), resp.size()) == REDIS_OK &&
            redisReaderGetReply(reader.get(), &out) == REDIS_OK) {
            reply = static_cast<redisReply*>(out);
        }
        if (!out || reader->err || reader->ridx != -1 || reader->pos != reader->len) {
            reader.reset(redisReaderCreate());
        }
    }
    ~parsed() {
        if (reply) {
            freeReplyObject(reply);
        }
    }
    parsed(const parsed&) = delete;
    parsed& operator=(const parsed&) = delete;
};

} // namespace

class link_core : public std::enable_shared_from_this<link_core> {
public:
    link_core(world& w, history& h, sim_node& node, int client, drift_clock clock,
              boost::asio::any_io_executor strand, const client_config& config, net_faults net)
        : w_(w)
        , h_(h)
        , node_(node)
        , client_(client)
        , clock_(clock)
        , strand_(std::move(strand))
        , delay_initial_(std::chrono::nanoseconds(config.reconnect_delay_initial).count())
        , delay_max_(std::chrono::nanoseconds(config.reconnect_delay_max).count())
        , connect_timeout_(std::chrono::nanoseconds(config.connect_timeout).count())
        , net_(net)
        , backoff_(delay_initial_)
        , who_("c" + std::to_string(client) + "->n" + std::to_string(node.id()))
        , refresh_(std::chrono::nanoseconds(config.eviction.refresh_interval).count())
        , fleet_max_ttl_(config.fleet_max_ttl)
        , clock_key_(config.quarantine.node_key_prefix + "clock") {}

    void attach() {
        watcher_ = next_watcher_id++;
        node_.on_crash[watcher_] = [weak = weak_from_this()] {
            if (auto self = weak.lock()) {
                self->cut("node crashed");
            }
        };
    }
    void detach() {
        node_.on_crash.erase(watcher_);
        // Its client is going: a readiness change posted meanwhile must not reach it.
        readiness_changed = nullptr;
        server_read = nullptr;
        state_ = state::shut;
        inflight_.clear();
        held_.clear();
    }

    void send(const detail::command& cmd, const std::shared_ptr<detail::reply_target>& target,
              std::uint64_t tag) {
        auto p = std::make_shared<pending>();
        p->tag = tag;
        p->target = target;
        p->args.assign(cmd.args.begin(), cmd.args.end());
        p->sent_at = w_.now();
        last_send_ = w_.now();
        if (state_ == state::connected && !refreshing_) {
            schedule_refresh();
        }
        h_.on_send(client_, node_.id(), p->args);
        if (state_ == state::backing_off && w_.now() >= retry_at_) {
            state_ = state::idle;
        }
        switch (state_) {
        case state::shut:
            fail_later(p, errc::cancelled, "client shut down");
            return;
        case state::backing_off:
            fail_later(p, errc::connection_failed, "reconnecting later");
            return;
        case state::idle:
            held_.push_back(p);
            connect();
            return;
        case state::connecting:
            held_.push_back(p);
            return;
        case state::connected:
            transmit(p);
            return;
        }
    }

    /// As node_connection does: new commands are refused, what is on the connection is
    /// answered for up to `drain`, then the rest fails.
    void shutdown(real_ns drain) {
        if (state_ == state::shut) {
            return;
        }
        const bool draining = state_ == state::connected && !inflight_.empty() && drain > 0;
        state_ = state::shut;
        if (!draining) {
            ++connection_;
            fail_all(errc::cancelled, "client shut down", false);
            return;
        }
        SIM_TRACE(w_, who_, "draining " + std::to_string(inflight_.size()) + " commands");
        w_.at(w_.now() + drain, client_, [weak = weak_from_this(), connection = connection_] {
            auto self = weak.lock();
            if (self && self->connection_ == connection && !self->inflight_.empty()) {
                for (const auto& p : self->inflight_) {
                    self->note_cut_release(*p);
                }
                ++self->connection_;
                self->fail_all(errc::cancelled, "client shut down; drain over", false);
            }
        });
    }

    std::optional<detail::clock::time_point> started_at() const { return started_at_; }
    /// node_link::on_server_read.
    std::function<void()> server_read;
    /// node_link::on_readiness_changed.
    std::function<void()> readiness_changed;

    detail::link_readiness readiness() const {
        switch (state_) {
        case state::connected:
            return detail::link_readiness::ready;
        case state::connecting:
            return detail::link_readiness::connecting;
        case state::idle:
        case state::backing_off:
        case state::shut:
            return detail::link_readiness::unavailable;
        }
        return detail::link_readiness::unavailable;
    }

    /// As send() would, without a command.
    void warm_up() {
        if (state_ == state::backing_off && w_.now() >= retry_at_) {
            state_ = state::idle;
        }
        if (state_ == state::idle) {
            connect();
        }
    }
    std::optional<detail::clock::time_point> restart_seen_at() const { return restart_seen_at_; }
    std::string_view run_id() const { return run_id_; }
    std::uint64_t connection() const { return connection_; }

    void cut(const char* why) {
        if (state_ != state::connected && state_ != state::connecting) {
            return;
        }
        SIM_TRACE(w_, who_, std::string("connection broken: ") + why);
        ++connection_;
        fail_all(errc::connection_failed, why, true);
        back_off();
    }

    void expect_replies_within(real_ns patience) { patience_ = patience; }

    void partition(real_ns until, bool break_now) {
        partitioned_until_ = std::max(partitioned_until_, until);
        SIM_TRACE(w_, who_,
                  "partitioned until " + fmt_time(until) + (break_now ? ", cut" : ", stalled"));
        if (break_now) {
            cut("partition");
        }
    }

private:
    enum class state { idle, connecting, connected, backing_off, shut };

    real_ns latency() {
        if (w_.chance(net_.tail_rate)) {
            return w_.uniform(net_.latency_min, net_.tail_max);
        }
        const double u = w_.uniform_real(1e-9, 1.0);
        return net_.latency_min +
               static_cast<real_ns>(-std::log(u) * static_cast<double>(net_.latency_mean));
    }
    /// When a message sent now gets across, partitions included.
    real_ns crossing() {
        real_ns t = w_.now() + latency();
        if (partitioned_until_ > w_.now()) {
            t = std::max(t, partitioned_until_ + latency());
        }
        return t;
    }

    /// For (l): a release given up on when the drain ended.
    void note_cut_release(const pending& p) {
        const auto& a = p.args;
        const auto& s = detail::release_script;
        if (a.size() >= 5 && (a[0] == "EVAL" || a[0] == "EVALSHA") &&
            (a[1] == s.sha1 || a[1] == s.text)) {
            // KEYS, then the token.
            const auto keys = std::strtoul(a[2].c_str(), nullptr, 10);
            if (keys < a.size() - 3) {
                h_.release_cut_at_close(client_, a[3 + keys], p.sent_at);
            }
        }
    }

    void fail_later(const pending_ptr& p, errc e, std::string message) {
        p->done = true;
        boost::asio::post(strand_, [p, e, message = std::move(message)] {
            p->target->on_reply(p->tag, detail::node_reply{make_error_code(e), nullptr, message});
        });
    }

    /// Every command on the connection or waiting for it fails, in send order, as one event
    /// of the client (held back while it is paused).
    void fail_all(errc e, std::string message, bool as_event) {
        std::vector<pending_ptr> doomed(inflight_.begin(), inflight_.end());
        doomed.insert(doomed.end(), held_.begin(), held_.end());
        inflight_.clear();
        held_.clear();
        for (auto& p : doomed) {
            p->done = true;
            if (!p->arrived) {
                // Bytes already on the wire may or may not reach the node.
                p->dropped = w_.chance(0.5);
            }
        }
        if (doomed.empty()) {
            return;
        }
        auto deliver = [strand = strand_, doomed = std::move(doomed), e, message] {
            boost::asio::post(strand, [doomed, e, message] {
                for (auto& p : doomed) {
                    p->target->on_reply(p->tag,
                                        detail::node_reply{make_error_code(e), nullptr, message});
                }
            });
        };
        if (as_event) {
            w_.at(w_.now(), client_, std::move(deliver));
        } else {
            deliver();
        }
    }

    void back_off() {
        // Every drop backs off, as node_connection::drop_connection notes its dropped_at_.
        dropped_at_ = detail::clock::time_point(std::chrono::nanoseconds(clock_.local(w_.now())));
        state_ = state::backing_off;
        retry_at_ = w_.now() + backoff_;
        backoff_ = std::min(backoff_ * 2, delay_max_);
        if (readiness_changed) {
            // Posted, as node_connection does: a drop may happen inside send().
            boost::asio::post(strand_, [weak = weak_from_this()] {
                if (auto self = weak.lock(); self && self->readiness_changed) {
                    self->readiness_changed();
                }
            });
        }
    }

    void connect() {
        state_ = state::connecting;
        connect_sent_ = w_.now();
        const auto attempt = ++connect_attempt_;
        const bool blocked = partitioned_until_ > w_.now();
        const real_ns when = blocked ? w_.now() + connect_timeout_ : w_.now() + 2 * latency();
        w_.at(when, client_, [weak = weak_from_this(), attempt, blocked] {
            auto self = weak.lock();
            if (!self || self->state_ != state::connecting || attempt != self->connect_attempt_) {
                return;
            }
            self->on_connect(blocked);
        });
    }

    void on_connect(bool blocked) {
        if (blocked || !node_.up()) {
            SIM_TRACE(w_, who_, blocked ? "connect timed out" : "connection refused");
            ++connection_;
            fail_all(errc::connection_failed, blocked ? "connect timed out" : "connection refused",
                     false);
            back_off();
            return;
        }
        // The handshake: the scripts, INFO server, memory and stats, then the clock mark, as
        // node_connection sends them; its round trip counted from the connect, as the real
        // one's is from the moment it is queued.
        // The commands are made once for the process: copying kilobytes of script text at
        // every connect showed in the profile.
        static const auto loads = [] {
            std::vector<std::vector<std::string>> out;
            for (const auto* script : detail::preloaded_scripts) {
                out.push_back({"SCRIPT", "LOAD", std::string(script->text)});
            }
            return out;
        }();
        for (const auto& load : loads) {
            node_.execute(load, who_);
        }
        read_info();
        observe_time(connect_sent_, read_time());
        connected_at_ = w_.now();
        state_ = state::connected;
        ++connection_;
        backoff_ = delay_initial_;
        schedule_refresh();
        if (server_read) {
            server_read();
        }
        SIM_TRACE(w_, who_, "connected");
        auto held = std::move(held_);
        held_.clear();
        for (auto& p : held) {
            transmit(p);
        }
        // After what was held back, as node_connection releases it before INFO's reply.
        if (readiness_changed) {
            readiness_changed();
        }
    }

    /// lua/clock_mark.lua run now at the node, with node_connection's arguments, its reply
    /// through the real parser: when, and what it said. NOSCRIPT (a flushed cache) is
    /// answered by EVAL at once: node_connection's resend, without its round trip.
    struct node_time {
        real_ns read_at = 0;
        std::optional<detail::clock_mark_reply> value;
    };
    node_time read_time() {
        const auto args = detail::make_clock_mark_arguments(fleet_max_ttl_, clock_drift_);
        auto resp = node_.execute({"EVALSHA", std::string(detail::clock_mark_script.sha1), "1",
                                   clock_key_, args.tolerance_us, args.keep_ms},
                                  who_);
        if (resp.starts_with("-NOSCRIPT")) {
            resp = node_.execute({"EVAL", std::string(detail::clock_mark_script.text), "1",
                                  clock_key_, args.tolerance_us, args.keep_ms},
                                 who_);
        }
        const parsed t(resp);
        node_time got{w_.now(), std::nullopt};
        if (t.reply && t.reply->type == REDIS_REPLY_ARRAY && t.reply->elements == 4) {
            const auto field = [&](std::size_t i) {
                const auto* e = t.reply->element[i];
                return e->type == REDIS_REPLY_STRING ? std::string_view(e->str, e->len)
                                                     : std::string_view();
            };
            got.value = detail::parse_clock_mark(field(0), field(1), field(2), field(3));
        }
        if (got.value) {
            h_.clock_read(node_.id(), got.read_at, got.value->node_time.count());
        }
        return got;
    }
    /// node_connection::on_clock_mark's weighing, by the same clock_watch and
    /// clock_mark_watch, of a clock mark sent at `sent` and answered now.
    void observe_time(real_ns sent, const node_time& t) {
        if (!t.value) {
            return;
        }
        const detail::clock::time_point sent_local(std::chrono::nanoseconds(clock_.local(sent)));
        const detail::clock::time_point now(std::chrono::nanoseconds(clock_.local(w_.now())));
        h_.time_sample(client_, node_.id(),
                       {t.read_at, w_.now(), clock_.local(sent), clock_.local(w_.now()),
                        t.value->node_time.count(), t.value->step_at.count()});
        if (const auto step =
                clock_watch_.observe({sent_local, now, t.value->node_time}, clock_drift_)) {
            forgot_at_ = now;
            if (!started_at_ || *started_at_ < now) {
                started_at_ = now;
            }
            quarantine_cause_ = detail::clock_step_text(*step);
            SIM_TRACE(w_, who_, quarantine_cause_ + ": quarantined");
        }
        static const bool heeded = clock_mark_setting() == clock_mark_use::heeded;
        const auto recorded = clock_mark_watch_.observe(*t.value, now, clock_drift_);
        if (!recorded || !heeded) {
            return;
        }
        if (!forgot_at_ || *forgot_at_ < recorded->at) {
            forgot_at_ = recorded->at;
        }
        if (!started_at_ || *started_at_ < recorded->at) {
            started_at_ = recorded->at;
            quarantine_cause_ = detail::recorded_step_text(recorded->by);
            SIM_TRACE(w_, who_, quarantine_cause_ + ": quarantined");
        }
    }

    /// node_connection::on_server_info's reading, through the real parser: the reply is
    /// taken in whole at the node and applied at once (the refresh's latency is simulated
    /// around it).
    void read_info() {
        const parsed info(node_.execute(std::vector<std::string>(std::begin(detail::info_sections),
                                                                 std::end(detail::info_sections)),
                                        who_));
        if (!info.reply || info.reply->type != REDIS_REPLY_STRING) {
            return;
        }
        const auto got = detail::parse_server_info({info.reply->str, info.reply->len});
        const detail::clock::time_point now(std::chrono::nanoseconds(clock_.local(w_.now())));
        if (got.run_id != run_id_) {
            uptime_start_.reset();
        }
        auto started = detail::uptime_start(got, now, uptime_start_);
        uptime_start_ = started;
        if (!run_id_.empty() && got.run_id != run_id_) {
            started = now;
            forgot_at_ = now; // kept by later refreshes, as in node_connection
            restart_seen_at_ = dropped_at_.value_or(now);
            quarantine_cause_.clear();
            clock_watch_.forget();
            clock_mark_watch_.forget();
        } else if (evicted_keys_ && got.evicted_keys && *got.evicted_keys != *evicted_keys_) {
            forgot_at_ = now;
            quarantine_cause_.clear();
            SIM_TRACE(w_, who_, "evicted_keys changed: quarantined");
        }
        if (forgot_at_ && *forgot_at_ > started) {
            started = *forgot_at_;
        }
        started_at_ = started;
        run_id_ = got.run_id;
        evicted_keys_ = got.evicted_keys;
        eviction_risk_ = detail::eviction_risk(got, {});
    }

    /// The periodic INFO of a connection that is up: one round trip, read at the node
    /// half-way. Unlike node_connection's, it pauses while the link sends nothing (an idle
    /// link votes on nothing, and a schedule must come to rest); send() resumes it.
    void schedule_refresh() {
        refreshing_ = refresh_ > 0 && state_ == state::connected;
        if (!refreshing_) {
            return;
        }
        w_.at(w_.now() + refresh_, client_, [weak = weak_from_this(), connection = connection_] {
            auto self = weak.lock();
            if (!self || self->state_ != state::connected || self->connection_ != connection) {
                if (self) {
                    self->refreshing_ = false;
                }
                return;
            }
            if (self->w_.now() - self->last_send_ > self->refresh_ && self->inflight_.empty()) {
                self->refreshing_ = false;
                return;
            }
            const auto incarnation = self->node_.incarnation();
            const auto sent = self->w_.now();
            self->w_.at(self->w_.now() + self->latency(), -1,
                        [weak, connection, incarnation, sent] {
                            auto self = weak.lock();
                            if (!self || self->connection_ != connection || !self->node_.up() ||
                                self->node_.incarnation() != incarnation) {
                                return;
                            }
                            // TIME is read at the node on the way; INFO on the reply's arrival.
                            const auto node_time = self->read_time();
                            self->w_.at(self->w_.now() + self->latency(), self->client_,
                                        [weak, connection, sent, node_time] {
                                            auto self = weak.lock();
                                            if (!self || self->state_ != state::connected ||
                                                self->connection_ != connection) {
                                                return;
                                            }
                                            self->read_info();
                                            self->observe_time(sent, node_time);
                                            self->schedule_refresh();
                                            if (self->server_read) {
                                                self->server_read();
                                            }
                                        });
                        });
        });
    }

    void transmit(const pending_ptr& p) {
        p->connection = connection_;
        inflight_.push_back(p);
        w_.at(w_.now() + patience_, client_, [weak = weak_from_this(), p] {
            auto self = weak.lock();
            if (self && !p->done && p->connection == self->connection_) {
                self->cut("no reply within the reply patience: connection reset");
            }
        });
        const real_ns arrive = std::max(crossing(), last_arrival_ + 1);
        last_arrival_ = arrive;
        w_.at(arrive, -1, [weak = weak_from_this(), p, incarnation = node_.incarnation()] {
            if (auto self = weak.lock()) {
                self->arrive(p, incarnation);
            }
        });
    }

    void arrive(const pending_ptr& p, std::uint64_t incarnation) {
        if (p->dropped || incarnation != node_.incarnation() || !node_.up()) {
            return;
        }
        p->arrived = true;
        const auto [start, end] = node_.schedule_execution();
        w_.at(start, -1, [weak = weak_from_this(), p, incarnation, end = end] {
            if (auto self = weak.lock()) {
                self->execute(p, incarnation, end);
            }
        });
    }

    void execute(const pending_ptr& p, std::uint64_t incarnation, real_ns end) {
        if (incarnation != node_.incarnation() || !node_.up()) {
            return;
        }
        node_.command_sent_at = p->sent_at;
        // Only a resend (EVAL after NOSCRIPT) is sent later than its round started: an
        // original command is placed by the round's start, which the client weighs.
        node_.sent_before_connect =
            p->sent_at < connected_at_ && !p->args.empty() && p->args[0] == "EVAL";
        auto resp = node_.execute(p->args, who_);
        node_.command_sent_at = -1;
        node_.sent_before_connect = false;
        if (p->done || p->connection != connection_ || dead_ == connection_) {
            // Ran, but nobody hears of it: the connection broke, or an earlier reply on it
            // was lost and the byte stream stalls behind it until the break is noticed.
            return;
        }
        real_ns deliver_at = std::max(end + latency(), last_delivery_ + 1);
        if (partitioned_until_ > w_.now()) {
            deliver_at = std::max(deliver_at, partitioned_until_ + latency());
        }
        last_delivery_ = deliver_at;
        if (w_.chance(net_.lost_reply_rate)) {
            SIM_TRACE(w_, who_, "reply will be lost");
            const auto connection = connection_;
            dead_ = connection;
            w_.at(deliver_at + w_.uniform(5 * ms, 200 * ms), -1,
                  [weak = weak_from_this(), connection] {
                      auto self = weak.lock();
                      if (self && self->connection_ == connection) {
                          self->cut("reply lost, connection found dead");
                      }
                  });
            return;
        }
        w_.at(deliver_at, client_, [weak = weak_from_this(), p, resp = std::move(resp)] {
            auto self = weak.lock();
            if (!self || p->done || p->connection != self->connection_) {
                return;
            }
            // Replies come in send order: this is the oldest command on the connection.
            if (self->inflight_.empty() || self->inflight_.front() != p) {
                self->h_.violation("link", "reply out of send order on " + self->who_);
                return;
            }
            self->inflight_.pop_front();
            p->done = true;
            if (resp.starts_with("-REDLOCK_MISMATCH")) {
                self->h_.mismatch_heard(self->client_, self->node_.id(), p->args, p->sent_at);
            }
            boost::asio::post(self->strand_, [p, resp] {
                const parsed r(resp);
                detail::node_reply reply;
                if (!r.reply) {
                    reply.error = make_error_code(errc::unexpected_reply);
                    reply.message = "unparsable reply";
                } else {
                    reply.reply = r.reply;
                    if (r.reply->type == REDIS_REPLY_ERROR) {
                        reply.message = std::string_view(r.reply->str, r.reply->len);
                    }
                }
                p->target->on_reply(p->tag, reply);
            });
        });
    }

    static inline std::uint64_t next_watcher_id = 1;

    world& w_;
    history& h_;
    sim_node& node_;
    int client_;
    drift_clock clock_;
    boost::asio::any_io_executor strand_;
    real_ns delay_initial_;
    real_ns delay_max_;
    real_ns connect_timeout_;
    net_faults net_;
    real_ns backoff_;
    std::string who_;
    std::uint64_t watcher_ = 0;

    state state_ = state::idle;
    std::uint64_t connection_ = 0;
    /// When the connection now up read the server's INFO.
    real_ns connected_at_ = 0;
    /// When the connect under way started: the handshake's TIME counts its round trip from it.
    real_ns connect_sent_ = 0;
    /// A connection whose byte stream lost a reply: nothing more comes out of it.
    std::uint64_t dead_ = 0;
    std::uint64_t connect_attempt_ = 0;
    std::deque<pending_ptr> inflight_;
    std::vector<pending_ptr> held_;
    real_ns last_arrival_ = 0;
    real_ns last_delivery_ = 0;
    real_ns retry_at_ = 0;
    real_ns patience_ = 1000 * ms;
    real_ns partitioned_until_ = 0;
    std::optional<detail::clock::time_point> started_at_;
    std::string run_id_;
    real_ns refresh_;
    bool refreshing_ = false;
    real_ns last_send_ = 0;
    std::string eviction_risk_;
    std::optional<std::uint64_t> evicted_keys_;
    std::optional<detail::clock::time_point> forgot_at_;
    /// The earliest start INFO's uptime placed for the server of run_id_ (uptime_start).
    std::optional<detail::clock::time_point> uptime_start_;
    std::optional<detail::clock::time_point> restart_seen_at_;
    std::optional<detail::clock::time_point> dropped_at_;

    std::chrono::milliseconds fleet_max_ttl_;
    std::string clock_key_;
    detail::clock_watch clock_watch_;
    detail::clock_mark_watch clock_mark_watch_;
    double clock_drift_ = lock_options{}.clock_drift_factor;
    std::string quarantine_cause_;

public:
    std::string_view eviction_risk() const { return eviction_risk_; }
    std::string_view quarantine_cause() const { return quarantine_cause_; }
    void allow_clock_drift(double rate) { clock_drift_ = std::max(clock_drift_, rate); }
};

sim_link::sim_link(world& w, history& h, sim_node& node, int client, drift_clock clock,
                   boost::asio::any_io_executor strand, node_address address,
                   const client_config& config, net_faults net)
    : address_(std::move(address))
    , core_(
          std::make_shared<link_core>(w, h, node, client, clock, std::move(strand), config, net)) {
    core_->attach();
}

sim_link::~sim_link() {
    core_->detach();
}

void sim_link::send(const detail::command& cmd, const std::shared_ptr<detail::reply_target>& target,
                    std::uint64_t tag) {
    core_->send(cmd, target, tag);
}

void sim_link::shutdown(std::chrono::milliseconds drain) {
    core_->shutdown(std::chrono::nanoseconds(drain).count());
}

void sim_link::expect_replies_within(std::chrono::milliseconds patience) {
    core_->expect_replies_within(std::chrono::nanoseconds(patience).count());
}

std::uint64_t sim_link::connection_generation() const noexcept {
    return core_->connection();
}

std::string_view sim_link::run_id() const noexcept {
    return core_->run_id();
}

std::string_view sim_link::restarts_undetectable() const noexcept {
    return {}; // the simulated INFO is never refused
}

std::string_view sim_link::eviction_risk() const noexcept {
    return core_->eviction_risk();
}

std::optional<detail::clock::time_point> sim_link::started_at() const noexcept {
    return core_->started_at();
}

std::optional<detail::clock::time_point> sim_link::restart_seen_at() const noexcept {
    return core_->restart_seen_at();
}

std::string_view sim_link::quarantine_cause() const noexcept {
    return core_->quarantine_cause();
}

std::string_view sim_link::clock_steps_undetectable() const noexcept {
    return {}; // the simulated TIME is never refused
}

void sim_link::allow_clock_drift(double rate) {
    core_->allow_clock_drift(rate);
}

void sim_link::on_server_read(std::function<void()> seen) {
    core_->server_read = std::move(seen);
}

detail::link_readiness sim_link::readiness() const noexcept {
    return core_->readiness();
}

void sim_link::warm_up() {
    core_->warm_up();
}

void sim_link::on_readiness_changed(std::function<void()> changed) {
    core_->readiness_changed = std::move(changed);
}

void cut(link_core& core, const char* why) {
    core.cut(why);
}

void partition(link_core& core, real_ns until, bool break_now) {
    core.partition(until, break_now);
}

} // namespace redlock::sim
