#ifndef REDLOCK_CLI_TERMINAL_HPP
#define REDLOCK_CLI_TERMINAL_HPP

#include <cstddef>
#include <string>
#include <string_view>

namespace redlock::cli {

/// `text` as it may reach a terminal: every byte outside printable ASCII, and the backslash,
/// as \xNN. Text from a node (a value, an error) could otherwise move the cursor, retitle or
/// clear the terminal, or forge a line of output. Past `limit` bytes it is cut, and the
/// whole size said.
std::string printable(std::string_view text, std::size_t limit = std::string_view::npos);

} // namespace redlock::cli

#endif
