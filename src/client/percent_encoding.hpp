#ifndef REDLOCK_SRC_CLIENT_PERCENT_ENCODING_HPP
#define REDLOCK_SRC_CLIENT_PERCENT_ENCODING_HPP

#include <string>
#include <string_view>

namespace redlock::detail {

/// Everything but RFC 3986's unreserved characters escaped as %XX, as parse_node_address
/// decodes it: credentials written back into an address, and user names shown in messages
/// (a name decoded from an escape may hold '@', ':' or control characters).
std::string percent_encode(std::string_view text);

} // namespace redlock::detail

#endif
