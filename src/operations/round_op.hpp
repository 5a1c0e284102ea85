#ifndef REDLOCK_SRC_ROUND_OP_HPP
#define REDLOCK_SRC_ROUND_OP_HPP

#include "core/failure_cause.hpp"
#include "core/round_action.hpp"
#include "operations/completion.hpp"
#include "operations/operation.hpp"

#include "redlock/lock.hpp"

namespace redlock::detail {

/// A one-round script operation on a held lock (extend, release): sends the script to
/// every node, falls back on EVAL after NOSCRIPT, and feeds the votes to `Fsm`.
/// `Traits` supplies the script, its extra argument, the fsm calls and the result.
/// An fsm that completes the operation before every node answered (`decided`, a release at
/// quorum) keeps the op listening until it `settled`: the late votes still reach the fsm,
/// the metrics observer and the log, though no longer the result.
template <typename Traits>
class round_op final : public operation {
public:
    using signature = typename Traits::signature;

    /// `recreate`: extend only, the nodes where a missing key is re-created (one flag per
    /// node; empty for none). See renewal_runner for which nodes those are.
    round_op(std::shared_ptr<client_impl> impl, lock held, std::chrono::milliseconds ttl,
             completion<signature> done, std::vector<bool> recreate = {})
        : operation(std::move(impl))
        , held_(std::move(held))
        , ttl_(ttl)
        , recreate_(recreate)
        , ttl_text_(std::to_string(ttl.count()))
        , kind_text_(kind_argument(held_.options()))
        , announcement_(Traits::sends_ttl ? std::string() : announcement_text(impl_->next_random()))
        , fsm_(Traits::make_fsm(impl_->node_count(), held_, ttl))
        , completion_(std::move(done)) {
        Traits::attach(*impl_, held_);
    }

    ~round_op() override { Traits::detach(*impl_, held_); }

    /// A release's: what its nodes publish where they removed something of ours.
    const std::string& announcement() const noexcept { return announcement_; }

    void start() {
        if (impl_->shut_down()) {
            settle();
            finish(errc::cancelled);
            return;
        }
        auto self = std::static_pointer_cast<round_op>(shared_from_this());
        completion_.on_cancellation([strand = impl_->strand(), weak = std::weak_ptr(self)] {
            boost::asio::post(strand, [weak] {
                if (auto op = weak.lock()) {
                    op->cancel();
                }
            });
        });
        auto in_use = held_.options();
        // An extend (a renewal too) may set keys to outlive every acquire's ttl: a node
        // restarting empty must stay quarantined for as long as they would have lived.
        in_use.ttl = ttl_;
        impl_->note_options(in_use);
        Traits::starting(*impl_, held_);
        started_at_ = now();
        act(Traits::start(fsm_, started_at_, held_));
    }

    void cancel() override {
        // Client shutdown calls this through a plain pointer: finishing lets go of the timer,
        // which may own the op.
        const auto keep_alive = shared_from_this();
        act(fsm_.on_cancel());
    }

    void on_reply(std::uint64_t packed, const node_reply& reply) override {
        // One reading of the clock for the reply: the deadline check and the vote must agree.
        const auto now = this->now();
        if constexpr (Traits::late_replies_are_timeouts) {
            run_overdue_timer(now);
        }
        auto tag = reply_tag::unpack(packed);
        const auto c = classify_script_reply(reply);
        // After close() nothing is sent again: the links refuse new commands, and an extend
        // would renew a lock whose holder has already been told it is gone.
        if (c.noscript && !tag.resent && !impl_->shut_down() &&
            Traits::may_resend(*impl_, fsm_, held_, completion_.done(), succeeded_, now)) {
            // Nothing ran (SCRIPT FLUSH since the connection loaded it): the same call as EVAL.
            tag.resent = true;
            send(tag.node, call(true, recreates(tag.node)), tag);
            return;
        }
        if (settled_) {
            return;
        }
        std::string message(reply.message);
        const auto counted =
            Traits::quarantine_applies ? apply_quarantine(tag.node, c, now, message) : c;
        record_vote(tag.node, counted, message, now);
        if (completion_.done()) {
            report_late(tag.node, counted.outcome, counted.error, message);
        }
        act(Traits::on_reply(fsm_, tag.node, counted.outcome, now));
    }

private:
    bool recreates(std::size_t node) const { return node < recreate_.size() && recreate_[node]; }

    command call(bool as_eval, bool recreate) const {
        if (!Traits::sends_ttl) {
            return script_call(Traits::to_run(), as_eval, {held_.keys()},
                               {held_.token(), announcement_});
        }
        auto cmd = script_call(Traits::to_run(), as_eval, {held_.keys()},
                               {held_.token(), ttl_text_, recreate ? "1" : "0", kind_text_});
        // The node's TTL ceiling must cover the new ttl before the vote counts (ceiling_link).
        cmd.sets_ttl = ttl_;
        return cmd;
    }

    void on_timer() override {
        const auto now = this->now();
        if (completion_.done()) {
            for (std::size_t node = 0; node < impl_->node_count(); ++node) {
                if (!has_vote(node)) {
                    report_late(node, node_outcome::failed, errc::node_timeout, {});
                }
            }
        }
        record_timeouts(now);
        act(Traits::on_deadline(fsm_, now));
    }

    void act(const round_action& action) {
        switch (action.what) {
        case round_action::kind::send: {
            const auto now = this->now();
            begin_round(now);
            arm_timer(action.at);
            const auto keep = call(false, false);
            const auto recreate = call(false, true);
            for (std::size_t node = 0; node < impl_->node_count(); ++node) {
                send(node, recreates(node) ? recreate : keep, {1, command_kind::script, node});
            }
            return;
        }
        case round_action::kind::done:
            settle();
            finish(action.error);
            return;
        case round_action::kind::decided:
            finish(action.error);
            return;
        case round_action::kind::settled:
            settle();
            return;
        case round_action::kind::wait:
            return;
        }
    }

    /// Nothing is awaited any more: later replies are ignored, and the timer lets go.
    void settle() {
        settled_ = true;
        stop_timer();
    }

    /// A vote that came in after the operation completed: the result has gone, so the metrics
    /// observer (through record_vote) and the log are where it is told.
    void report_late(std::size_t node, node_outcome outcome, std::error_code error,
                     std::string_view message) {
        if (outcome == node_outcome::granted) {
            return;
        }
        const auto& where = impl_->node(node).address().display();
        if (outcome == node_outcome::refused) {
            // Expired or deleted there already: nothing is left behind.
            impl_->log(log_level::debug, std::string(Traits::name) + " of " + held_.key() +
                                             ": late answer from " + where + ": " +
                                             std::string(Traits::refusal));
            return;
        }
        impl_->log(log_level::warning,
                   std::string(Traits::name) + " of " + held_.key() + " on " + where +
                       " failed after the operation completed: " + error.message() +
                       (message.empty() ? "" : " (" + std::string(message) + ")") +
                       "; the key may stay there until its TTL");
    }

    void finish(std::error_code error) {
        if (completion_.done()) {
            return;
        }
        error = failure_cause(error, votes());
        succeeded_ = !error;
        auto result = Traits::result(fsm_, held_, ttl_);
        if (error) {
            result.message = error.message() + ": " +
                             summary(fsm_.votes().granted(), Traits::done, Traits::refusal);
        }
        // Nodes still awaited stay `pending` in the result; their votes are still recorded.
        result.votes = settled_ ? take_votes() : votes();
        if (auto* m = impl_->metrics()) {
            const auto at = now();
            Traits::observe(*impl_, *m, error, held_, result, at);
            // Not started (shut down before): a span of no time.
            const auto took =
                started_at_ == clock::time_point{} ? clock::duration{} : at - started_at_;
            report_span(*m, Traits::name, {held_.keys(), held_.options().mode}, took, error, 1,
                        fsm_.votes().granted());
        }
        completion_.complete(error, std::move(result));
    }

    lock held_;
    clock::time_point started_at_{};
    std::chrono::milliseconds ttl_;
    std::vector<bool> recreate_;
    std::string ttl_text_;
    std::string kind_text_;
    std::string announcement_;
    typename Traits::fsm fsm_;
    completion<signature> completion_;
    bool succeeded_ = false;
    bool settled_ = false;
};

} // namespace redlock::detail

#endif
