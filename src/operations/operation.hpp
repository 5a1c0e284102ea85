#ifndef REDLOCK_SRC_OPERATION_HPP
#define REDLOCK_SRC_OPERATION_HPP

#include "core/validity.hpp"
#include "runtime/client_impl.hpp"
#include "transport/commands.hpp"
#include "transport/node_reply.hpp"

#include "redlock/vote.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace redlock::detail {

/// Which command of an operation a reply belongs to.
enum class command_kind : std::uint8_t {
    set,
    raise,
    cleanup,
    script,
    writer_waiting,
    inspect_value,
    inspect_pttl,
    inspect_holders,
    inspect_time,
    /// PTTL after a refused SET NX: a key that never expires is no lock.
    refusal_ttl
};

struct reply_tag {
    unsigned attempt;
    command_kind kind;
    std::size_t node;
    /// Sent again as EVAL after NOSCRIPT: a NOSCRIPT to this one is an answer, never a
    /// reason to send it once more (a node that says NOSCRIPT to EVAL would loop forever).
    bool resent = false;

    std::uint64_t pack() const noexcept {
        return (std::uint64_t{attempt} << 25) | (std::uint64_t{resent} << 24) |
               (std::uint64_t(kind) << 16) | node;
    }
    static reply_tag unpack(std::uint64_t v) noexcept {
        return {static_cast<unsigned>(v >> 25), static_cast<command_kind>((v >> 16) & 0xff),
                static_cast<std::size_t>(v & 0xffff), ((v >> 24) & 1) != 0};
    }
};

/// What every operation has: the client's state, one timer, the per-node votes of the
/// round in flight, and registration for shutdown. Derived classes run an fsm.
class operation : public reply_target,
                  public cancellable,
                  public std::enable_shared_from_this<operation> {
public:
    explicit operation(std::shared_ptr<client_impl> impl);
    virtual ~operation();
    operation(const operation&) = delete;
    operation& operator=(const operation&) = delete;

protected:
    clock::time_point now() const { return impl_->now(); }

    /// Calls on_timer() at `at`; replaces any earlier arming, whose wake-up never comes even
    /// if it was already due.
    void arm_timer(clock::time_point at);
    /// A finished operation lets go of its timer at once: a pending wait would keep the
    /// whole operation alive until its deadline, long after its last reply.
    void stop_timer();
    virtual void on_timer() = 0;
    /// A reply handled at or after the armed time runs the timer first: once both are due,
    /// an event loop that stalled may hand them over in either order, and the fsms count
    /// nothing from their deadline on, so the votes report such a node as timed out.
    void run_overdue_timer(clock::time_point now);

    /// Starts a new round of votes, all sent now.
    void begin_round(clock::time_point now);
    /// Fills the vote of `node`; a node's first vote of a round counts.
    void record_vote(std::size_t node, const classified& c, std::string_view message,
                     clock::time_point now);
    /// A grant that must not count (client_impl::veto_grant: a quarantined node, one whose
    /// restarts cannot be detected, one that can evict keys, a second address of a server
    /// already counted) becomes a
    /// failure with that error, `message` saying why; anything else passes unchanged.
    classified apply_quarantine(std::size_t node, classified c, clock::time_point now,
                                std::string& message);
    /// Marks every node without a vote as timed out at `now`.
    void record_timeouts(clock::time_point now);
    bool has_vote(std::size_t node) const { return answered_[node]; }
    const std::vector<node_vote>& votes() const noexcept { return votes_; }
    std::vector<node_vote> take_votes() { return std::move(votes_); }

    /// The count ("3 of 5 nodes released, quorum is 3"), then why the others did not, for the
    /// result's message: each reason once, after the nodes it applies to (five nodes refusing
    /// alike make one clause, not five). `done` is what the nodes did ("granted",
    /// "released"...); `refusal` says what a refusal means for this operation.
    std::string summary(std::size_t succeeded, std::string_view done,
                        std::string_view refusal) const;

    void send(std::size_t node, const command& cmd, reply_tag tag);

    /// Reports the operation, completed with `error` after `took`, to the observer's
    /// on_operation, as a span that started `took` ago on the wall clock.
    void report_span(metrics_observer& m, std::string_view name, const lock_info& lock,
                     clock::duration took, std::error_code error, unsigned attempts,
                     std::size_t succeeded) const;

    std::shared_ptr<client_impl> impl_;

private:
    /// Reports a settled vote to the metrics observer.
    void observe(const node_vote& vote) const;

    std::unique_ptr<alarm> timer_;
    /// When the armed timer is due; none is armed when timer_armed_ is false.
    clock::time_point timer_at_{};
    bool timer_armed_ = false;
    std::vector<node_vote> votes_;
    std::vector<bool> answered_;
    clock::time_point round_start_{};
};

} // namespace redlock::detail

#endif
