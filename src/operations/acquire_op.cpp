#include "operations/acquire_op.hpp"

#include "core/backoff.hpp"
#include "core/failure_cause.hpp"
#include "core/link_gate.hpp"

#include "redlock/error.hpp"
#include "redlock/fencing.hpp"

#include <algorithm>

namespace redlock::detail {

namespace {

/// Half the life of a writer's mark: the longest from one sleep's start to the next (a
/// backoff, the wait for links of up to connect_timeout, then an attempt, a fence raise and
/// a cleanup of up to a node_timeout each).
std::chrono::milliseconds mark_half_life(const lock_options& options,
                                         std::chrono::milliseconds connect_timeout) {
    return options.retry.backoff_max + connect_timeout + 3 * options.node_timeout;
}

std::vector<std::string> counters_of(const std::vector<std::string>& keys) {
    std::vector<std::string> counters;
    counters.reserve(keys.size());
    for (const auto& key : keys) {
        counters.push_back(fencing_counter_key(key));
    }
    return counters;
}

/// release_listener::wanted(): the keys in sorted order, each with its length in front, so
/// that no two different sets read alike whatever bytes the keys hold.
std::string wanted_of(std::vector<std::string> keys) {
    std::sort(keys.begin(), keys.end());
    std::string wanted;
    for (const auto& key : keys) {
        wanted.append(std::to_string(key.size())).append(":").append(key);
    }
    return wanted;
}

} // namespace

acquire_op::acquire_op(std::shared_ptr<client_impl> impl, std::vector<std::string> keys,
                       lock_options options, completion<client::acquire_signature> done)
    : operation(std::move(impl))
    , keys_(std::move(keys))
    , wanted_(wanted_of(keys_))
    , ttl_text_(std::to_string(options.ttl.count()))
    , kind_text_(kind_argument(options))
    , mark_ttl_text_(
          std::to_string((2 * mark_half_life(options, impl_->config().connect_timeout)).count()))
    , counter_keys_(options.fencing ? counters_of(keys_) : std::vector<std::string>())
    , options_(std::move(options))
    , fsm_(
          impl_->node_count(), options_, [impl = impl_.get()] { return impl->next_random(); },
          options_.fencing ? acquire_fsm::floor_source([this] { return fence_floor(); })
                           : acquire_fsm::floor_source())
    , completion_(std::move(done)) {}

std::uint64_t acquire_op::fence_floor() const {
    std::uint64_t floor = 0;
    for (const auto& key : keys_) {
        floor = std::max(floor, impl_->fences().floor(key));
    }
    return floor;
}

std::string acquire_op::keys_text() const {
    std::string text;
    for (const auto& key : keys_) {
        text.append(text.empty() ? "" : " ").append(key);
    }
    return text;
}

acquire_op::~acquire_op() {
    stop_waiting_for_links();
    if (queued_) {
        impl_->releases().unwatch(watched_key(), this);
    }
}

void acquire_op::start() {
    if (impl_->shut_down()) {
        finish(errc::cancelled);
        return;
    }
    auto self = std::static_pointer_cast<acquire_op>(shared_from_this());
    completion_.on_cancellation([strand = impl_->strand(), weak = std::weak_ptr(self)] {
        boost::asio::post(strand, [weak] {
            if (auto op = weak.lock()) {
                op->cancel();
            }
        });
    });
    impl_->note_options(options_);
    if (options_.retry.wake_on_release && options_.mode == lock_mode::exclusive) {
        // Queued from its call, not from a first refusal, nor from the end of its wait for
        // connections (a later call with a shorter wait budget would begin first): another
        // acquire of this client for the same keys called later waits behind it, so that
        // they are served in the order they were called.
        impl_->releases().join(watched_key(), this);
        queued_ = true;
    }
    if (!wait_for_links()) {
        begin();
    }
}

bool acquire_op::wait_for_links() {
    // Links not used yet, or idle again after a failure's backoff, connect now (a SET would
    // make them), so that they count as on their way.
    impl_->warm_up_links();
    // Never past the wait budget: no attempt may start later than that after the call.
    auto until = now() + impl_->config().connect_timeout;
    if (options_.retry.wait_budget.count() != 0) {
        until = std::min(until, called_at_ + options_.retry.wait_budget);
    }
    if (links_allow_an_attempt() || until <= now()) {
        return false;
    }
    waiting_for_links_ = true;
    impl_->link_waiters().watch(this);
    arm_timer(until);
    return true;
}

bool acquire_op::links_allow_an_attempt() const {
    const auto [ready, connecting] = impl_->links_ready_and_connecting();
    return attempt_may_go(ready, connecting, tally::quorum_of(impl_->node_count()));
}

void acquire_op::stop_waiting_for_links() {
    if (waiting_for_links_) {
        waiting_for_links_ = false;
        impl_->link_waiters().unwatch(this);
    }
}

void acquire_op::on_links_changed() {
    if (!waiting_for_links_ || !links_allow_an_attempt()) {
        return;
    }
    // The wait's timer may be all that owns this operation, and the attempt re-arms it.
    const auto keep_alive = shared_from_this();
    links_waited_for();
}

void acquire_op::links_waited_for() {
    stop_waiting_for_links();
    if (!started_) {
        begin();
        return;
    }
    retry();
}

void acquire_op::begin() {
    started_ = true;
    auto& releases = impl_->releases();
    // An exclusive acquire queued at its call waits behind those called before it (not
    // behind later ones that queued while it waited for connections); another one, behind
    // whoever waits.
    const bool behind = queued_ ? releases.position(watched_key(), this) > 0
                                : releases.queued_like(watched_key(), this);
    if (options_.retry.wake_on_release && behind) {
        // Others of this client wait for the same keys: this one queues behind them, under
        // their subscriptions, rather than send SETs that would be refused while they wait.
        // (One that waits for other keys too, a and b, may be waiting for b while a is free.)
        watch_releases();
        act(fsm_.start_behind_waiters(now(), called_at_, releases.position(watched_key(), this)));
        return;
    }
    act(fsm_.start(now(), called_at_));
}

void acquire_op::cancel() {
    // Client shutdown calls this through a plain pointer; sleeping between attempts, the op
    // is owned only by its timer, which finishing lets go of.
    const auto keep_alive = shared_from_this();
    act(fsm_.on_cancel(now()));
}

void acquire_op::act(const acquire_action& action) {
    switch (action.what) {
    case acquire_action::kind::send_set:
        sleeping_ = false;
        token_ = impl_->next_token();
        if (options_.mode == lock_mode::permit) {
            // The slot this holder asks for (lua/holders_acquire.lua): a random one first, then
            // the next one on every retry, so that a waiter walks every slot.
            slot_ = fsm_.attempt() == 1
                        ? static_cast<unsigned>(impl_->next_random() % options_.permits)
                        : (slot_ + 1) % options_.permits;
            // Appended piecewise: `"/" + std::to_string(...)` makes GCC 12 at -O3 warn
            // -Wrestrict in std::string's own code (a false positive, GCC PR 105329), which
            // consumers building redlock as their subdirectory would see.
            token_.append("/").append(std::to_string(slot_));
        }
        begin_round(now());
        arm_timer(action.at);
        send_sets();
        return;
    case acquire_action::kind::send_raise:
        begin_round(now());
        arm_timer(action.at);
        send_raises();
        return;
    case acquire_action::kind::send_cleanup:
        arm_timer(action.at);
        send_cleanups();
        act(fsm_.on_cleanup_sent(now()));
        return;
    case acquire_action::kind::sleep:
        if (!sleeping_) {
            // The bound the options promise, worked out apart from the fsm: the simulation
            // checks the fsm's wakes against it.
            // A sleep deferred to older waiters of the client grows as a retry would.
            sleep_bound_ =
                now() + (fsm_.deferred()
                             ? std::max<clock::duration>(
                                   backoff_ceiling(fsm_.own_attempts() + fsm_.deferrals(),
                                                   options_.retry.backoff_initial,
                                                   options_.retry.backoff_max),
                                   std::chrono::milliseconds(1))
                             : backoff_ceiling(fsm_.own_attempts(), options_.retry.backoff_initial,
                                               options_.retry.backoff_max));
        }
        sleeping_ = true;
        arm_timer(action.at);
        send_writer_waiting_marks();
        impl_->observe_sleep(this, sleep_bound_);
        if (options_.retry.wake_on_release) {
            watch_releases();
        }
        if (fsm_.waking_early() && action.at <= now()) {
            // Woken at once (the oldest waiter, told of a release): the SETs go out in this
            // handler, so a release by this client carries them in its own write, right
            // behind its deletes (unless fewer than a quorum of its links are ready: then
            // they wait for them).
            wake();
        }
        return;
    case acquire_action::kind::done:
        finish(action.error);
        return;
    case acquire_action::kind::wait:
        return;
    }
}

void acquire_op::watch_releases() {
    auto& releases = impl_->releases();
    const bool first = !watching_;
    watching_ = true;
    queued_ = true;
    releases.watch(watched_key(), this);
    if (first) {
        // Subscriptions other waiters of the key already have are in force for this one too.
        for (std::size_t node = 0; node < impl_->node_count(); ++node) {
            if (releases.confirmed(watched_key(), node)) {
                on_subscribed(node, releases.position(watched_key(), this));
            }
        }
    }
}

void acquire_op::on_released(std::size_t node, std::size_t position) {
    act_on_handoff(fsm_.on_released(node, position, now()));
}

void acquire_op::on_released_everywhere(std::size_t position) {
    act_on_handoff(fsm_.on_released_everywhere(position, now()));
}

void acquire_op::on_subscribed(std::size_t node, std::size_t position) {
    act_on_handoff(fsm_.on_subscribed(node, position, now()));
}

void acquire_op::act_on_handoff(const acquire_action& action) {
    // Told by the client's queue, which holds no reference: a wake may finish this
    // operation, and finishing stops the timer that kept it alive (a close() cancelling
    // several waiters of one key in a chain freed one mid-finish).
    const auto keep_alive = shared_from_this();
    if (waiting_for_links_) {
        // Woken already: the next attempt waits only for its links now. The fsm has heard
        // the news; when to wake is no longer the question.
        return;
    }
    act(action);
}

void acquire_op::on_subscription_lost(std::size_t node) {
    fsm_.on_subscription_lost(node);
}

void acquire_op::on_local_grant(lock_mode winner) {
    // Holders that share the key (readers, a semaphore's permits) leave room for each other:
    // a neighbour's grant uses up the releases heard only where one of the two excludes the
    // other. Otherwise the waiters staggered behind the first reader would sleep their
    // backoff out while the key admits them.
    if (winner != lock_mode::exclusive && options_.mode != lock_mode::exclusive) {
        return;
    }
    act_on_handoff(fsm_.on_local_grant());
}

void acquire_op::on_moved_up(std::size_t position) {
    act_on_handoff(fsm_.on_moved_up(position, now()));
}

void acquire_op::on_nudged() {
    if (waiting_for_links_) {
        return; // woken already: its next attempt is its own
    }
    act_on_handoff(fsm_.on_nudged(now()));
}

void acquire_op::send_sets() {
    for (std::size_t node = 0; node < impl_->node_count(); ++node) {
        send_set(node, {fsm_.attempt(), command_kind::set, node}, false);
    }
}

void acquire_op::send_set(std::size_t node, reply_tag tag, bool as_eval) {
    command cmd;
    if (options_.mode != lock_mode::exclusive) {
        cmd = script_call(holders_acquire_script, as_eval, {keys_, counter_keys_},
                          {token_, ttl_text_, kind_text_});
    } else if (keys_.size() > 1 || options_.fencing) {
        cmd = script_call(acquire_script, as_eval, {keys_, counter_keys_},
                          {token_, ttl_text_, small_decimal(keys_.size())});
    } else {
        cmd = set_nx_px(keys_.front(), token_, ttl_text_);
    }
    // The node's TTL ceiling must cover the lock before its vote counts (ceiling_link).
    cmd.sets_ttl = options_.ttl;
    send(node, cmd, tag);
}

void acquire_op::send_raises() {
    fence_text_ = std::to_string(fsm_.fence_token());
    for (std::size_t node = 0; node < impl_->node_count(); ++node) {
        if (fsm_.needs_cleanup(node)) {
            send_raise(node, {fsm_.attempt(), command_kind::raise, node}, false);
        }
    }
}

void acquire_op::send_raise(std::size_t node, reply_tag tag, bool as_eval) {
    send(node,
         script_call(fence_raise_script, as_eval, {keys_, counter_keys_}, {token_, fence_text_}),
         tag);
}

void acquire_op::send_cleanups() {
    // As EVAL, never EVALSHA: a cleanup answered NOSCRIPT would have to be sent again, and
    // the copy would queue behind whatever was sent meanwhile. The script text costs a few
    // hundred bytes on the failure path only.
    const auto cmd = script_call(release_script, true, {keys_}, {token_});
    for (std::size_t node = 0; node < impl_->node_count(); ++node) {
        if (fsm_.needs_cleanup(node)) {
            send(node, cmd, {fsm_.attempt(), command_kind::cleanup, node});
        }
    }
}

void acquire_op::send_writer_waiting_marks() {
    // A writer refused where readers hold keeps new readers out there until it comes back,
    // so that a stream of overlapping readers cannot starve it (docs/safety.md). Marked from
    // the second refused attempt on: a writer that gets in at its first retry needed no
    // mark, and a plain lock's contention (where the script changes nothing) pays for marks
    // only once it waits for longer. EVALSHA without resend: a mark lost to NOSCRIPT only
    // lets readers go first once more.
    if (options_.mode != lock_mode::exclusive || keys_.size() != 1 || fsm_.attempt() < 2) {
        return;
    }
    // Renewed at half its life: what is left then lasts until the next sleep begins. Sent
    // on every refusal (or re-armed wake), it would only add commands to a contended key.
    const auto now = this->now();
    if (marked_at_ &&
        now - *marked_at_ < mark_half_life(options_, impl_->config().connect_timeout)) {
        return;
    }
    marked_at_ = now;
    const auto cmd = script_call(writer_waiting_script, false, {keys_}, {mark_ttl_text_});
    for (std::size_t node = 0; node < impl_->node_count(); ++node) {
        if (!fsm_.needs_cleanup(node)) {
            send(node, cmd, {fsm_.attempt(), command_kind::writer_waiting, node});
        }
    }
}

void acquire_op::wake() {
    if (!sleeping_) {
        return; // woken already, by an action acted on meanwhile
    }
    sleeping_ = false;
    impl_->observe_sleep(this, std::nullopt);
    if (impl_->shut_down()) {
        act(fsm_.on_cancel(now()));
        return;
    }
    // After an outage the links were backing off when the last attempt failed: the next one
    // waits for those connecting again, as the first did.
    if (!wait_for_links()) {
        retry();
    }
}

void acquire_op::retry() {
    if (auto* m = impl_->metrics()) {
        m->on_acquire_wake(fsm_.waking_early());
    }
    act(fsm_.on_wake(now()));
    if (fsm_.deferred()) {
        // Its backoff ran out behind older waiters of this client: the oldest polls for it.
        impl_->releases().nudge(watched_key(), this);
    }
}

void acquire_op::on_timer() {
    if (waiting_for_links_) {
        // The wait's bound: the attempt goes with the connections there are.
        links_waited_for();
        return;
    }
    if (sleeping_) {
        wake();
        return;
    }
    const auto now = this->now();
    if (!fsm_.finished()) {
        record_timeouts(now);
    }
    act(fsm_.on_deadline(now));
}

void acquire_op::on_reply(std::uint64_t packed, const node_reply& reply) {
    // One reading of the clock for the reply: the deadline check and the vote must agree.
    const auto now = this->now();
    run_overdue_timer(now);
    const auto tag = reply_tag::unpack(packed);
    if (tag.kind == command_kind::set) {
        on_set_reply(tag, reply, now);
    } else if (tag.kind == command_kind::refusal_ttl) {
        on_refusal_ttl_reply(tag, reply, now);
    } else if (tag.kind == command_kind::raise) {
        on_raise_reply(tag, reply, now);
    } else if (tag.kind == command_kind::cleanup) {
        on_cleanup_reply(tag, reply, now);
    }
    // A writer's mark needs no answer: it expires by itself, and a failed one only means
    // readers may go first once more.
}

void acquire_op::on_set_reply(reply_tag tag, const node_reply& reply, clock::time_point now) {
    const bool plain_set =
        options_.mode == lock_mode::exclusive && keys_.size() == 1 && !options_.fencing;
    const auto c = plain_set ? classify_set_reply(reply) : classify_acquire_script_reply(reply);
    const bool current = tag.attempt == fsm_.attempt() && fsm_.collecting_grants();
    if (c.noscript && current && !tag.resent) {
        // Nothing ran (restart, SCRIPT FLUSH). Resent only while the attempt is open: after
        // a decision the cleanup is already queued, and a SET must never overtake it.
        tag.resent = true;
        send_set(tag.node, tag, true);
        return;
    }
    if (!current) {
        // Decided without this node. After a failure its cleanup is already queued behind
        // this SET on the same connection; after a success the lock simply holds here too,
        // and release reaches every node.
        if (c.outcome == node_outcome::granted) {
            impl_->log(log_level::debug,
                       "late grant from " + impl_->node(tag.node).address().display() + " for " +
                           keys_text() + " (attempt " + std::to_string(tag.attempt) + ")");
        }
        if (tag.attempt == fsm_.attempt() && !fsm_.raising() && !completion_.done()) {
            // For the result's report only (what the node said, and failure_cause): the
            // decision is taken and is not revisited. (While raising, the votes are the
            // raise round's.)
            std::string message(reply.message);
            const auto counted = apply_quarantine(tag.node, c, now, message);
            record_vote(tag.node, counted, message, now);
            fsm_.on_set_reply(tag.attempt, tag.node, counted.outcome, now);
        }
        return;
    }
    if (plain_set && c.outcome == node_outcome::refused) {
        // SET NX cannot tell a lock from a plain value: PTTL does, on the contention path
        // only (the uncontended acquire stays one SET NX PX). Same connection, so it sees
        // the key the SET saw, unless it expired in between (then the refusal stands).
        send(tag.node, command{{"PTTL", keys_.front()}},
             {tag.attempt, command_kind::refusal_ttl, tag.node});
        return;
    }
    count_set_vote(tag, c, std::string(reply.message), c.outcome == node_outcome::granted, now);
}

void acquire_op::on_refusal_ttl_reply(reply_tag tag, const node_reply& reply,
                                      clock::time_point now) {
    const auto c = classify_refusal_ttl(reply);
    const bool current = tag.attempt == fsm_.attempt() && fsm_.collecting_grants();
    if (!current) {
        // The attempt was decided by its deadline meanwhile: the handoff still learns that
        // the node is held.
        fsm_.on_set_reply(tag.attempt, tag.node, node_outcome::refused, now);
        return;
    }
    count_set_vote(tag, c,
                   c.error ? "the key is a string without expiry: no lock, it never frees by itself"
                           : "",
                   false, now);
}

void acquire_op::count_set_vote(reply_tag tag, const classified& c, std::string message,
                                bool landed, clock::time_point now) {
    const auto counted = apply_quarantine(tag.node, c, now, message);
    record_vote(tag.node, counted, message, now);
    if (counted.error == errc::lock_mismatch) {
        fsm_.on_mismatch(tag.node);
    }
    act(fsm_.on_set_reply(tag.attempt, tag.node, counted.outcome, now, counted.counter, landed));
}

void acquire_op::on_raise_reply(reply_tag tag, const node_reply& reply, clock::time_point now) {
    if (tag.attempt != fsm_.attempt() || !fsm_.raising()) {
        return;
    }
    const auto c = classify_script_reply(reply);
    if (c.noscript && !tag.resent) {
        tag.resent = true;
        send_raise(tag.node, tag, true);
        return;
    }
    std::string message(reply.message);
    const auto counted = apply_quarantine(tag.node, c, now, message);
    record_vote(tag.node, counted, message, now);
    act(fsm_.on_raise_reply(tag.attempt, tag.node, counted.outcome, now));
}

void acquire_op::on_cleanup_reply(reply_tag tag, const node_reply& reply, clock::time_point now) {
    const auto c = classify_script_reply(reply);
    if (c.outcome == node_outcome::failed && !fsm_.finished()) {
        impl_->log(log_level::warning, "cleanup of " + keys_text() + " on " +
                                           impl_->node(tag.node).address().display() + " failed: " +
                                           c.error.message() + " " + std::string(reply.message));
    }
    act(fsm_.on_cleanup_reply(tag.attempt, tag.node, now));
}

void acquire_op::finish(std::error_code error) {
    if (completion_.done()) {
        return;
    }
    stop_timer();
    stop_waiting_for_links();
    if (sleeping_) {
        sleeping_ = false;
        impl_->observe_sleep(this, std::nullopt);
    }
    // Older waiters of this client it stood behind, for the message of one that never
    // attempted (read before it leaves the queue).
    const bool queued = queued_;
    const auto behind = queued ? impl_->releases().position(watched_key(), this) : 0;
    if (queued_) {
        queued_ = false;
        watching_ = false;
        auto& releases = impl_->releases();
        if (!error) {
            releases.granted(watched_key(), this, options_.mode);
        }
        releases.unwatch(watched_key(), this);
    }
    error = failure_cause(error, votes());
    acquire_result result;
    result.attempts = fsm_.attempt();
    if (!error) {
        if (options_.fencing) {
            warn_about_counters_behind();
            for (const auto& key : keys_) {
                impl_->fences().raise(key, fsm_.fence_token());
            }
        }
        result.lock = lock(keys_, token_, fsm_.valid_until(), options_, fsm_.fence_token());
    } else if (error == errc::contention && fsm_.attempt() == 0 && queued) {
        // No node was asked: what ended it is the queue, not a holder seen on the nodes.
        result.message =
            error.message() + ": no attempt: " +
            (fsm_.attempts_spent() ? "its max_attempts went to polls by the oldest waiter for it"
                                   : std::string("its wait budget ran out")) +
            (behind > 0 ? ", behind " + std::to_string(behind) + " older acquire" +
                              (behind == 1 ? "" : "s") + " of this client for the same keys"
                        : std::string(", while an older acquire of this client, granted first, "
                                      "held the keys"));
    } else if (const auto& refused = fsm_.counter_refused(); refused) {
        result.message = error.message() + ": " + counter_refusal_text(*refused);
    } else if (fsm_.fence_token() != 0) {
        result.message =
            error.message() + ": raising the fencing counter to " +
            std::to_string(fsm_.fence_token()) + ": " +
            summary(fsm_.votes().granted(), "raised", "lock gone or counter already higher");
    } else {
        result.message = error.message() + ": " +
                         summary(fsm_.votes().granted(), "granted", "held by another token");
    }
    result.votes = take_votes();
    if (auto* m = impl_->metrics()) {
        const lock_info info{keys_, options_.mode};
        const auto took = now() - called_at_;
        m->on_acquire(info, error, took, result.attempts);
        if (!error) {
            impl_->lock_granted(result.lock);
        }
        report_span(*m, "acquire", info, took, error, result.attempts, fsm_.votes().granted());
    }
    completion_.complete(error, std::move(result));
}

std::string acquire_op::counter_refusal_text(const counter_rejection& r) const {
    const auto counter = (r.node ? "fencing counter of " + keys_text() + " on " +
                                       impl_->node(*r.node).address().display()
                                 : "this client's last token for " + keys_text()) +
                         " is " + std::to_string(r.counter);
    if (r.what == counter_rejection::kind::exhausted) {
        return counter + ", the largest there is: no token is left above it (pushed there "
                         "earlier; docs/safety.md says how to repair it)";
    }
    return counter + ", more than max_counter_lead (" + std::to_string(options_.max_counter_lead) +
           ") above the highest of the other granting nodes and this client's last token (" +
           std::to_string(r.others) +
           "): a hostile or corrupted node, or nodes that lost their counters; nothing was "
           "raised (docs/safety.md)";
}

void acquire_op::warn_about_counters_behind() const {
    for (const auto node : fsm_.counters_behind_floor()) {
        impl_->log(log_level::error,
                   "fencing counter of " + keys_text() + " on " +
                       impl_->node(node).address().display() + " is below token " +
                       std::to_string(fsm_.fence_floor()) +
                       " granted earlier: the node lost writes (restart without appendfsync "
                       "always?); tokens stay monotonic only while this client remembers");
    }
}

} // namespace redlock::detail
