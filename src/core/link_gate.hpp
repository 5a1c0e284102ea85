#ifndef REDLOCK_SRC_CORE_LINK_GATE_HPP
#define REDLOCK_SRC_CORE_LINK_GATE_HPP

#include <cstddef>

namespace redlock::detail {

/// Whether an acquire's attempt goes out now rather than after the connections on their way:
/// a command on a connection still being made waits for the connect, TLS and the handshake,
/// all inside its node_timeout, so a fresh client (or one reconnecting after an outage) would
/// lose those votes for no fault of the nodes. It waits while a quorum is not ready but could be
/// once the links still connecting are; the caller bounds the wait (connect_timeout).
bool attempt_may_go(std::size_t ready, std::size_t connecting, std::size_t quorum) noexcept;

} // namespace redlock::detail

#endif
