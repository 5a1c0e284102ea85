#include "operations/renewal_runner.hpp"

#include "core/recreate_where.hpp"
#include "operations/extend_release_traits.hpp"
#include "operations/round_op.hpp"
#include "runtime/lock_access.hpp"

#include <boost/asio/post.hpp>

namespace redlock::detail {

namespace {

/// Whether the round may have written or extended the key on the vote's node: everything but
/// a sure no (the script answered 0, or failed with nothing written). A grant that did not
/// count (a veto only ever discounts a grant: operation::apply_quarantine) wrote it, and a
/// node in its restart quarantine must not get it written back at every renewal while its
/// votes do not count; a lost or late reply may have written it too, but only where the
/// round asked for a write-back (`rewrote`): an extend cannot bring back a missing key, and
/// one that failed unsent (a reconnect backing off after the restart) confirms nothing, or
/// the write-back that restart calls for would never come. A node that forgets after this
/// round is seen again by its restart_seen_at.
bool may_have_landed(const node_vote& vote, bool rewrote) {
    if (vote.outcome == node_outcome::granted) {
        return true;
    }
    if (vote.outcome == node_outcome::refused || vote.error == errc::server_error ||
        vote.error == errc::unexpected_reply) {
        return false;
    }
    const bool unanswered = vote.outcome == node_outcome::pending ||
                            vote.error == errc::connection_failed ||
                            vote.error == errc::node_timeout || vote.error == errc::cancelled ||
                            vote.error == errc::node_backlogged;
    return !unanswered || rewrote; // else a veto: the node granted
}

} // namespace

renewal_runner::renewal_runner(std::shared_ptr<client_impl> impl,
                               std::shared_ptr<watchdog_state> state, renewal_options options)
    : impl_(std::move(impl))
    , state_(std::move(state))
    , fsm_(state_->held.options().ttl, renewal_fsm::resolve(state_->held.options().ttl, options),
           clock::time_point(clock::duration(state_->valid_until.load()))) {
    impl_->register_operation(this);
    if (!fsm_.options().recreate_missing) {
        return; // nothing reads what landed where
    }
    confirmed_at_.resize(impl_->node_count());
    // valid_until = the granting attempt's start + ttl - drift: that start is when the
    // acquire's SETs were sent. Not earlier: a SET held back for a reconnect that found a
    // restart was sent after the break (restart_seen_at) and reached the new server.
    const auto& held = state_->held.options();
    confirm_landed({}, {}, fsm_.valid_until() - held.ttl + drift(held));
}

renewal_runner::~renewal_runner() {
    impl_->unregister_operation(this);
}

void renewal_runner::start() {
    if (impl_->shut_down()) {
        cancel();
        return;
    }
    act(fsm_.start(impl_->now()));
}

void renewal_runner::act(const renewal_action& action) {
    switch (action.what) {
    case renewal_action::kind::none:
        return;
    case renewal_action::kind::wait_until:
        wait_until(action.at);
        return;
    case renewal_action::kind::extend:
        // The deadline stays armed while the round is in flight: loss never waits for it.
        wait_until(action.at);
        extend();
        return;
    case renewal_action::kind::lost:
        declare_lost(action.error);
        return;
    case renewal_action::kind::stopped:
        finish_stop();
        return;
    }
}

void renewal_runner::wait_until(clock::time_point at) {
    cancel_wait();
    // Once over (stopped, lost, shut down) nothing waits: an entry would hold this
    // runner, and through it the client, for good.
    if (!over_ && !impl_->shut_down()) {
        waiting_ = impl_->timers().schedule(at, shared_from_this());
    }
}

void renewal_runner::on_due() {
    waiting_.reset();
    act(fsm_.on_timer(impl_->now()));
}

void renewal_runner::cancel_wait() {
    if (waiting_) {
        impl_->timers().cancel(*std::exchange(waiting_, std::nullopt));
    }
}

void renewal_runner::extend() {
    auto self = shared_from_this();
    auto held = lock_access::with_validity(state_->held, fsm_.valid_until());
    const auto sent = impl_->now();
    std::vector<bool> recreate;
    if (fsm_.options().recreate_missing) {
        std::vector<std::optional<clock::time_point>> restarted_at;
        for (std::size_t node = 0; node < impl_->node_count(); ++node) {
            restarted_at.push_back(impl_->node(node).restart_seen_at());
        }
        recreate = recreate_where(restarted_at, confirmed_at_);
    }
    auto on_done = [self, sent, rewrote = recreate](std::error_code ec, extend_result r) {
        if (self->fsm_.options().recreate_missing) {
            self->confirm_landed(r.votes, rewrote, sent);
        }
        if (auto* m = self->impl_->metrics()) {
            m->on_renewal(ec);
        }
        if (ec) {
            self->impl_->log(log_level::warning,
                             "renewal of " + self->state_->held.key() +
                                 (self->state_->held.keys().size() > 1 ? " (and more keys)" : "") +
                                 " failed: " + r.message);
        }
        const auto before = self->fsm_.valid_until();
        const auto next = self->fsm_.on_extended(ec, r.lock.valid_until(), self->impl_->now());
        if (self->fsm_.valid_until() != before) {
            // Adopted: only a renewal the fsm accepted moves what the holder sees.
            self->state_->renewals.fetch_add(1);
            self->state_->valid_until.store(self->fsm_.valid_until().time_since_epoch().count());
        }
        self->act(next);
    };
    completion<client::extend_signature> done(
        boost::asio::any_completion_handler<client::extend_signature>(
            boost::asio::bind_executor(impl_->strand(), std::move(on_done))),
        impl_->strand());
    const auto ttl = held.options().ttl;
    auto round = std::make_shared<round_op<extend_traits>>(impl_, std::move(held), ttl,
                                                           std::move(done), std::move(recreate));
    in_flight_ = round;
    round->start();
}

void renewal_runner::confirm_landed(const std::vector<node_vote>& votes,
                                    const std::vector<bool>& rewrote, clock::time_point sent) {
    for (std::size_t node = 0; node < confirmed_at_.size(); ++node) {
        const bool landed =
            votes.empty() || (node < votes.size() &&
                              may_have_landed(votes[node], node < rewrote.size() && rewrote[node]));
        if (!landed) {
            continue;
        }
        // A restart placed after the round's start (restart_seen_at: the break before the
        // connection that found it) counts as confirmed too: the round's command went before
        // the break (then only the write-back is missed, never a forced release undone), or
        // it is a resend (EVAL after NOSCRIPT) sent after the break, to the new server.
        const auto restarted = impl_->node(node).restart_seen_at();
        confirmed_at_[node] = restarted && *restarted > sent ? *restarted : sent;
    }
}

void renewal_runner::declare_lost(std::error_code why) {
    over_ = true;
    cancel_wait();
    // A round still in flight ends now: nothing it says can count, and none of its commands
    // may be sent again behind the release that follows.
    if (auto round = std::exchange(in_flight_, {}).lock()) {
        round->cancel();
    }
    state_->lost.store(true);
    impl_->log(log_level::error, "lock " + state_->held.key() +
                                     (state_->held.keys().size() > 1 ? " (and more keys)" : "") +
                                     " lost: " + why.message());
    if (auto* m = impl_->metrics()) {
        m->on_lock_lost(why);
    }
    if (state_->on_loss) {
        // Posted: a holder's handler that throws must not unwind through this runner.
        boost::asio::post(impl_->strand(), [state = state_, why] { state->on_loss(why); });
    }
    finish_stop();
}

void renewal_runner::cancel() {
    if (over_) {
        return;
    }
    // Client shutdown calls this through a plain pointer, and the runner may be owned only by
    // the timer entry that declaring the loss cancels.
    const auto keep_alive = shared_from_this();
    fsm_.on_stop(impl_->now());
    declare_lost(make_error_code(errc::cancelled));
}

void renewal_runner::stop(boost::asio::any_completion_handler<void()> done) {
    stop_waiters_.emplace_back(std::move(done), impl_->strand());
    if (over_) {
        finish_stop();
        return;
    }
    cancel_wait();
    act(fsm_.on_stop(impl_->now()));
}

void renewal_runner::finish_stop() {
    over_ = true;
    cancel_wait();
    for (auto& waiter : std::exchange(stop_waiters_, {})) {
        waiter.complete();
    }
}

} // namespace redlock::detail
