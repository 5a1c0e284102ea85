#ifndef REDLOCK_TESTS_SIMULATION_SIM_LINK_HPP
#define REDLOCK_TESTS_SIMULATION_SIM_LINK_HPP

#include "sim_clock.hpp"
#include "sim_node.hpp"
#include "sim_world.hpp"

#include "transport/node_link.hpp"

#include "redlock/config.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <memory>

namespace redlock::sim {

class history;

/// The network between one client and its nodes.
struct net_faults {
    real_ns latency_min = 50 * us;
    real_ns latency_mean = 300 * us;
    /// Per message: a long-tail delay up to tail_max instead.
    double tail_rate = 0.01;
    real_ns tail_max = 30 * ms;
    /// Per command: the node ran it but the reply never arrives; the connection is then
    /// found broken a little later, failing every command still pending on it.
    double lost_reply_rate = 0;
};

class link_core;

/// node_link over the simulated network: one TCP-like connection at a time (FIFO both ways,
/// latency with a long tail), connected lazily with the INFO server handshake that tells
/// when the server started, broken by cuts, node crashes and lost replies (every pending
/// command then fails with connection_failed; commands not yet at the node may or may not
/// run there), stalled by partitions, reconnected after a doubling delay during which
/// commands fail fast, and reset like node_connection when the oldest command on it has
/// waited past the reply patience. Replies are RESP bytes parsed by hiredis' reader.
class sim_link final : public detail::node_link {
public:
    sim_link(world& w, history& h, sim_node& node, int client, drift_clock clock,
             boost::asio::any_io_executor strand, node_address address, const client_config& config,
             net_faults net);
    ~sim_link() override;

    void send(const detail::command& cmd, const std::shared_ptr<detail::reply_target>& target,
              std::uint64_t tag) override;
    void shutdown(std::chrono::milliseconds drain) override;
    void expect_replies_within(std::chrono::milliseconds patience) override;
    std::string_view run_id() const noexcept override;
    std::uint64_t connection_generation() const noexcept override;
    std::string_view restarts_undetectable() const noexcept override;
    std::string_view eviction_risk() const noexcept override;
    std::optional<detail::clock::time_point> started_at() const noexcept override;
    std::optional<detail::clock::time_point> restart_seen_at() const noexcept override;
    std::string_view quarantine_cause() const noexcept override;
    std::string_view clock_steps_undetectable() const noexcept override;
    void allow_clock_drift(double rate) override;
    void on_server_read(std::function<void()> seen) override;
    detail::link_readiness readiness() const noexcept override;
    void warm_up() override;
    void on_readiness_changed(std::function<void()> changed) override;
    const node_address& address() const noexcept override { return address_; }

    /// Fault injection: for the world's fault events.
    std::weak_ptr<link_core> core() const { return core_; }

private:
    node_address address_;
    std::shared_ptr<link_core> core_;
};

/// Breaks the connection now (a cut): pending commands fail with connection_failed.
void cut(link_core& core, const char* why);
/// Until `until`, nothing crosses (connects time out); with `break_now` the connection
/// also breaks at once, else it only stalls.
void partition(link_core& core, real_ns until, bool break_now);

} // namespace redlock::sim

#endif
