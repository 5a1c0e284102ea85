#ifndef REDLOCK_TESTS_SIMULATION_SIM_SUBSCRIBER_HPP
#define REDLOCK_TESTS_SIMULATION_SIM_SUBSCRIBER_HPP

#include "sim_node.hpp"
#include "sim_world.hpp"

#include "transport/subscription_link.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <memory>
#include <random>

namespace redlock::sim {

/// How release notifications fare in one schedule. Drawn from a stream of its own (not the
/// world's), so that the other draws of a seed stay what they were.
struct notify_faults {
    /// No subscriber connections at all: every waiter sleeps its backoff out.
    bool off = false;
    /// Per message: lost (a PUBLISH refused by an ACL, a message dropped with its connection).
    double lost_rate = 0;
    /// Per message or confirmation: delayed by up to tail_max instead of the usual latency.
    double tail_rate = 0.01;
    real_ns tail_max = 30 * ms;
    /// Per SUBSCRIBE: the subscriber connection is cut at a random moment within cut_within.
    double cut_rate = 0;
    real_ns cut_within = 200 * ms;
};

class subscriber_core;

/// subscription_link over the simulated network: confirmations and messages come in order
/// (one connection), after the latency, or later (tail), or not at all (lost); cuts and node
/// crashes end every subscription and are reported (on_subscriptions_lost); SUBSCRIBEs in
/// flight then fail.
class sim_subscriber final : public detail::subscription_link {
public:
    sim_subscriber(world& w, sim_node& node, int client, std::size_t node_index,
                   boost::asio::any_io_executor strand, detail::subscription_events& events,
                   notify_faults faults, std::uint64_t seed);
    ~sim_subscriber() override;

    void subscribe(const std::string& channel, std::uint64_t generation) override;
    void unsubscribe(const std::string& channel) override;
    void shutdown() override;

private:
    std::shared_ptr<subscriber_core> core_;
};

} // namespace redlock::sim

#endif
