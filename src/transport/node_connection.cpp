#include "transport/node_connection.hpp"

#include "transport/scripts.hpp"

#include "redlock/error.hpp"

#include <boost/asio/post.hpp>

#include <algorithm>
#include <charconv>
#include <string>
#include <utility>

namespace redlock::detail {

namespace asio = boost::asio;

namespace {
constexpr std::uint64_t handshake_auth = 1;
constexpr std::uint64_t handshake_select = 2;
constexpr std::uint64_t handshake_info = 3;
constexpr std::uint64_t handshake_script_load = 4;

/// The value of `field:` in an INFO reply, or empty.
std::string_view info_field(std::string_view info, std::string_view field) {
    for (std::size_t at = 0; at < info.size();) {
        const auto end = std::min(info.find("\r\n", at), info.size());
        const auto line = info.substr(at, end - at);
        if (line.size() > field.size() && line.starts_with(field) && line[field.size()] == ':') {
            return line.substr(field.size() + 1);
        }
        at = end + 2;
    }
    return {};
}
} // namespace

node_connection::node_connection(asio::any_io_executor strand, node_address address,
                                 const client_config& config)
    : strand_(std::move(strand))
    , address_(std::move(address))
    , config_(config)
    , display_(address_.display())
    , connect_timer_(strand_)
    , backoff_timer_(strand_)
    , resolver_(strand_) {}

node_connection::~node_connection() {
    // The operations are being torn down with the client: drop them without callbacks.
    destroying_ = true;
    pending_.clear();
    if (context_) {
        redisAsyncFree(context_);
    }
}

void node_connection::log(log_level level, const std::string& message) const {
    if (config_.log) {
        config_.log(level, "node " + display_ + ": " + message);
    }
}

void node_connection::fail_later(const std::shared_ptr<reply_target>& target, std::uint64_t tag,
                                 errc error, std::string message) {
    // Never call back from inside send(): the caller may be in the middle of a loop over nodes.
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
        if (!connect()) {
            fail_later(target, tag, errc::connection_failed, last_error_);
            return;
        }
        break;
    case state::resolving:
    case state::connecting:
    case state::connected:
        break;
    }
    if (pending_.size() + held_back_.size() >= config_.max_in_flight_per_node) {
        fail_later(target, tag, errc::node_backlogged,
                   std::to_string(pending_.size() + held_back_.size()) +
                       " commands awaiting replies");
        return;
    }
    if (state_ == state::resolving || handshake_outstanding_ > 0) {
        hold_back(cmd, target, tag);
        return;
    }
    issue(cmd, target, tag);
}

void node_connection::hold_back(const command& cmd, const std::shared_ptr<reply_target>& target,
                                std::uint64_t tag) {
    held_back h{{}, target, tag};
    h.args.reserve(cmd.count);
    for (std::size_t i = 0; i < cmd.count; ++i) {
        h.args.emplace_back(cmd.args[i]);
    }
    held_back_.push_back(std::move(h));
}

void node_connection::issue(const command& cmd, const std::shared_ptr<reply_target>& target,
                            std::uint64_t tag) {
    const char* argv[std::tuple_size_v<decltype(cmd.args)>];
    std::size_t lengths[std::tuple_size_v<decltype(cmd.args)>];
    for (std::size_t i = 0; i < cmd.count; ++i) {
        argv[i] = cmd.args[i].data();
        lengths[i] = cmd.args[i].size();
    }
    if (redisAsyncCommandArgv(context_, &node_connection::on_reply_thunk, this,
                              static_cast<int>(cmd.count), argv, lengths) != REDIS_OK) {
        // The context is disconnecting: its error callbacks are under way.
        fail_later(target, tag, errc::connection_failed,
                   last_error_.empty() ? "connection closing" : last_error_);
        return;
    }
    pending_.push_back({target, tag});
}

void node_connection::release_held_back() {
    auto waiting = std::move(held_back_);
    held_back_.clear();
    for (auto& h : waiting) {
        command cmd;
        cmd.count = h.args.size();
        for (std::size_t i = 0; i < cmd.count; ++i) {
            cmd.args[i] = h.args[i];
        }
        issue(cmd, h.target, h.tag);
    }
}

bool node_connection::connect() {
    connect_deadline_ = std::chrono::steady_clock::now() + config_.connect_timeout;
    ++connect_attempts_;
    if (address_.kind == node_address::transport::tcp) {
        boost::system::error_code not_numeric;
        boost::asio::ip::make_address(address_.host, not_numeric);
        if (not_numeric) {
            // hiredis would call getaddrinfo here, blocking every node and every renewal of
            // this client for as long as DNS takes.
            resolve();
            return true;
        }
    }
    return connect_to(address_.host);
}

void node_connection::resolve() {
    state_ = state::resolving;
    const auto attempt = connect_attempts_;
    resolver_.async_resolve(address_.host, std::to_string(address_.port),
                            [this, alive = std::weak_ptr<const bool>(alive_),
                             attempt](const boost::system::error_code& ec,
                                      const boost::asio::ip::tcp::resolver::results_type& results) {
                                if (alive.expired() || attempt != connect_attempts_ ||
                                    state_ != state::resolving) {
                                    return; // timed out or shut down meanwhile
                                }
                                on_resolved(ec, results);
                            });
    connect_timer_.expires_at(connect_deadline_);
    connect_timer_.async_wait([this, attempt](const boost::system::error_code& ec) {
        if (ec || attempt != connect_attempts_ || state_ != state::resolving) {
            return;
        }
        resolver_.cancel();
        closed("resolving " + address_.host + " timed out after " +
               std::to_string(config_.connect_timeout.count()) + " ms");
    });
}

void node_connection::on_resolved(const boost::system::error_code& ec,
                                  const boost::asio::ip::tcp::resolver::results_type& results) {
    if (ec || results.empty()) {
        closed("cannot resolve " + address_.host + ": " +
               (ec ? ec.message() : std::string("no address")));
        return;
    }
    // hiredis' own choice when it resolves: the first IPv4 address, else the first one.
    auto chosen = results.begin()->endpoint();
    for (const auto& entry : results) {
        if (entry.endpoint().address().is_v4()) {
            chosen = entry.endpoint();
            break;
        }
    }
    connect_to(chosen.address().to_string());
}

bool node_connection::connect_to(const std::string& host) {
    redisAsyncContext* context = address_.kind == node_address::transport::unix_socket
                                     ? redisAsyncConnectUnix(address_.path.c_str())
                                     : redisAsyncConnect(host.c_str(), address_.port);
    if (!context) {
        closed("out of memory creating connection");
        return false;
    }
    if (context->err) {
        std::string why = context->errstr;
        redisAsyncFree(context);
        closed(why);
        return false;
    }
    context_ = context;
    context_->data = this;
    state_ = state::connecting;
    redisAsyncSetConnectCallback(context_, &node_connection::on_connect_thunk);
    redisAsyncSetDisconnectCallback(context_, &node_connection::on_disconnect_thunk);
    if (address_.kind == node_address::transport::tcp) {
        redisEnableKeepAlive(&context_->c);
    }
    adapter_ = hiredis_adapter::attach(strand_, context_);
    if (!queue_handshake()) {
        drop_connection("cannot queue the connection handshake (out of memory)");
        return false;
    }
    if (handshake_outstanding_ == 0) {
        release_held_back(); // what waited for the host name
    }

    connect_timer_.expires_at(connect_deadline_);
    connect_timer_.async_wait([this, context](const boost::system::error_code& ec) {
        if (ec || context_ != context || state_ != state::connecting) {
            return;
        }
        last_error_ =
            "connect timed out after " + std::to_string(config_.connect_timeout.count()) + " ms";
        drop_connection(last_error_);
    });
    return true;
}

bool node_connection::queue_handshake() {
    // A step hiredis could not queue (out of memory) must not get a pending_ entry: every
    // later reply would then be handed to the command before it.
    const auto step = [this](int queued, std::uint64_t which) {
        if (queued == REDIS_OK) {
            pending_.push_back({nullptr, which});
        }
        return queued == REDIS_OK;
    };
    if (!address_.password.empty()) {
        const int queued =
            address_.user.empty()
                ? redisAsyncCommand(context_, &node_connection::on_reply_thunk, this, "AUTH %b",
                                    address_.password.data(), address_.password.size())
                : redisAsyncCommand(context_, &node_connection::on_reply_thunk, this, "AUTH %b %b",
                                    address_.user.data(), address_.user.size(),
                                    address_.password.data(), address_.password.size());
        if (!step(queued, handshake_auth)) {
            return false;
        }
        ++handshake_outstanding_;
    }
    if (address_.db != 0) {
        if (!step(redisAsyncCommand(context_, &node_connection::on_reply_thunk, this, "SELECT %d",
                                    address_.db),
                  handshake_select)) {
            return false;
        }
        ++handshake_outstanding_;
    }
    // For the restart quarantine, and to recognise two addresses of one server by run_id
    // (sent with the quarantine off too, for that). Its reply precedes every vote on this
    // connection, but nothing waits for it: it gates no command, only how votes are counted.
    if (!step(redisAsyncCommand(context_, &node_connection::on_reply_thunk, this, "INFO server"),
              handshake_info)) {
        return false;
    }
    // Every script in the node's cache before the first lock command, so that NOSCRIPT (and
    // the resend it calls for) only follows a SCRIPT FLUSH. Nothing waits for these: a
    // refusal (ACL without +script) only leaves the EVAL fallback to do the work.
    for (const auto* s :
         {&release_script, &extend_script, &fence_acquire_script, &fence_raise_script}) {
        if (!step(redisAsyncCommand(context_, &node_connection::on_reply_thunk, this,
                                    "SCRIPT LOAD %b", s->text.data(), s->text.size()),
                  handshake_script_load)) {
            return false;
        }
    }
    return true;
}

void node_connection::on_server_info(const redisReply* reply) {
    if (reply->type != REDIS_REPLY_STRING) {
        const std::string why =
            reply->type == REDIS_REPLY_ERROR ? std::string(reply->str, reply->len) : "no text";
        info_refused_ = "INFO refused: restarts cannot be detected (" + why + ")";
        if (config_.quarantine.enabled) {
            log(log_level::error, info_refused_ +
                                      ": this node's votes do not count (grant the user +info, "
                                      "or turn the quarantine off)");
        } else {
            log(log_level::warning, "INFO server refused (" + why +
                                        "): another address of this same server cannot be "
                                        "recognised");
        }
        return;
    }
    info_refused_.clear();
    const std::string_view info(reply->str, reply->len);
    const auto run_id = info_field(info, "run_id");
    long long uptime = 0;
    const auto uptime_text = info_field(info, "uptime_in_seconds");
    std::from_chars(uptime_text.data(), uptime_text.data() + uptime_text.size(), uptime);
    // A hostile or broken node's uptime must not overflow the clock: a year is plenty for
    // any quarantine.
    uptime = std::clamp<long long>(uptime, 0, 365LL * 24 * 3600);
    const auto now = std::chrono::steady_clock::now();
    if (!run_id_.empty() && run_id != run_id_) {
        started_at_ = now;
        log(log_level::warning, "restarted (run_id changed): quarantined");
    } else {
        // Whole seconds, rounded down: the restart is placed no earlier than it happened.
        started_at_ = now - std::chrono::seconds(uptime);
    }
    run_id_ = std::string(run_id);
}

void node_connection::on_connect_thunk(const redisAsyncContext* context, int status) {
    auto* self = static_cast<node_connection*>(context->data);
    if (self->destroying_) {
        return;
    }
    if (status != REDIS_OK) {
        // hiredis frees the context right after this returns.
        self->closed(context->errstr);
        return;
    }
    self->state_ = state::connected;
    self->consecutive_failures_ = 0;
    self->connect_timer_.cancel();
    self->log(log_level::debug, "connected");
}

void node_connection::on_disconnect_thunk(const redisAsyncContext* context, int status) {
    auto* self = static_cast<node_connection*>(context->data);
    if (self->destroying_ || self->context_ != context) {
        return;
    }
    self->closed(status == REDIS_OK ? "connection closed" : context->errstr);
}

void node_connection::on_reply_thunk(redisAsyncContext*, void* reply, void* self) {
    static_cast<node_connection*>(self)->on_reply(static_cast<redisReply*>(reply));
}

void node_connection::on_reply(redisReply* reply) {
    if (destroying_ || pending_.empty()) {
        return;
    }
    pending p = std::move(pending_.front());
    pending_.pop_front();
    if (!p.target) {
        on_handshake_reply(reply, p.tag);
        return;
    }
    if (!reply) {
        if (last_error_.empty() && context_ && context_->errstr[0]) {
            last_error_ = context_->errstr;
        }
        const errc why = state_ == state::shut_down ? errc::cancelled : errc::connection_failed;
        p.target->on_reply(p.tag,
                           node_reply{make_error_code(why), nullptr,
                                      last_error_.empty() ? "connection lost" : last_error_});
        let_go(std::move(p.target));
        return;
    }
    std::string_view message;
    if (reply->type == REDIS_REPLY_ERROR) {
        message = std::string_view(reply->str, reply->len);
    }
    p.target->on_reply(p.tag, node_reply{{}, reply, message});
    if (state_ == state::shut_down && pending_.empty() && context_) {
        // Drained: hiredis frees the context once this callback returns.
        drop_connection(last_error_);
    }
    let_go(std::move(p.target));
}

void node_connection::let_go(std::shared_ptr<reply_target> target) {
    // The last owner of an operation may be the last owner of the client, and with it of
    // this connection: never destroyed inside a hiredis callback, which goes on using the
    // context (and this) after the callback returns.
    if (target.use_count() == 1) {
        asio::post(strand_, [target = std::move(target)] {});
    }
}

void node_connection::on_handshake_reply(const redisReply* reply, std::uint64_t step) {
    if (!reply || !context_) {
        return; // the connection died: closed() fails what was held back
    }
    if (step == handshake_info) {
        on_server_info(reply);
        return;
    }
    if (step == handshake_script_load) {
        return;
    }
    if (reply->type != REDIS_REPLY_ERROR) {
        if (--handshake_outstanding_ == 0) {
            release_held_back();
        }
        return;
    }
    const std::string what = step == handshake_auth ? "AUTH" : "SELECT";
    last_error_ = what + " failed: " + std::string(reply->str, reply->len);
    log(log_level::error, last_error_);
    // Commands queued behind the handshake would run as the wrong user or in the wrong
    // database: drop the connection (hiredis defers the free until this callback returns).
    drop_connection(last_error_);
}

void node_connection::closed(std::string why) {
    handshake_outstanding_ = 0;
    const errc held_error = state_ == state::shut_down ? errc::cancelled : errc::connection_failed;
    for (auto& h : std::exchange(held_back_, {})) {
        fail_later(h.target, h.tag, held_error, why);
    }
    if (state_ == state::shut_down) {
        context_ = nullptr;
        adapter_.reset();
        return;
    }
    const bool was_connected = state_ == state::connected;
    context_ = nullptr;
    adapter_.reset();
    connect_timer_.cancel();
    last_error_ = std::move(why);
    ++consecutive_failures_;
    auto delay = config_.reconnect_delay_initial;
    for (unsigned i = 1; i < consecutive_failures_ && delay < config_.reconnect_delay_max; ++i) {
        delay *= 2;
    }
    delay = std::min(delay, config_.reconnect_delay_max);
    log(was_connected ? log_level::warning : log_level::debug,
        last_error_ + "; next connect attempt in " + std::to_string(delay.count()) + " ms");
    state_ = state::backing_off;
    backoff_timer_.expires_after(delay);
    backoff_timer_.async_wait([this](const boost::system::error_code& ec) {
        if (!ec && state_ == state::backing_off) {
            state_ = state::idle;
        }
    });
}

void node_connection::shutdown(std::chrono::milliseconds drain) {
    if (state_ == state::shut_down) {
        return;
    }
    const bool has_link = state_ == state::connected || state_ == state::connecting;
    state_ = state::shut_down;
    connect_timer_.cancel();
    backoff_timer_.cancel();
    last_error_ = "client shut down";
    resolver_.cancel();
    if (has_link && !pending_.empty() && drain.count() > 0) {
        // What waits for the handshake fails now; what was sent may still be in the
        // socket's buffer: it goes out and is answered, bounded by `drain`.
        for (auto& h : std::exchange(held_back_, {})) {
            fail_later(h.target, h.tag, errc::cancelled, last_error_);
        }
        connect_timer_.expires_after(drain);
        connect_timer_.async_wait([this, context = context_](const boost::system::error_code& ec) {
            if (!ec && context_ == context && context_) {
                drop_connection("client shut down; " + std::to_string(pending_.size()) +
                                " commands unanswered");
            }
        });
        return;
    }
    // Fails what waits for the host name or the handshake, then the commands sent.
    drop_connection(last_error_);
}

void node_connection::drop_connection(std::string why) {
    redisAsyncContext* doomed = context_;
    closed(std::move(why));
    if (doomed) {
        redisAsyncFree(doomed);
    }
}

} // namespace redlock::detail
