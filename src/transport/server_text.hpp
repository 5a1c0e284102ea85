#ifndef REDLOCK_SRC_TRANSPORT_SERVER_TEXT_HPP
#define REDLOCK_SRC_TRANSPORT_SERVER_TEXT_HPP

#include "redlock/config.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::detail {

/// Longest server text kept for a message: enough for any Redis error, short enough that a
/// node cannot fill logs or terminals.
inline constexpr std::size_t max_server_text = 256;

/// What server text must never carry on: the passwords of every node a client was given
/// (empty ones left out). A node may echo what it received, or what it learned of another
/// node's credentials, in an error (`-WRONGPASS the password <pw> is wrong`); whatever it
/// says then reaches votes, messages, logs and terminals. User names are not secret (they
/// are shown in every redacted address) and are kept.
std::vector<std::string> configured_secrets(const client_config& config,
                                            std::string_view own_password);

/// Text a node sent, made safe to put in a message, a log line or on a terminal: each
/// occurrence of one of `secrets` becomes `***`, then every byte outside printable ASCII
/// (escape sequences, bells, newlines, C1 controls in any encoding) becomes '?', and
/// anything past max_server_text is cut and marked. Redis' own messages are plain ASCII, so
/// nothing a real server says is lost. Every piece of server text enters through here.
std::string printable_server_text(std::string_view text, const std::vector<std::string>& secrets);

} // namespace redlock::detail

#endif
