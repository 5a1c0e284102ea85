#ifndef REDLOCK_SRC_TRANSPORT_FORWARDING_LINK_HPP
#define REDLOCK_SRC_TRANSPORT_FORWARDING_LINK_HPP

#include "transport/node_link.hpp"

#include <memory>
#include <utility>

namespace redlock::detail {

/// A node_link around another that passes every call through: the base of links that add
/// to a few calls (ceiling_link, the simulation's observed_link) and leave the rest alone.
class forwarding_link : public node_link {
public:
    void send(const command& cmd, const std::shared_ptr<reply_target>& target,
              std::uint64_t tag) override {
        inner_->send(cmd, target, tag);
    }
    void begin_batch() override { inner_->begin_batch(); }
    void end_batch() override { inner_->end_batch(); }
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
    std::string_view not_primary() const noexcept override { return inner_->not_primary(); }
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

protected:
    explicit forwarding_link(std::unique_ptr<node_link> inner)
        : inner_(std::move(inner)) {}

    std::unique_ptr<node_link> inner_;
};

} // namespace redlock::detail

#endif
