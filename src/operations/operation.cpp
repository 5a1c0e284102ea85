#include "operations/operation.hpp"

#include "redlock/error.hpp"

#include <algorithm>
#include <utility>

namespace redlock::detail {

operation::operation(std::shared_ptr<client_impl> impl)
    : impl_(std::move(impl))
    , timer_(impl_->make_alarm())
    , votes_(impl_->node_count())
    , answered_(impl_->node_count(), false) {
    // An operation that ends before its first round (cancelled while it waited for
    // connections) still reports each node's vote under its own node.
    for (std::size_t i = 0; i < votes_.size(); ++i) {
        votes_[i].node = i;
    }
    impl_->register_operation(this);
}

operation::~operation() {
    impl_->unregister_operation(this);
}

void operation::arm_timer(clock::time_point at) {
    timer_at_ = at;
    timer_armed_ = true;
    timer_->arm(at, [self = shared_from_this()] {
        self->timer_armed_ = false;
        self->on_timer();
    });
}

void operation::stop_timer() {
    timer_armed_ = false;
    timer_->cancel();
}

void operation::run_overdue_timer(clock::time_point now) {
    if (!timer_armed_ || now < timer_at_) {
        return;
    }
    // The timer may be all that owns this operation.
    const auto keep_alive = shared_from_this();
    stop_timer();
    on_timer();
}

void operation::begin_round(clock::time_point now) {
    round_start_ = now;
    votes_.assign(impl_->node_count(), node_vote{});
    answered_.assign(impl_->node_count(), false);
    for (std::size_t i = 0; i < votes_.size(); ++i) {
        votes_[i].node = i;
    }
}

void operation::record_vote(std::size_t node, const classified& c, std::string_view message,
                            clock::time_point now) {
    if (answered_[node]) {
        return;
    }
    answered_[node] = true;
    auto& vote = votes_[node];
    vote.outcome = c.outcome;
    vote.error = c.error;
    vote.server_message = std::string(message);
    vote.latency = std::chrono::duration_cast<std::chrono::microseconds>(now - round_start_);
    observe(vote);
}

void operation::observe(const node_vote& vote) const {
    if (auto* m = impl_->metrics()) {
        m->on_node_reply(vote.node, vote.error, vote.latency);
    }
}

classified operation::apply_quarantine(std::size_t node, classified c, clock::time_point now,
                                       std::string& message) {
    if (c.outcome != node_outcome::granted) {
        return c;
    }
    auto veto = impl_->veto_grant(node, now);
    if (!veto) {
        return c;
    }
    message = std::move(veto->message);
    return {node_outcome::failed, make_error_code(veto->error), false};
}

void operation::record_timeouts(clock::time_point now) {
    for (std::size_t node = 0; node < votes_.size(); ++node) {
        if (!answered_[node]) {
            answered_[node] = true;
            auto& vote = votes_[node];
            vote.outcome = node_outcome::failed;
            vote.error = errc::node_timeout;
            vote.latency =
                std::chrono::duration_cast<std::chrono::microseconds>(now - round_start_);
            observe(vote);
        }
    }
}

std::string operation::summary(std::size_t succeeded, std::string_view done,
                               std::string_view refusal) const {
    // Reasons in the order they first appear, each with the nodes that gave it.
    std::vector<std::pair<std::string, std::string>> reasons;
    for (const auto& vote : votes_) {
        if (vote.outcome == node_outcome::granted) {
            continue;
        }
        std::string reason;
        if (vote.outcome == node_outcome::refused) {
            reason = refusal;
        } else if (vote.outcome == node_outcome::pending) {
            reason = "no answer yet";
        } else {
            reason = vote.error ? vote.error.message() : "no answer";
            if (vote.error == errc::node_quarantined) {
                reason += ": " + vote.server_message;
            } else if (!vote.server_message.empty()) {
                reason += " (" + vote.server_message + ")";
            }
        }
        const auto address = impl_->node(vote.node).address().display();
        const auto same = std::find_if(reasons.begin(), reasons.end(),
                                       [&](const auto& r) { return r.first == reason; });
        if (same == reasons.end()) {
            reasons.emplace_back(std::move(reason), address);
        } else {
            same->second += ", " + address;
        }
    }
    std::string text = std::to_string(succeeded) + " of " + std::to_string(votes_.size()) +
                       " nodes " + std::string(done) + ", quorum is " +
                       std::to_string(votes_.size() / 2 + 1);
    for (const auto& [reason, nodes] : reasons) {
        text += "; " + nodes + ": " + reason;
    }
    return text;
}

void operation::send(std::size_t node, const command& cmd, reply_tag tag) {
    impl_->node(node).send(cmd, shared_from_this(), tag.pack());
}

void operation::report_span(metrics_observer& m, std::string_view name, const lock_info& lock,
                            clock::duration took, std::error_code error, unsigned attempts,
                            std::size_t succeeded) const {
    operation_span span;
    span.operation = name;
    span.lock = lock;
    span.duration = took;
    span.start = std::chrono::system_clock::now() -
                 std::chrono::duration_cast<std::chrono::system_clock::duration>(took);
    span.error = error;
    span.attempts = attempts;
    span.nodes = impl_->node_count();
    span.succeeded = succeeded;
    m.on_operation(span);
}

} // namespace redlock::detail
