#include "transport/ceiling_link.hpp"

#include "transport/commands.hpp"

#include "redlock/error.hpp"

#include <string>

namespace redlock::detail {

struct ceiling_link::shared {
    shared(std::string key, ceiling_terms terms)
        : key(std::move(key))
        , cover(terms) {}
    std::string key;
    ceiling_cover cover;
};

namespace {

/// Takes the raise's reply to the cover.
class raise_target final : public reply_target {
public:
    raise_target(std::shared_ptr<void> owner, ceiling_cover& cover,
                 std::shared_ptr<ceiling_raise> raise)
        : owner_(std::move(owner))
        , cover_(cover)
        , raise_(std::move(raise)) {}

    void on_reply(std::uint64_t, const node_reply& reply) override {
        const bool ok = !reply.error && reply.reply && reply.reply->type == REDIS_REPLY_INTEGER &&
                        reply.reply->integer == 1;
        std::string why(reply.message);
        if (!reply.error && reply.reply && reply.reply->type != REDIS_REPLY_ERROR && !ok) {
            why = "unexpected reply";
            raise_->unexpected = true;
        }
        cover_.raise_answered(raise_, ok, std::move(why));
    }

private:
    std::shared_ptr<void> owner_; // keeps cover_ alive
    ceiling_cover& cover_;
    std::shared_ptr<ceiling_raise> raise_;
};

/// Passes a covered command's reply on, or a failure when its raise was refused. The raise
/// was sent first on the same connection, so its reply has come by then.
class covered_target final : public reply_target {
public:
    covered_target(std::shared_ptr<reply_target> target, std::shared_ptr<ceiling_raise> raise,
                   const std::string& key)
        : target_(std::move(target))
        , raise_(std::move(raise))
        , key_(key) {}

    void on_reply(std::uint64_t tag, const node_reply& reply) override {
        // Only a grant needs the ceiling: a refusal (nil, 0) or an error reply is passed on
        // as it is (a REDLOCK_MISMATCH must stay one).
        const auto* r = reply.reply;
        const bool may_grant = r && r->type != REDIS_REPLY_ERROR && r->type != REDIS_REPLY_NIL &&
                               !(r->type == REDIS_REPLY_INTEGER && r->integer == 0);
        if (!may_grant || ceiling_cover::vote_counts(raise_.get())) {
            target_->on_reply(tag, reply);
            return;
        }
        // The command may have set its key: the vote fails, and the operation's cleanup
        // treats it as any failed vote.
        const std::string message =
            "TTL ceiling " + key_ + " not raised (" +
            (raise_->refusal.empty() ? std::string("no answer") : raise_->refusal) +
            "): the vote does not count; the node's ACL must allow that key "
            "(quarantine_options::node_key_prefix)";
        const auto error = raise_->unexpected ? errc::unexpected_reply : errc::server_error;
        target_->on_reply(tag, node_reply{make_error_code(error), nullptr, message});
    }

private:
    std::shared_ptr<reply_target> target_;
    std::shared_ptr<ceiling_raise> raise_;
    std::string key_;
};

} // namespace

ceiling_link::ceiling_link(std::unique_ptr<node_link> inner, std::string ceiling_key,
                           ceiling_terms terms, std::function<clock::time_point()> now)
    : forwarding_link(std::move(inner))
    , shared_(std::make_shared<shared>(std::move(ceiling_key), terms))
    , now_(std::move(now)) {}

void ceiling_link::set_terms(const ceiling_terms& terms) {
    shared_->cover.set_terms(terms);
}

void ceiling_link::send(const command& cmd, const std::shared_ptr<reply_target>& target,
                        std::uint64_t tag) {
    if (cmd.sets_ttl.count() <= 0) {
        inner_->send(cmd, target, tag);
        return;
    }
    auto plan = shared_->cover.cover(cmd.sets_ttl, now_(), inner_->connection_generation());
    if (plan.raise) {
        const auto ttl_text = std::to_string(plan.raise->ttl.count());
        const auto keep_text = std::to_string(ceiling_keep(shared_->cover.terms()).count());
        inner_->send(ceiling_raise_call(shared_->key, ttl_text, keep_text),
                     std::make_shared<raise_target>(shared_, shared_->cover, plan.raise), 0);
    }
    if (!plan.covered_by) {
        inner_->send(cmd, target, tag);
        return;
    }
    inner_->send(cmd, std::make_shared<covered_target>(target, plan.covered_by, shared_->key), tag);
}

} // namespace redlock::detail
