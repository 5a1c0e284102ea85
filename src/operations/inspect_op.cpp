#include "operations/inspect_op.hpp"

#include "redlock/error.hpp"

#include <boost/asio/post.hpp>

#include <unordered_map>

namespace redlock::detail {

namespace {

/// Why a node gave no usable answer, with its text; empty when it did.
std::error_code failure_of(const node_reply& r, std::string& message) {
    if (r.error || !r.reply) {
        message = std::string(r.message);
        return r.error ? r.error : make_error_code(errc::connection_failed);
    }
    if (r.reply->type == REDIS_REPLY_ERROR) {
        message.assign(r.reply->str, r.reply->len);
        return make_error_code(errc::server_error);
    }
    return {};
}

} // namespace

inspect_op::inspect_op(std::shared_ptr<client_impl> impl, std::string key,
                       std::chrono::milliseconds timeout,
                       completion<client::inspect_signature> done)
    : operation(std::move(impl))
    , key_(std::move(key))
    , timeout_(timeout)
    , completion_(std::move(done))
    , got_value_(impl_->node_count(), false)
    , got_pttl_(impl_->node_count(), false) {
    result_.nodes.resize(impl_->node_count());
    for (std::size_t node = 0; node < result_.nodes.size(); ++node) {
        result_.nodes[node].node = node;
    }
}

void inspect_op::start() {
    if (impl_->shut_down()) {
        finish(errc::cancelled);
        return;
    }
    auto self = std::static_pointer_cast<inspect_op>(shared_from_this());
    completion_.on_cancellation([strand = impl_->strand(), weak = std::weak_ptr(self)] {
        boost::asio::post(strand, [weak] {
            if (auto op = weak.lock()) {
                op->cancel();
            }
        });
    });
    impl_->note_node_timeout(timeout_);
    arm_timer(now() + timeout_);
    command get;
    get.args[get.count++] = "GET";
    get.args[get.count++] = key_;
    command pttl;
    pttl.args[pttl.count++] = "PTTL";
    pttl.args[pttl.count++] = key_;
    for (std::size_t node = 0; node < impl_->node_count(); ++node) {
        send(node, get, {0, command_kind::inspect_value, node});
        send(node, pttl, {0, command_kind::inspect_pttl, node});
    }
}

void inspect_op::cancel() {
    // Client shutdown calls this through a plain pointer; the timer may own the op.
    const auto keep_alive = shared_from_this();
    finish(errc::cancelled);
}

void inspect_op::on_reply(std::uint64_t packed, const node_reply& reply) {
    if (completion_.done()) {
        return;
    }
    const auto tag = reply_tag::unpack(packed);
    auto& view = result_.nodes[tag.node];
    if (tag.kind == command_kind::inspect_value) {
        got_value_[tag.node] = true;
        view.error = failure_of(reply, view.message);
        if (!view.error) {
            if (reply.reply->type == REDIS_REPLY_STRING) {
                view.holder.emplace(reply.reply->str, reply.reply->len);
            } else if (reply.reply->type != REDIS_REPLY_NIL) {
                view.error = make_error_code(errc::unexpected_reply);
                view.message = "unexpected reply to GET";
            }
        }
    } else {
        got_pttl_[tag.node] = true;
        view.pttl_error = failure_of(reply, view.pttl_message);
        if (!view.pttl_error) {
            if (reply.reply->type == REDIS_REPLY_INTEGER) {
                view.pttl = std::chrono::milliseconds(reply.reply->integer);
            } else {
                view.pttl_error = make_error_code(errc::unexpected_reply);
                view.pttl_message = "unexpected reply to PTTL";
            }
        }
    }
    if (++replies_ == 2 * result_.nodes.size()) {
        finish({});
    }
}

void inspect_op::on_timer() {
    for (std::size_t node = 0; node < result_.nodes.size(); ++node) {
        auto& view = result_.nodes[node];
        if (!got_value_[node]) {
            view.error = make_error_code(errc::node_timeout);
            view.message = "no answer within " + std::to_string(timeout_.count()) + " ms";
        }
        if (!got_pttl_[node]) {
            view.pttl_error = make_error_code(errc::node_timeout);
            view.pttl_message = "no answer within " + std::to_string(timeout_.count()) + " ms";
        }
    }
    finish({});
}

void inspect_op::finish(std::error_code error) {
    if (completion_.done()) {
        return;
    }
    stop_timer();
    if (error) {
        result_.nodes.clear();
        result_.message = error.message();
        completion_.complete(error, std::move(result_));
        return;
    }
    // As the votes are weighed: a server reached under two names counts once, through the
    // first of them in the list here.
    std::unordered_map<std::string, std::size_t> first_with_run_id;
    const auto now = this->now();
    for (auto& view : result_.nodes) {
        const auto& link = impl_->node(view.node);
        view.run_id = std::string(link.run_id());
        if (!view.run_id.empty()) {
            const auto first = first_with_run_id.try_emplace(view.run_id, view.node).first;
            if (first->second != view.node) {
                view.same_server_as = first->second;
            }
        }
        view.quarantined_for = impl_->quarantine_left(view.node, now);
        view.restarts_undetectable = std::string(link.restarts_undetectable());
    }
    completion_.complete(std::error_code(), std::move(result_));
}

} // namespace redlock::detail
