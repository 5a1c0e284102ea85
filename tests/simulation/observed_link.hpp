#ifndef REDLOCK_TESTS_SIMULATION_OBSERVED_LINK_HPP
#define REDLOCK_TESTS_SIMULATION_OBSERVED_LINK_HPP

#include "sim_network.hpp"

#include "transport/forwarding_link.hpp"

#include <memory>

namespace redlock::sim {

class history;

/// The production node_connection of a simulated client, seen by the checks: every command
/// the client sends (for (g)), when it was sent (the node's hooks, through the path), a
/// REDLOCK_MISMATCH the client hears (for (q)) and a release given up on when a closed
/// client's drain ended (for (l)). Everything else is the connection's own.
class observed_link final : public detail::forwarding_link {
public:
    observed_link(std::unique_ptr<detail::node_link> inner, std::shared_ptr<sim_path> path,
                  world& w, history& h);

    void send(const detail::command& cmd, const std::shared_ptr<detail::reply_target>& target,
              std::uint64_t tag) override;
    void warm_up() override;

private:
    std::shared_ptr<sim_path> path_;
    world& w_;
    history& h_;
};

} // namespace redlock::sim

#endif
