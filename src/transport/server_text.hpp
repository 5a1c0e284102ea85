#ifndef REDLOCK_SRC_TRANSPORT_SERVER_TEXT_HPP
#define REDLOCK_SRC_TRANSPORT_SERVER_TEXT_HPP

#include <cstddef>
#include <string>
#include <string_view>

namespace redlock::detail {

/// Longest server text kept for a message: enough for any Redis error, short enough that a
/// node cannot fill logs or terminals.
inline constexpr std::size_t max_server_text = 256;

/// Text a node sent, made safe to put in a message, a log line or on a terminal: every byte
/// outside printable ASCII (escape sequences, bells, newlines, C1 controls in any encoding)
/// becomes '?', and anything past max_server_text is cut and marked. Redis' own messages
/// are plain ASCII, so nothing a real server says is lost.
std::string printable_server_text(std::string_view text);

} // namespace redlock::detail

#endif
