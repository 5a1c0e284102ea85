#ifndef REDLOCK_SRC_TRANSPORT_STREAM_CONNECTOR_HPP
#define REDLOCK_SRC_TRANSPORT_STREAM_CONNECTOR_HPP

#include "core/validity.hpp"
#include "transport/byte_stream.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace redlock::detail {

/// Opens byte streams to one node: the other half of the seam under node_connection. Real
/// sockets in production (socket_connector: resolve, TCP or unix, TLS), the simulated
/// network in the deterministic simulation. The connect timeout is node_connection's.
class stream_connector {
public:
    /// With a connected stream, or with none and the reason, for the log and the votes.
    using opened_fn = std::function<void(std::unique_ptr<byte_stream> stream, std::string why)>;

    virtual ~stream_connector() = default;

    /// Starts opening a stream. `opened` runs once, on the strand (also from inside this call
    /// when the attempt fails at once), unless abort() or the destructor runs first. One
    /// attempt at a time.
    virtual void open(opened_fn opened) = 0;
    /// Ends the attempt under way now (its socket closed): its `opened` never runs.
    virtual void abort() noexcept = 0;
    /// What the attempt under way is doing ("connect", "TLS handshake"...), for a timeout's
    /// message; `hint` anything that may explain a timeout there.
    virtual std::string_view step() const noexcept = 0;
    virtual std::string_view hint() const noexcept = 0;
    /// When the server the last successful open reached became a primary, if the connector
    /// learned it on the way (the Sentinels); empty when it does not know.
    virtual std::optional<clock::time_point> primary_since() const { return std::nullopt; }
    /// The host and port the last successful open reached, when the connector chose them
    /// (the primary the Sentinels named); empty when the address says where to go.
    virtual std::optional<std::pair<std::string, std::uint16_t>> reached() const {
        return std::nullopt;
    }
};

} // namespace redlock::detail

#endif
