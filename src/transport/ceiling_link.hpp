#ifndef REDLOCK_SRC_TRANSPORT_CEILING_LINK_HPP
#define REDLOCK_SRC_TRANSPORT_CEILING_LINK_HPP

#include "core/ceiling_cover.hpp"
#include "transport/forwarding_link.hpp"

#include <functional>
#include <memory>
#include <string>

namespace redlock::detail {

/// A node_link that keeps the node's TTL ceiling (docs/safety.md, "The TTL ceiling") above
/// every ttl its commands set: before a command with command::sets_ttl it pipelines
/// lua/ttl_ceiling_raise.lua on the same connection when core/ceiling_cover says so, and
/// turns the command's reply into a failed vote when the raise that covered it was refused.
/// Everything else is passed through. The production client and the simulation wrap their
/// links in it alike.
class ceiling_link final : public forwarding_link {
public:
    /// `ceiling_key` is `<quarantine_options::node_key_prefix>ttl-ceiling`.
    ceiling_link(std::unique_ptr<node_link> inner, std::string ceiling_key, ceiling_terms terms,
                 std::function<clock::time_point()> now);

    /// The drift of the locks in use grew: raises are trusted for a little less.
    void set_terms(const ceiling_terms& terms);

    void send(const command& cmd, const std::shared_ptr<reply_target>& target,
              std::uint64_t tag) override;

private:
    struct shared;
    // Shared with the reply targets of raises still in flight.
    std::shared_ptr<shared> shared_;
    std::function<clock::time_point()> now_;
};

} // namespace redlock::detail

#endif
