#ifndef REDLOCK_TESTS_SIMULATION_SIM_NETWORK_HPP
#define REDLOCK_TESTS_SIMULATION_SIM_NETWORK_HPP

#include "sim_clock.hpp"
#include "sim_node.hpp"
#include "sim_world.hpp"

#include "transport/stream_connector.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace redlock::sim {

class history;
struct sim_connection;

/// The network between one client and its nodes.
struct net_faults {
    real_ns latency_min = 50 * us;
    real_ns latency_mean = 300 * us;
    /// Per message: a long-tail delay up to tail_max instead.
    double tail_rate = 0.01;
    real_ns tail_max = 30 * ms;
    /// Per reply: the node ran the command but the reply never arrives; nothing more comes
    /// out of that connection, and it is found broken (reset) a little later.
    double lost_reply_rate = 0;
    /// Per renewal or extend (lua/extend.lua) reply: held back at the node for a uniform
    /// time in [hold_extend_min, hold_extend_max] before it leaves (0: never). Drawn so that
    /// a renewal's quorum may come after the validity it extends (mutant q).
    real_ns hold_extend_min = 0;
    real_ns hold_extend_max = 0;
    /// The generator of those holds, apart from the world's so that nothing else moves.
    std::uint64_t hold_extend_seed = 0;
};

/// How release notifications fare in one schedule (subscriber connections).
struct notify_faults {
    /// No subscriber connections at all: every waiter sleeps its backoff out.
    bool off = false;
    /// Per message and subscriber: lost (as if the PUBLISH was refused by an ACL).
    double lost_rate = 0;
    /// Per SUBSCRIBE: its connection is reset at a random moment within cut_within.
    double cut_rate = 0;
    real_ns cut_within = 200 * ms;
};

/// The path between one client and one node address: what node_connection's byte streams
/// cross. Each direction of each connection is a FIFO byte stream delivered in arbitrary
/// chunks after a latency with a long tail; connections are independent, so bytes of two
/// connections may overtake each other. Connects take a round trip and are refused by a
/// node that is down. A cut resets every connection on the path (the client reads
/// ECONNRESET; bytes still on their way to the node may arrive, a prefix of them); a
/// partition holds every byte (and connect) back until it ends, or also resets; a node
/// crash resets every connection to it. The node end parses the client's RESP commands
/// (a malformed one is a violation: node_connection formats them), runs each on the
/// simulated node in arrival order, and sends the reply back as RESP bytes. SUBSCRIBE and
/// UNSUBSCRIBE are served there too (RESP2 confirmations; every message published on the
/// node while subscribed is pushed on that connection, in order with its replies), for the
/// clients' subscriber_connection.
///
/// It also serves the checks: what the node runs is matched with when its client sent it
/// (sent(), from observed_link), and each clock mark's reply, when the client reads it,
/// is a time sample of that client.
class sim_path : public std::enable_shared_from_this<sim_path> {
public:
    sim_path(world& w, history& h, sim_node& node, int client, drift_clock clock, net_faults net,
             notify_faults notify = {});
    ~sim_path();
    sim_path(const sim_path&) = delete;
    sim_path& operator=(const sim_path&) = delete;

    /// A connector that opens byte streams over this path, for a node_connection on `strand`.
    std::unique_ptr<detail::stream_connector> connector(boost::asio::any_io_executor strand);

    /// Fault injection. Resets every connection on the path now.
    void cut(const char* why);
    /// Until `until` nothing crosses (connects neither); with `break_now` the connections
    /// are also reset at once, else they only stall.
    void partition(real_ns until, bool break_now);

    /// The link handed command `args` to its connection now (observed_link), for the
    /// connection of `generation` (node_link::connection_generation()): when the node runs
    /// it, it knows when it was sent.
    void sent(std::shared_ptr<const std::vector<std::string>> args, std::uint64_t generation);
    /// The command of `args` recorded by sent() was failed at once, never to be written.
    void not_sent(const std::shared_ptr<const std::vector<std::string>>& args);
    /// The link's connection_generation() as the link is called now (observed_link): a
    /// connection opened meanwhile carries the commands of that generation.
    std::uint64_t link_generation = 0;

    sim_node& node() { return node_; }
    int client() const { return client_; }

private:
    friend struct sim_connection;
    class connector_impl;

    real_ns latency();
    /// How long the node holds back an extend's reply (net_faults::hold_extend_*).
    real_ns hold_extend();
    /// When a message leaving now gets across, partitions included.
    real_ns crossing();
    /// When the command `args` that the node runs now from the connection of `generation`
    /// was sent by the client; negative when unknown (the handshake's).
    real_ns take_sent(const std::vector<std::string>& args, std::uint64_t generation);
    void forget(sim_connection* c);

    world& w_;
    history& h_;
    sim_node& node_;
    int client_;
    drift_clock clock_;
    net_faults net_;
    std::mt19937_64 hold_rng_;
    notify_faults notify_;
    std::string who_;
    real_ns partitioned_until_ = 0;
    std::vector<std::weak_ptr<sim_connection>> connections_;
    struct sent_command {
        std::shared_ptr<const std::vector<std::string>> args;
        real_ns at;
        std::uint64_t generation;
    };
    std::deque<sent_command> sent_;
};

} // namespace redlock::sim

#endif
