#ifndef REDLOCK_SRC_CLIENT_ENVIRONMENT_HPP
#define REDLOCK_SRC_CLIENT_ENVIRONMENT_HPP

#include "operations/time_source.hpp"
#include "transport/node_link.hpp"

#include "redlock/config.hpp"
#include "redlock/node_address.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <cstdint>
#include <functional>
#include <memory>
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

    time_factory make_time;
    link_factory make_link;
    /// Lock tokens: unique across every client and process that may contend.
    std::function<std::string()> next_token;
    /// Backoff jitter: needs independence between clients, not secrecy.
    std::uint64_t jitter_seed = 0;

    /// steady_clock and Asio timers, node_connection, tokens from the kernel's CSPRNG.
    static environment production();
};

} // namespace redlock::detail

#endif
