#ifndef REDLOCK_TESTS_SUPPORT_RESP_COMMAND_HPP
#define REDLOCK_TESTS_SUPPORT_RESP_COMMAND_HPP

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::test {

enum class parse_result { command, need_more, malformed };

/// One command (a RESP array of bulk strings) from the front of `in`, as the test servers
/// read what a client sends however its bytes are split; `used` is how many bytes it took.
parse_result parse_command(std::string_view in, std::size_t& used, std::vector<std::string>& args);

} // namespace redlock::test

#endif
