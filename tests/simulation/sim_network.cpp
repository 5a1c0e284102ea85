#include "sim_network.hpp"

#include "history.hpp"

#include "core/clock_mark.hpp"
#include "transport/scripts.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>

#include <hiredis/hiredis.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

namespace redlock::sim {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

std::uint64_t next_crash_watch = 1;

/// One RESP command (an array of bulk strings, as every client sends) from the front of
/// `buffer`: 1 and `args` when complete (its bytes consumed), 0 when more bytes are needed,
/// -1 when the bytes are not such a command.
int take_command(std::string& buffer, std::vector<std::string>& args) {
    std::size_t pos = 0;
    const auto number = [&](char prefix, long& out) -> int {
        if (pos >= buffer.size()) {
            return 0;
        }
        if (buffer[pos] != prefix) {
            return -1;
        }
        const auto end = buffer.find("\r\n", pos);
        if (end == std::string::npos) {
            return buffer.size() - pos > 32 ? -1 : 0;
        }
        const auto [p, ec] = std::from_chars(buffer.data() + pos + 1, buffer.data() + end, out);
        if (ec != std::errc() || p != buffer.data() + end || out < 0) {
            return -1;
        }
        pos = end + 2;
        return 1;
    };
    long count = 0;
    if (const int got = number('*', count); got != 1) {
        return got;
    }
    std::vector<std::string> out;
    out.reserve(static_cast<std::size_t>(count));
    for (long i = 0; i < count; ++i) {
        long length = 0;
        if (const int got = number('$', length); got != 1) {
            return got;
        }
        const auto len = static_cast<std::size_t>(length);
        if (buffer.size() < pos + len + 2) {
            return 0;
        }
        if (buffer.compare(pos + len, 2, "\r\n") != 0) {
            return -1;
        }
        out.emplace_back(buffer, pos, len);
        pos += len + 2;
    }
    buffer.erase(0, pos);
    args = std::move(out);
    return 1;
}

bool is_script(const std::vector<std::string>& args, const detail::script& s) {
    return args.size() >= 2 && ((args[0] == "EVALSHA" && args[1] == s.sha1) ||
                                (args[0] == "EVAL" && args[1] == s.text));
}

bool is_clock_mark(const std::vector<std::string>& args) {
    return is_script(args, detail::clock_mark_script);
}

/// The clock mark in a RESP reply, read as node_connection reads it.
std::optional<detail::clock_mark_reply> clock_mark_of(const std::string& resp) {
    std::unique_ptr<redisReader, void (*)(redisReader*)> reader(redisReaderCreate(),
                                                                &redisReaderFree);
    void* out = nullptr;
    if (redisReaderFeed(reader.get(), resp.data(), resp.size()) != REDIS_OK ||
        redisReaderGetReply(reader.get(), &out) != REDIS_OK || !out) {
        return std::nullopt;
    }
    std::unique_ptr<redisReply, void (*)(void*)> reply(static_cast<redisReply*>(out),
                                                       &freeReplyObject);
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 4) {
        return std::nullopt;
    }
    const auto field = [&](std::size_t i) {
        const auto* e = reply->element[i];
        return e->type == REDIS_REPLY_STRING ? std::string_view(e->str, e->len)
                                             : std::string_view();
    };
    return detail::parse_clock_mark(field(0), field(1), field(2), field(3));
}

/// The clock mark's reply with no step recorded (`0 0`): what a client that ignores the
/// recorded steps would make of it (REDLOCK_SIM_CLOCK_MARK=0 or links).
std::string without_recorded_step(const std::string& resp) {
    std::unique_ptr<redisReader, void (*)(redisReader*)> reader(redisReaderCreate(),
                                                                &redisReaderFree);
    void* out = nullptr;
    if (redisReaderFeed(reader.get(), resp.data(), resp.size()) != REDIS_OK ||
        redisReaderGetReply(reader.get(), &out) != REDIS_OK || !out) {
        return resp;
    }
    std::unique_ptr<redisReply, void (*)(void*)> reply(static_cast<redisReply*>(out),
                                                       &freeReplyObject);
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 4) {
        return resp;
    }
    std::string text = "*4\r\n";
    for (std::size_t i = 0; i < 2; ++i) {
        const std::string_view field(reply->element[i]->str, reply->element[i]->len);
        text += "$" + std::to_string(field.size()) + "\r\n" + std::string(field) + "\r\n";
    }
    return text + "$1\r\n0\r\n$1\r\n0\r\n";
}

} // namespace

/// One connection on a path: both directions and both ends. The client end is a
/// byte_stream (client_stream); the node end is the functions below, run by world events.
struct sim_connection : std::enable_shared_from_this<sim_connection> {
    sim_connection(std::shared_ptr<sim_path> p, asio::any_io_executor s)
        : path(std::move(p))
        , strand(std::move(s))
        , incarnation(path->node_.incarnation())
        , opened_at(path->w_.now())
        , generation(path->link_generation)
        , id(next_crash_watch++) {}

    std::shared_ptr<sim_path> path;
    asio::any_io_executor strand;
    std::uint64_t incarnation;
    real_ns opened_at;
    /// The link's connection generation whose commands this connection carries.
    std::uint64_t generation;
    std::uint64_t id;

    // Client to node.
    real_ns last_arrival = 0;
    /// Bytes that reach the node after this are lost (the connection was closed or reset
    /// while they were on their way): the node end is gone.
    real_ns node_end_gone_after = std::numeric_limits<real_ns>::max();
    std::string request;
    real_ns request_written_at = 0;

    // Node to client.
    real_ns last_delivery = 0;
    bool closed = false; ///< the client closed its end
    bool reset = false;  ///< the client end reads ECONNRESET
    bool dead = false;   ///< a reply was lost: nothing more reaches the client
    struct segment {
        std::string bytes;
        std::size_t taken = 0;
        /// Runs when the client reads the segment's last byte.
        std::function<void()> read;
    };
    std::deque<segment> inbound;
    /// Channels this connection subscribed to on the node.
    std::set<std::string> channels;
    bool read_pending = false;
    asio::mutable_buffer read_buffer;
    detail::byte_stream::io_handler read_handler;

    world& w() { return path->w_; }
    sim_node& node() { return path->node_; }

    void watch_crashes() {
        node().on_crash[id] = [weak = weak_from_this()] {
            if (auto self = weak.lock()) {
                self->break_off("node crashed");
            }
        };
    }

    /// How much of the `left` bytes crosses in the next chunk: all of them, or one time in
    /// ten a part (the network splits as it likes).
    std::size_t next_chunk(std::size_t left) {
        if (left > 1 && w().chance(0.1)) {
            return static_cast<std::size_t>(w().uniform(1, static_cast<std::int64_t>(left) - 1));
        }
        return left;
    }

    /// The client writes `bytes` now: they cross in one or more chunks, in order.
    void write(std::string_view bytes) {
        const real_ns written = w().now();
        std::size_t at = 0;
        while (at < bytes.size()) {
            const std::size_t size = next_chunk(bytes.size() - at);
            const real_ns arrive = std::max(path->crossing(), last_arrival + 1);
            last_arrival = arrive;
            w().at(arrive, -1,
                   [self = shared_from_this(), chunk = std::string(bytes.substr(at, size)),
                    written]() mutable { self->arrive(std::move(chunk), written); });
            at += size;
        }
    }

    void arrive(std::string chunk, real_ns written) {
        if (w().now() > node_end_gone_after || incarnation != node().incarnation() ||
            !node().up()) {
            return;
        }
        if (request.empty()) {
            request = std::move(chunk);
        } else {
            request += chunk;
        }
        request_written_at = written;
        for (;;) {
            std::vector<std::string> args;
            const int got = take_command(request, args);
            if (got == 0) {
                return;
            }
            if (got < 0) {
                path->h_.violation("link", "bytes that are not a RESP command reached " +
                                               path->who_ + ": " + request.substr(0, 80));
                request.clear();
                return;
            }
            const auto [start, end] = node().schedule_execution();
            w().at(start, -1,
                   [self = shared_from_this(), args = std::move(args), end = end,
                    written = request_written_at] { self->execute(args, end, written); });
        }
    }

    void execute(const std::vector<std::string>& args, real_ns end, real_ns written) {
        if (incarnation != node().incarnation() || !node().up()) {
            return;
        }
        if (args[0] == "SUBSCRIBE" || args[0] == "UNSUBSCRIBE") {
            if (!closed && !reset) { // else the node end is closing: it subscribes no more
                to_client(subscription(args), nullptr, end);
            }
            return;
        }
        const real_ns sent_at = path->take_sent(args, generation);
        // (w): a command handed to a connection that was open then is written at once (inside
        // send(), or by the flush of the same instant), unless its process was paused: bytes
        // a client kept waited for some later, unrelated write (a batch never ended, a flush
        // never posted), which no safety check notices.
        if (sent_at >= opened_at && written > sent_at &&
            !path->h_.paused_during(path->client_, sent_at, written)) {
            path->h_.violation("(w) command written late", path->who_ + ": " + args[0] +
                                                               " sent at " + fmt_time(sent_at) +
                                                               ", written at " + fmt_time(written));
        }
        node().command_sent_at = sent_at;
        // Only a resend (EVAL after NOSCRIPT) is sent later than its round started: an
        // original command is placed by the round's start, which the client weighs.
        node().sent_before_connect = sent_at >= 0 && sent_at < opened_at && args[0] == "EVAL";
        auto resp = node().execute(args, path->who_);
        node().command_sent_at = -1;
        node().sent_before_connect = false;
        std::function<void()> on_read;
        if (is_clock_mark(args)) {
            static const bool heeded = clock_mark_setting() == clock_mark_use::heeded;
            const auto mark = clock_mark_of(resp);
            if (mark && !heeded && mark->step_at.count() != 0) {
                resp = without_recorded_step(resp);
            }
            if (mark) {
                const real_ns read_at = w().now();
                path->h_.clock_read(node().id(), read_at, mark->node_time.count());
                on_read = [path = path, read_at, written, mark = *mark] {
                    const auto now = path->w_.now();
                    path->h_.time_sample(path->client_, path->node_.id(),
                                         {read_at, now, path->clock_.local(written),
                                          path->clock_.local(now), mark.node_time.count(),
                                          mark.step_at.count()});
                };
            }
        }
        if (args[0] == "INFO" && !resp.empty() && resp[0] == '$') {
            const real_ns read_at = w().now();
            on_read = [path = path, read_at] {
                path->h_.info_read(path->client_, path->node_.id(), read_at);
            };
        }
        if (path->net_.hold_extend_max > 0 && is_script(args, detail::extend_script)) {
            end += path->hold_extend();
        }
        if (!closed && !reset && !dead && w().chance(path->net_.lost_reply_rate)) {
            SIM_TRACE(w(), path->who_, "reply will be lost");
            dead = true;
            w().at(end + path->latency() + w().uniform(5 * ms, 200 * ms), -1,
                   [weak = weak_from_this()] {
                       if (auto self = weak.lock()) {
                           self->break_off("reply lost, connection found dead");
                       }
                   });
            return;
        }
        to_client(std::move(resp), std::move(on_read), end);
    }

    /// Bytes that leave the node at `leaves` for the client: after the latency (and any
    /// partition), in order with everything else on the connection, in one or more chunks,
    /// the last one carrying what its reading means.
    void to_client(std::string resp, std::function<void()> on_read, real_ns leaves) {
        if (closed || reset || dead) {
            return; // ran, but nobody hears of it
        }
        real_ns deliver_at = std::max(leaves + path->latency(), last_delivery + 1);
        if (path->partitioned_until_ > w().now()) {
            deliver_at = std::max(deliver_at, path->partitioned_until_ + path->latency());
        }
        std::size_t at = 0;
        while (at < resp.size()) {
            const std::size_t size = next_chunk(resp.size() - at);
            deliver_at = std::max(deliver_at, last_delivery + 1);
            last_delivery = deliver_at;
            segment s{resp.substr(at, size), 0, nullptr};
            at += size;
            if (at == resp.size()) {
                s.read = std::move(on_read);
            }
            w().at(deliver_at, path->client_,
                   [self = shared_from_this(), s = std::move(s)]() mutable {
                       self->deliver(std::move(s));
                   });
            deliver_at += w().uniform(0, 20 * us);
        }
    }

    /// SUBSCRIBE or UNSUBSCRIBE of channels on this connection, as Redis 7.0 answers them
    /// over RESP2: one confirmation per channel with the connection's count after it.
    std::string subscription(const std::vector<std::string>& args) {
        const bool subscribing = args[0] == "SUBSCRIBE";
        if (subscribing && args.size() < 2) {
            return "-ERR wrong number of arguments for 'subscribe' command\r\n";
        }
        std::string out;
        const auto confirm = [&](const char* what, const std::string& channel) {
            out += "*3\r\n$" + std::to_string(std::strlen(what)) + "\r\n" + what + "\r\n$" +
                   std::to_string(channel.size()) + "\r\n" + channel +
                   "\r\n:" + std::to_string(channels.size()) + "\r\n";
        };
        for (std::size_t i = 1; i < args.size(); ++i) {
            const auto& channel = args[i];
            SIM_TRACE(w(), path->who_, args[0] + " " + channel);
            if (subscribing) {
                channels.insert(channel);
                node().subscribe(
                    channel, id,
                    [weak = weak_from_this()](const std::string& ch, const std::string& payload) {
                        if (auto self = weak.lock()) {
                            self->published(ch, payload);
                        }
                    });
                if (w().chance(path->notify_.cut_rate)) {
                    w().at(w().now() + w().uniform(0, path->notify_.cut_within), -1,
                           [weak = weak_from_this()] {
                               if (auto self = weak.lock()) {
                                   self->break_off("subscriber connection cut");
                               }
                           });
                }
                confirm("subscribe", channel);
            } else {
                channels.erase(channel);
                node().unsubscribe(channel, id);
                confirm("unsubscribe", channel);
            }
        }
        return out;
    }

    /// A message published on the node to a channel this connection subscribed to.
    void published(const std::string& channel, const std::string& payload) {
        if (w().chance(path->notify_.lost_rate)) {
            SIM_TRACE(w(), path->who_, "notification lost: " + channel);
            return;
        }
        SIM_TRACE(w(), path->who_, "message on " + channel);
        to_client("*3\r\n$7\r\nmessage\r\n$" + std::to_string(channel.size()) + "\r\n" + channel +
                      "\r\n$" + std::to_string(payload.size()) + "\r\n" + payload + "\r\n",
                  nullptr, w().now());
    }

    void deliver(segment s) {
        if (closed || reset) {
            return;
        }
        inbound.push_back(std::move(s));
        pump();
    }

    /// Completes the pending read with what has arrived, or with the reset.
    void pump() {
        if (!read_pending || (inbound.empty() && !reset)) {
            return;
        }
        read_pending = false;
        auto handler = std::move(read_handler);
        if (inbound.empty()) {
            asio::post(strand, [handler = std::move(handler)] {
                handler(asio::error::connection_reset, 0);
            });
            return;
        }
        auto* out = static_cast<char*>(read_buffer.data());
        std::size_t copied = 0;
        while (!inbound.empty() && copied < read_buffer.size()) {
            auto& s = inbound.front();
            const auto n = std::min(s.bytes.size() - s.taken, read_buffer.size() - copied);
            std::copy_n(s.bytes.data() + s.taken, n, out + copied);
            s.taken += n;
            copied += n;
            if (s.taken == s.bytes.size()) {
                if (s.read) {
                    s.read();
                }
                inbound.pop_front();
            }
        }
        asio::post(strand, [handler = std::move(handler), copied] { handler({}, copied); });
    }

    /// The node end goes away with what is still on its way to it, or a prefix of that.
    void node_end_goes() {
        const real_ns now = w().now();
        node_end_gone_after =
            last_arrival > now && w().chance(0.5) ? w().uniform(now, last_arrival) : now;
        node().on_crash.erase(id);
        node().unsubscribe_all(id);
        channels.clear();
    }

    /// A reset (a cut, a crash, a dead connection found out): the client reads ECONNRESET.
    void break_off(const char* why) {
        if (closed || reset) {
            return;
        }
        SIM_TRACE(w(), path->who_, std::string("connection reset: ") + why);
        reset = true;
        inbound.clear();
        node_end_goes();
        // The client reads the reset as its own event: a paused client hears nothing
        // until it resumes.
        w().at(w().now(), path->client_, [self = shared_from_this()] { self->pump(); });
    }

    /// The client closes its end.
    void close() {
        if (closed) {
            return;
        }
        closed = true;
        inbound.clear();
        if (!reset) {
            node_end_goes();
        }
        path->forget(this);
        if (read_pending) {
            read_pending = false;
            asio::post(strand, [handler = std::move(read_handler)] {
                handler(asio::error::operation_aborted, 0);
            });
        }
    }
};

namespace {

/// The client end of a sim_connection, as node_connection sees it.
class client_stream final : public detail::byte_stream {
public:
    explicit client_stream(std::shared_ptr<sim_connection> c)
        : c_(std::move(c)) {}
    ~client_stream() override { c_->close(); }

    void async_write(asio::const_buffer buffer, io_handler handler) override {
        error_code ec = failure();
        if (!ec) {
            c_->write({static_cast<const char*>(buffer.data()), buffer.size()});
        }
        asio::post(c_->strand, [handler = std::move(handler), ec, n = ec ? 0 : buffer.size()] {
            handler(ec, n);
        });
    }

    /// Like a socket's send buffer: mostly takes everything, sometimes only a part or
    /// nothing, so that the rest takes node_connection's other way.
    std::size_t write_now(asio::const_buffer buffer, error_code& ec) override {
        ec = failure();
        if (ec || buffer.size() == 0) {
            return 0;
        }
        auto& w = c_->w();
        std::size_t n = buffer.size();
        if (w.chance(0.05)) {
            n = 0;
        } else if (n > 1 && w.chance(0.1)) {
            n = static_cast<std::size_t>(w.uniform(1, static_cast<std::int64_t>(n) - 1));
        }
        if (n > 0) {
            c_->write({static_cast<const char*>(buffer.data()), n});
        }
        return n;
    }

    void async_read_some(asio::mutable_buffer buffer, io_handler handler) override {
        if (c_->closed) {
            asio::post(c_->strand, [handler = std::move(handler)] {
                handler(asio::error::operation_aborted, 0);
            });
            return;
        }
        c_->read_pending = true;
        c_->read_buffer = buffer;
        c_->read_handler = std::move(handler);
        c_->pump();
    }

    void close() noexcept override { c_->close(); }

private:
    error_code failure() const {
        if (c_->closed) {
            return asio::error::bad_descriptor;
        }
        return c_->reset ? error_code(asio::error::connection_reset) : error_code();
    }

    std::shared_ptr<sim_connection> c_;
};

} // namespace

/// Opens connections over the path: a round trip (partitions hold it back), refused when
/// the node is down.
class sim_path::connector_impl final : public detail::stream_connector {
public:
    connector_impl(std::shared_ptr<sim_path> path, asio::any_io_executor strand)
        : path_(std::move(path))
        , strand_(std::move(strand)) {}
    ~connector_impl() override { abort(); }

    void open(opened_fn opened) override {
        abort();
        attempt_ = std::make_shared<opened_fn>(std::move(opened));
        auto& w = path_->w_;
        const real_ns there = path_->crossing();
        const real_ns back = there + path_->latency();
        w.at(back, path_->client_,
             [path = path_, strand = strand_, weak = std::weak_ptr<opened_fn>(attempt_)] {
                 auto attempt = weak.lock();
                 if (!attempt || !*attempt) {
                     return;
                 }
                 // Handed over on the strand, unless the attempt was aborted (or the
                 // connector destroyed) before that: then nothing is said, as
                 // stream_connector promises, and the stream, unclaimed, closes.
                 auto stream = std::make_shared<std::unique_ptr<detail::byte_stream>>();
                 std::string why;
                 if (!path->node_.up()) {
                     SIM_TRACE(path->w_, path->who_, "connection refused");
                     why = "cannot connect: Connection refused";
                 } else {
                     auto c = std::make_shared<sim_connection>(path, strand);
                     c->watch_crashes();
                     path->connections_.push_back(c);
                     SIM_TRACE(path->w_, path->who_, "connected");
                     *stream = std::make_unique<client_stream>(std::move(c));
                 }
                 asio::post(strand, [weak, stream, why] {
                     auto attempt = weak.lock();
                     if (!attempt || !*attempt) {
                         return;
                     }
                     std::exchange(*attempt, nullptr)(std::move(*stream), why);
                 });
             });
    }

    void abort() noexcept override {
        if (attempt_) {
            *attempt_ = nullptr;
            attempt_.reset();
        }
    }
    std::string_view step() const noexcept override { return "connect"; }
    std::string_view hint() const noexcept override { return ""; }

private:
    std::shared_ptr<sim_path> path_;
    asio::any_io_executor strand_;
    std::shared_ptr<opened_fn> attempt_;
};

sim_path::sim_path(world& w, history& h, sim_node& node, int client, drift_clock clock,
                   net_faults net, notify_faults notify)
    : w_(w)
    , h_(h)
    , node_(node)
    , client_(client)
    , clock_(clock)
    , net_(net)
    , hold_rng_(net.hold_extend_seed ^ (static_cast<std::uint64_t>(client) << 32) ^
                static_cast<std::uint64_t>(node.id()))
    , notify_(notify)
    , who_("c" + std::to_string(client) + "->n" + std::to_string(node.id())) {}

sim_path::~sim_path() = default;

std::unique_ptr<detail::stream_connector> sim_path::connector(asio::any_io_executor strand) {
    return std::make_unique<connector_impl>(shared_from_this(), std::move(strand));
}

real_ns sim_path::hold_extend() {
    return net_.hold_extend_min +
           static_cast<real_ns>(hold_rng_() % static_cast<std::uint64_t>(net_.hold_extend_max -
                                                                         net_.hold_extend_min + 1));
}

real_ns sim_path::latency() {
    if (w_.chance(net_.tail_rate)) {
        return w_.uniform(net_.latency_min, net_.tail_max);
    }
    const double u = w_.uniform_real(1e-9, 1.0);
    return net_.latency_min +
           static_cast<real_ns>(-std::log(u) * static_cast<double>(net_.latency_mean));
}

real_ns sim_path::crossing() {
    real_ns t = w_.now() + latency();
    if (partitioned_until_ > w_.now()) {
        t = std::max(t, partitioned_until_ + latency());
    }
    return t;
}

void sim_path::cut(const char* why) {
    for (const auto& weak : std::vector(connections_)) {
        if (auto c = weak.lock()) {
            c->break_off(why);
        }
    }
}

void sim_path::partition(real_ns until, bool break_now) {
    partitioned_until_ = std::max(partitioned_until_, until);
    SIM_TRACE(w_, who_,
              "partitioned until " + fmt_time(until) + (break_now ? ", cut" : ", stalled"));
    if (break_now) {
        cut("partition");
    }
}

void sim_path::sent(std::shared_ptr<const std::vector<std::string>> args,
                    std::uint64_t generation) {
    // Commands that failed without a connection are never matched: the oldest go.
    if (sent_.size() >= 256) {
        sent_.pop_front();
    }
    sent_.push_back({std::move(args), w_.now(), generation});
}

void sim_path::not_sent(const std::shared_ptr<const std::vector<std::string>>& args) {
    std::erase_if(sent_, [&](const sent_command& c) { return c.args == args; });
}

real_ns sim_path::take_sent(const std::vector<std::string>& args, std::uint64_t generation) {
    // One connection's commands are written in send order: those of its generation sent
    // before the match were never written, or lost with it.
    const auto match = std::find_if(sent_.begin(), sent_.end(), [&](const sent_command& c) {
        return c.generation == generation && *c.args == args;
    });
    if (match == sent_.end()) {
        return -1;
    }
    const real_ns at = match->at;
    const auto last = std::next(match);
    const auto kept = std::remove_if(
        sent_.begin(), last, [&](const sent_command& c) { return c.generation == generation; });
    sent_.erase(kept, last);
    return at;
}

void sim_path::forget(sim_connection* c) {
    std::erase_if(connections_, [c](const std::weak_ptr<sim_connection>& weak) {
        const auto held = weak.lock();
        return !held || held.get() == c;
    });
}

} // namespace redlock::sim
