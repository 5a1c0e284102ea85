#ifndef REDLOCK_TESTS_SIMULATION_OBSERVED_LINK_HPP
#define REDLOCK_TESTS_SIMULATION_OBSERVED_LINK_HPP

#include "sim_network.hpp"

#include "transport/node_link.hpp"

#include <memory>

namespace redlock::sim {

class history;

/// The production node_connection of a simulated client, seen by the checks: every command
/// the client sends (for (g)), when it was sent (the node's hooks, through the path), a
/// REDLOCK_MISMATCH the client hears (for (q)) and a release given up on when a closed
/// client's drain ended (for (l)). Everything else is the connection's own.
class observed_link final : public detail::node_link {
public:
    observed_link(std::unique_ptr<detail::node_link> inner, std::shared_ptr<sim_path> path,
                  world& w, history& h);

    void send(const detail::command& cmd, const std::shared_ptr<detail::reply_target>& target,
              std::uint64_t tag) override;
    void shutdown(std::chrono::milliseconds drain) override { inner_->shutdown(drain); }
    void expect_replies_within(std::chrono::milliseconds patience) override {
        inner_->expect_replies_within(patience);
    }
    std::optional<detail::clock::time_point> started_at() const noexcept override {
        return inner_->started_at();
    }
    std::optional<detail::clock::time_point> restart_seen_at() const noexcept override {
        return inner_->restart_seen_at();
    }
    std::string_view run_id() const noexcept override { return inner_->run_id(); }
    std::uint64_t connection_generation() const noexcept override {
        return inner_->connection_generation();
    }
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
    detail::link_readiness readiness() const noexcept override { return inner_->readiness(); }
    void warm_up() override;
    void on_readiness_changed(std::function<void()> changed) override {
        inner_->on_readiness_changed(std::move(changed));
    }
    const node_address& address() const noexcept override { return inner_->address(); }

private:
    std::unique_ptr<detail::node_link> inner_;
    std::shared_ptr<sim_path> path_;
    world& w_;
    history& h_;
};

} // namespace redlock::sim

#endif
