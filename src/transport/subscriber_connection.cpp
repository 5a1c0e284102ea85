#include "transport/subscriber_connection.hpp"

#include <boost/asio/post.hpp>

namespace redlock::detail {

namespace {

std::string_view text(const redisReply& r) {
    return {r.str, r.len};
}

bool is_text(const redisReply* r) {
    return r != nullptr && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS);
}

} // namespace

/// Gets the replies to SUBSCRIBE (tag: generation, or 0 for UNSUBSCRIBE). Outlives the
/// subscriber_connection while replies are posted to it: `owner` is cleared first.
class subscriber_connection::replies final : public reply_target {
public:
    explicit replies(subscriber_connection* owner)
        : owner_(owner) {}
    void disown() noexcept { owner_ = nullptr; }

    void on_reply(std::uint64_t generation, const node_reply& reply) override {
        if (owner_ == nullptr || generation == 0) {
            return;
        }
        const auto* r = reply.reply;
        if (!reply.error && r != nullptr && r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
            is_text(r->element[0]) && text(*r->element[0]) == "subscribe" &&
            is_text(r->element[1])) {
            owner_->events_->on_subscribed(owner_->node_, text(*r->element[1]), generation);
            return;
        }
        // NOPERM (an ACL without the channel or the command), NOAUTH: refused; any other
        // error (too many clients, loading) passes.
        if (!reply.error && r != nullptr && r->type == REDIS_REPLY_ERROR &&
            (text(*r).starts_with("NOPERM") || text(*r).starts_with("NOAUTH"))) {
            owner_->events_->on_subscribe_refused(owner_->node_, generation, text(*r));
            return;
        }
        owner_->events_->on_subscribe_failed(owner_->node_, generation);
    }

    void on_message(std::string_view channel, std::string_view payload) const {
        if (owner_ != nullptr) {
            owner_->events_->on_message(owner_->node_, channel, payload);
        }
    }

private:
    subscriber_connection* owner_;
};

subscriber_connection::subscriber_connection(boost::asio::any_io_executor strand,
                                             node_address address, const client_config& config,
                                             std::unique_ptr<time_source> time,
                                             std::unique_ptr<stream_connector> connector,
                                             std::size_t node, subscription_events& events)
    : strand_(strand)
    , node_(node)
    , events_(&events)
    , replies_(std::make_shared<replies>(this)) {
    node_connection::subscriber_hooks hooks;
    hooks.push = [this](const redisReply& r) { return on_push(r); };
    hooks.dropped = [this] { events_->on_subscriptions_lost(node_); };
    connection_ =
        std::make_unique<node_connection>(std::move(strand), std::move(address), config,
                                          std::move(time), std::move(connector), std::move(hooks));
}

subscriber_connection::~subscriber_connection() {
    replies_->disown();
}

bool subscriber_connection::on_push(const redisReply& r) {
    if (r.type != REDIS_REPLY_ARRAY || r.elements != 3 || !is_text(r.element[0]) ||
        text(*r.element[0]) != "message") {
        return false; // a reply to a command, or garbage the pipeline rejects
    }
    if (!is_text(r.element[1]) || !is_text(r.element[2])) {
        return true; // a malformed message: nothing to learn from it
    }
    // Posted: the waiters it wakes must not run inside this connection's read loop.
    boost::asio::post(strand_, [replies = replies_, channel = std::string(text(*r.element[1])),
                                payload = std::string(text(*r.element[2]))] {
        replies->on_message(channel, payload);
    });
    return true;
}

void subscriber_connection::subscribe(const std::string& channel, std::uint64_t generation) {
    connection_->send(command{{"SUBSCRIBE", channel}}, replies_, generation);
}

void subscriber_connection::unsubscribe(const std::string& channel) {
    connection_->send(command{{"UNSUBSCRIBE", channel}}, replies_, 0);
}

void subscriber_connection::shutdown() {
    replies_->disown();
    connection_->shutdown(std::chrono::milliseconds(0));
}

} // namespace redlock::detail
