#ifndef REDLOCK_SRC_CORE_CEILING_COVER_HPP
#define REDLOCK_SRC_CORE_CEILING_COVER_HPP

#include "core/validity.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace redlock::detail {

/// How long a raise of the TTL ceiling lasts and how long the client trusts it
/// (docs/safety.md, "The TTL ceiling").
struct ceiling_terms {
    /// client_config::fleet_max_ttl: no key set under a raise lives longer than this.
    std::chrono::milliseconds fleet_max_ttl{60000};
    /// Drift bound of the node's clock against the client's (the largest of the locks in use).
    double drift_factor = 0.01;
    std::chrono::milliseconds drift_allowance{2};
};

/// How long from the raise an entry of the ceiling lasts on the node: twice the fleet's
/// maximum, so that a client raises at most about once per fleet_max_ttl per node.
std::chrono::milliseconds ceiling_keep(const ceiling_terms& terms) noexcept;

/// One raise sent to a node, and how it ended. The commands it covers count as votes only
/// if it succeeded.
struct ceiling_raise {
    enum class state { pending, raised, refused };
    std::chrono::milliseconds ttl{0};
    clock::time_point sent_at;
    std::uint64_t connection = 0;
    state outcome = state::pending;
    /// Why it was refused (the server's error, or the connection's), for the vote's reason.
    std::string refusal;
    /// What a refused raise makes of the votes it covered: an error reply is the server's
    /// (server_error), any other answer unexpected_reply.
    bool unexpected = false;
};

/// Per node connection: whether a command that sets a ttl on the node needs a raise of the
/// ceiling pipelined before it, and which raise covers it. Sans-io: the link sends what
/// cover() asks for, reports the raise's reply to raise_answered(), and asks vote_counts()
/// before passing the covered command's reply on.
///
/// A raise confirmed at `sent` (its reply arrived OK) covers commands sent until
/// sent + keep - drift(keep) - fleet_max_ttl - drift(fleet_max_ttl): the entry lasts at least
/// keep on the node's clock from when the node ran the raise (after `sent`), and a lock's
/// validity, which starts no earlier than its command is sent, ends within fleet_max_ttl of
/// that. A raise not answered yet covers the commands sent behind it on the same connection
/// (Redis runs them in order), under the same bound. Everything is forgotten when the
/// connection changes: the server behind a new connection may have restarted and lost the
/// ceiling.
class ceiling_cover {
public:
    explicit ceiling_cover(ceiling_terms terms) noexcept
        : terms_(terms) {}

    /// The terms grow (a lock with a larger drift is in use); fleet_max_ttl stays.
    void set_terms(const ceiling_terms& terms) noexcept { terms_ = terms; }
    const ceiling_terms& terms() const noexcept { return terms_; }

    struct plan {
        /// Send this raise first, on the same connection; empty when none is needed.
        std::shared_ptr<ceiling_raise> raise;
        /// The raise whose success the command's vote needs, or null: a confirmation that
        /// was valid when the command was sent covers it.
        std::shared_ptr<ceiling_raise> covered_by;
    };
    /// A command that sets `ttl` on the node is about to be sent at `now` on the link's
    /// connection number `connection`.
    plan cover(std::chrono::milliseconds ttl, clock::time_point now, std::uint64_t connection);

    /// The reply to `raise` came: `ok`, or refused with `why`.
    void raise_answered(const std::shared_ptr<ceiling_raise>& raise, bool ok, std::string why);

    /// Whether the vote of a command covered by `covered_by` (from cover()) counts.
    static bool vote_counts(const ceiling_raise* covered_by) noexcept {
        return covered_by == nullptr || covered_by->outcome == ceiling_raise::state::raised;
    }

private:
    /// Until when (client time) a raise sent at `sent` covers commands sent.
    clock::time_point covers_until(clock::time_point sent) const noexcept;
    void forget_if_new(std::uint64_t connection);

    ceiling_terms terms_;
    std::uint64_t connection_ = 0;
    // The largest ttl confirmed on this connection, and until when it covers commands.
    std::chrono::milliseconds confirmed_ttl_{0};
    std::optional<clock::time_point> confirmed_until_;
    // The latest raise sent on this connection and not answered yet.
    std::shared_ptr<ceiling_raise> in_flight_;
};

} // namespace redlock::detail

#endif
