#include "operations/inspect_op.hpp"

#include "redlock/error.hpp"

#include <boost/asio/post.hpp>

#include <algorithm>
#include <charconv>
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
        message = std::string(r.message); // printable, and without the secrets
        return make_error_code(errc::server_error);
    }
    return {};
}

/// A decimal integer, all of `text`.
bool decimal(std::string_view text, std::int64_t& value) {
    const auto* end = text.data() + text.size();
    const auto [at, ec] = std::from_chars(text.data(), end, value);
    return ec == std::errc() && at == end && !text.empty();
}

bool decimal(const redisReply* r, std::int64_t& value) {
    return r->type == REDIS_REPLY_STRING && decimal(std::string_view(r->str, r->len), value);
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
    , got_pttl_(impl_->node_count(), false)
    , not_a_string_(impl_->node_count(), false)
    , fields_(impl_->node_count())
    , node_time_ms_(impl_->node_count())
    , holders_error_(impl_->node_count())
    , holders_failure_(impl_->node_count())
    , time_failure_(impl_->node_count())
    , hash_replies_(impl_->node_count(), 0) {
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
    const command get{{"GET", key_}};
    const command pttl{{"PTTL", key_}};
    const command hgetall{{"HGETALL", key_}};
    const command time{{"TIME"}};
    sent_at_ = now();
    for (std::size_t node = 0; node < impl_->node_count(); ++node) {
        send(node, get, {0, command_kind::inspect_value, node});
        send(node, pttl, {0, command_kind::inspect_pttl, node});
        send(node, hgetall, {0, command_kind::inspect_holders, node});
        send(node, time, {0, command_kind::inspect_time, node});
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
    if (tag.attempt == 1) {
        // The PING behind the ceiling reads: the figure shown is the one the reads give.
        if (++sync_replies_ == result_.nodes.size()) {
            finish({});
        }
        return;
    }
    const auto node = tag.node;
    auto& view = result_.nodes[node];
    switch (tag.kind) {
    case command_kind::inspect_value:
        got_value_[node] = true;
        view.latency = std::chrono::duration_cast<std::chrono::microseconds>(now() - sent_at_);
        view.error = failure_of(reply, view.message);
        if (view.error == errc::server_error && view.message.starts_with("WRONGTYPE")) {
            // Readers or a semaphore's holders (a hash), or no lock at all: HGETALL tells.
            not_a_string_[node] = true;
            view.error.clear();
            view.message.clear();
        } else if (!view.error) {
            if (reply.reply->type == REDIS_REPLY_STRING) {
                view.holder.emplace(reply.reply->str, reply.reply->len);
            } else if (reply.reply->type != REDIS_REPLY_NIL) {
                view.error = make_error_code(errc::unexpected_reply);
                view.message = "unexpected reply to GET";
            }
        }
        break;
    case command_kind::inspect_pttl:
        got_pttl_[node] = true;
        view.pttl_error = failure_of(reply, view.pttl_message);
        if (!view.pttl_error) {
            if (reply.reply->type == REDIS_REPLY_INTEGER) {
                view.pttl = std::chrono::milliseconds(reply.reply->integer);
            } else {
                view.pttl_error = make_error_code(errc::unexpected_reply);
                view.pttl_message = "unexpected reply to PTTL";
            }
        }
        break;
    case command_kind::inspect_holders:
        read_fields(reply, node);
        break;
    default:
        read_time(reply, node);
        break;
    }
    if (tag.kind != command_kind::inspect_pttl && ++hash_replies_[node] == 3) {
        read_holders(node);
    }
    if (++replies_ == 4 * result_.nodes.size()) {
        wait_for_ceilings_or_finish();
    }
}

void inspect_op::wait_for_ceilings_or_finish() {
    // What `redlock status` shows is the quarantine a vote meets now: a node quarantined
    // a moment ago has its ceilings read from the others right here (quarantine_left), and
    // the learned figure is known once they answer.
    const auto now = this->now();
    for (std::size_t node = 0; node < result_.nodes.size() && !syncing_; ++node) {
        syncing_ = impl_->quarantine_left(node, now) && impl_->ceiling_reads_unanswered(node);
    }
    if (!syncing_) {
        finish({});
        return;
    }
    const command ping{{"PING"}};
    for (std::size_t node = 0; node < result_.nodes.size(); ++node) {
        send(node, ping, {1, command_kind::inspect_time, node});
    }
}

void inspect_op::read_fields(const node_reply& reply, std::size_t node) {
    std::string message;
    if (const auto error = failure_of(reply, message)) {
        holders_failure_[node] = "HGETALL: " + message;
        holders_error_[node] =
            message.starts_with("WRONGTYPE") ? make_error_code(errc::lock_mismatch) : error;
        return;
    }
    const auto* r = reply.reply;
    if (r->type != REDIS_REPLY_ARRAY || r->elements % 2 != 0) {
        holders_failure_[node] = "unexpected reply to HGETALL";
        holders_error_[node] = make_error_code(errc::unexpected_reply);
        return;
    }
    for (std::size_t i = 0; i < r->elements; i += 2) {
        const auto* field = r->element[i];
        const auto* value = r->element[i + 1];
        if (field->type != REDIS_REPLY_STRING || value->type != REDIS_REPLY_STRING) {
            holders_failure_[node] = "unexpected reply to HGETALL";
            holders_error_[node] = make_error_code(errc::unexpected_reply);
            fields_[node].clear();
            return;
        }
        fields_[node].emplace_back(std::string(field->str, field->len),
                                   std::string(value->str, value->len));
    }
}

void inspect_op::read_time(const node_reply& reply, std::size_t node) {
    std::string message;
    if (failure_of(reply, message)) {
        time_failure_[node] = "TIME: " + message;
        return;
    }
    const auto* r = reply.reply;
    std::int64_t seconds = 0;
    std::int64_t micros = 0;
    // Bounded, so that no arithmetic on them can overflow whatever a node sends.
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 || !decimal(r->element[0], seconds) ||
        !decimal(r->element[1], micros) || seconds < 0 || seconds > 100'000'000'000 || micros < 0 ||
        micros >= 1'000'000) {
        time_failure_[node] = "unexpected reply to TIME";
        return;
    }
    node_time_ms_[node] = seconds * 1000 + micros / 1000;
}

void inspect_op::read_holders(std::size_t node) {
    auto& view = result_.nodes[node];
    if (!not_a_string_[node] || view.error) {
        return;
    }
    const auto mismatch = [&](std::string why) {
        view.error = make_error_code(errc::lock_mismatch);
        view.message = std::move(why);
    };
    if (holders_error_[node]) {
        view.error = holders_error_[node];
        view.message = holders_error_[node] == errc::lock_mismatch
                           ? "the key holds a value that is no lock (neither a string nor a hash)"
                           : holders_failure_[node];
        return;
    }
    const auto& fields = fields_[node];
    const auto mode =
        std::find_if(fields.begin(), fields.end(), [](const auto& f) { return f.first == "mode"; });
    if (fields.empty()) {
        return; // expired between GET and HGETALL: nothing there now
    }
    if (mode == fields.end()) {
        mismatch("the key is a hash without a lock's mode field: no lock of this library");
        return;
    }
    std::int64_t permits = 0;
    if (mode->second == "shared") {
        view.mode = lock_mode::shared;
    } else if (decimal(mode->second, permits) && permits > 0 && permits <= max_permits) {
        view.mode = lock_mode::permit;
        view.permits = static_cast<unsigned>(permits);
    } else {
        mismatch("the key's mode field is neither shared nor a permit count");
        return;
    }
    if (!node_time_ms_[node]) {
        view.error = make_error_code(errc::server_error);
        view.message = time_failure_[node] + " (needed to tell the holders' time left)";
        return;
    }
    const auto now = *node_time_ms_[node];
    for (const auto& [field, value] : fields) {
        std::int64_t deadline = 0;
        if (field == "mode") {
            continue;
        }
        // As the scripts read them: up to 15 digits, anything else is no deadline of ours.
        if (value.size() > 15 || !decimal(value, deadline) || deadline < 0) {
            mismatch("holder " + field + " has no deadline but \"" + value + "\"");
            return;
        }
        const std::chrono::milliseconds left(deadline - now);
        if (field == "writer_waiting") {
            if (left.count() > 0) {
                view.writer_waiting = left;
            }
            continue;
        }
        view.holders.push_back({field, left});
    }
}

void inspect_op::on_timer() {
    for (std::size_t node = 0; node < result_.nodes.size(); ++node) {
        auto& view = result_.nodes[node];
        if (got_value_[node] && not_a_string_[node] && hash_replies_[node] < 3) {
            view.error = make_error_code(errc::node_timeout);
            view.message =
                "no answer to HGETALL and TIME within " + std::to_string(timeout_.count()) + " ms";
        }
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
        view.quarantine_basis = impl_->quarantine_basis(view.node);
        if (view.quarantined_for) {
            view.quarantine_cause = impl_->quarantine_cause(view.node);
        }
        view.restarts_undetectable = std::string(link.restarts_undetectable());
        view.can_evict = std::string(link.eviction_risk());
        view.not_primary = std::string(link.not_primary());
    }
    completion_.complete(std::error_code(), std::move(result_));
}

} // namespace redlock::detail
