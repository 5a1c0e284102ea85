#include "operations/force_release_op.hpp"

#include "core/tally.hpp"

#include "redlock/error.hpp"

#include <boost/asio/post.hpp>

namespace redlock::detail {

namespace {

/// force_release.lua answers how many keys it deleted: none is a refusal (nothing there).
classified classify_deleted(const node_reply& r, std::size_t keys) {
    if (r.error || !r.reply) {
        return {node_outcome::failed, r.error ? r.error : make_error_code(errc::connection_failed)};
    }
    if (r.reply->type == REDIS_REPLY_ERROR) {
        return {node_outcome::failed, make_error_code(errc::server_error)};
    }
    if (r.reply->type != REDIS_REPLY_INTEGER || r.reply->integer < 0 ||
        static_cast<unsigned long long>(r.reply->integer) > keys) {
        return {node_outcome::failed, make_error_code(errc::unexpected_reply)};
    }
    return {r.reply->integer > 0 ? node_outcome::granted : node_outcome::refused, {}};
}

} // namespace

force_release_op::force_release_op(std::shared_ptr<client_impl> impl, std::vector<std::string> keys,
                                   std::chrono::milliseconds timeout,
                                   completion<client::release_signature> done)
    : operation(std::move(impl))
    , keys_(std::move(keys))
    , timeout_(timeout)
    , completion_(std::move(done)) {}

void force_release_op::start() {
    if (impl_->shut_down()) {
        finish(errc::cancelled);
        return;
    }
    auto self = std::static_pointer_cast<force_release_op>(shared_from_this());
    completion_.on_cancellation([strand = impl_->strand(), weak = std::weak_ptr(self)] {
        boost::asio::post(strand, [weak] {
            if (auto op = weak.lock()) {
                op->cancel();
            }
        });
    });
    impl_->note_node_timeout(timeout_);
    const auto now = this->now();
    begin_round(now);
    arm_timer(now + timeout_);
    // As EVAL: an operator's one-off command, and no NOSCRIPT to resend.
    const auto cmd = script_call(force_release_script, true, {keys_}, {});
    for (std::size_t node = 0; node < impl_->node_count(); ++node) {
        send(node, cmd, {1, command_kind::script, node});
    }
}

void force_release_op::cancel() {
    // Client shutdown calls this through a plain pointer; the timer may own the op.
    const auto keep_alive = shared_from_this();
    finish(errc::cancelled);
}

void force_release_op::on_reply(std::uint64_t packed, const node_reply& reply) {
    if (completion_.done()) {
        return;
    }
    const auto tag = reply_tag::unpack(packed);
    const auto c = classify_deleted(reply, keys_.size());
    record_vote(tag.node, c, reply.message, now());
    answered_ += c.outcome == node_outcome::failed ? 0 : 1;
    deleted_on_ += c.outcome == node_outcome::granted ? 1 : 0;
    if (++replies_ == impl_->node_count()) {
        finish({});
    }
}

void force_release_op::on_timer() {
    record_timeouts(now());
    finish({});
}

void force_release_op::finish(std::error_code error) {
    if (completion_.done()) {
        return;
    }
    stop_timer();
    if (!error && answered_ < tally::quorum_of(impl_->node_count())) {
        error = make_error_code(errc::quorum_unreachable);
    }
    release_result result;
    result.released = deleted_on_;
    if (error) {
        result.message =
            error.message() + ": " + summary(deleted_on_, "deleted", "nothing to delete");
    } else if (answered_ < impl_->node_count()) {
        result.message = summary(deleted_on_, "deleted", "nothing to delete");
    }
    result.votes = take_votes();
    completion_.complete(error, std::move(result));
}

} // namespace redlock::detail
