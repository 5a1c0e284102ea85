#ifndef REDLOCK_SRC_RUNTIME_ENVIRONMENT_HPP
#define REDLOCK_SRC_RUNTIME_ENVIRONMENT_HPP

#include "core/time_source.hpp"
#include "transport/node_link.hpp"
#include "transport/subscription_link.hpp"

#include "redlock/config.hpp"
#include "redlock/node_address.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace redlock::detail {

/// Every source of nondeterminism a client has: the wire, the clock and timers, randomness.
/// production() wires the real ones; the deterministic simulation wires its own.
struct environment {
    using time_factory =
        std::function<std::unique_ptr<time_source>(const boost::asio::any_io_executor& strand)>;
    /// `config` outlives the link.
    using link_factory = std::function<std::unique_ptr<node_link>(
        const boost::asio::any_io_executor& strand, node_address address,
        const client_config& config)>;

    /// A node's subscriber connection for the handoff (`node` is its index, for the events).
    using subscriber_factory = std::function<std::unique_ptr<subscription_link>(
        const boost::asio::any_io_executor& strand, node_address address,
        const client_config& config, std::size_t node, subscription_events& events)>;

    time_factory make_time;
    link_factory make_link;
    /// Empty: no handoff by notification, waiters sleep their backoff out.
    subscriber_factory make_subscriber;
    /// Lock tokens: unique across every client and process that may contend.
    std::function<std::string()> next_token;
    /// Backoff jitter: needs independence between clients, not secrecy.
    std::uint64_t jitter_seed = 0;
    /// For the simulation's checks: an acquire `op` sleeps between attempts, and its options
    /// allow it to sleep until `bound` at most (its start plus the backoff's ceiling), or
    /// (empty) it stopped sleeping.
    std::function<void(const void* op, std::optional<clock::time_point> bound)> observe_sleep;

    /// steady_clock and Asio timers, node_connection, tokens from the kernel's CSPRNG.
    static environment production();
};

} // namespace redlock::detail

#endif
