#ifndef REDLOCK_SRC_TRANSPORT_CEILING_LINK_HPP
#define REDLOCK_SRC_TRANSPORT_CEILING_LINK_HPP

#include "core/ceiling_cover.hpp"
#include "transport/node_link.hpp"

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
class ceiling_link final : public node_link {
public:
    /// `ceiling_key` is `<quarantine_options::node_key_prefix>ttl-ceiling`.
    ceiling_link(std::unique_ptr<node_link> inner, std::string ceiling_key, ceiling_terms terms,
                 std::function<clock::time_point()> now);

    /// The drift of the locks in use grew: raises are trusted for a little less.
    void set_terms(const ceiling_terms& terms);

    void send(const command& cmd, const std::shared_ptr<reply_target>& target,
              std::uint64_t tag) override;
    void shutdown(std::chrono::milliseconds drain) override { inner_->shutdown(drain); }
    void expect_replies_within(std::chrono::milliseconds patience) override {
        inner_->expect_replies_within(patience);
    }
    std::optional<clock::time_point> started_at() const noexcept override {
        return inner_->started_at();
    }
    std::optional<clock::time_point> restart_seen_at() const noexcept override {
        return inner_->restart_seen_at();
    }
    std::string_view run_id() const noexcept override { return inner_->run_id(); }
    std::string_view restarts_undetectable() const noexcept override {
        return inner_->restarts_undetectable();
    }
    std::string_view eviction_risk() const noexcept override { return inner_->eviction_risk(); }
    std::string_view quarantine_cause() const noexcept override {
        return inner_->quarantine_cause();
    }
    std::string_view clock_steps_undetectable() const noexcept override {
        return inner_->clock_steps_undetectable();
    }
    void allow_clock_drift(double rate) override { inner_->allow_clock_drift(rate); }
    void on_server_read(std::function<void()> seen) override {
        inner_->on_server_read(std::move(seen));
    }
    std::uint64_t connection_generation() const noexcept override {
        return inner_->connection_generation();
    }
    link_readiness readiness() const noexcept override { return inner_->readiness(); }
    void warm_up() override { inner_->warm_up(); }
    void on_readiness_changed(std::function<void()> changed) override {
        inner_->on_readiness_changed(std::move(changed));
    }
    const node_address& address() const noexcept override { return inner_->address(); }

private:
    struct shared;
    std::unique_ptr<node_link> inner_;
    // Shared with the reply targets of raises still in flight.
    std::shared_ptr<shared> shared_;
    std::function<clock::time_point()> now_;
};

} // namespace redlock::detail

#endif
