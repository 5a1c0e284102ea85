#include "support/resp_command.hpp"

#include <charconv>

namespace redlock::test {

namespace {

/// A decimal line `<prefix><digits>\r\n` at `at`; advances `at` past it.
parse_result parse_length_line(std::string_view in, char prefix, std::size_t& at, long long& n) {
    const auto end = in.find("\r\n", at);
    if (end == std::string_view::npos) {
        // A line of more than a few digits is not a length line: do not wait for it forever.
        return in.size() - at > 32 ? parse_result::malformed : parse_result::need_more;
    }
    if (in[at] != prefix) {
        return parse_result::malformed;
    }
    const auto [ptr, ec] = std::from_chars(in.data() + at + 1, in.data() + end, n);
    if (ec != std::errc() || ptr != in.data() + end || n < 0) {
        return parse_result::malformed;
    }
    at = end + 2;
    return parse_result::command;
}

} // namespace

/// One command (a RESP array of bulk strings) from the front of `in`; `used` is how many
/// bytes it took. Clients send nothing else.
parse_result parse_command(std::string_view in, std::size_t& used, std::vector<std::string>& args) {
    std::size_t at = 0;
    long long count = 0;
    if (in.empty()) {
        return parse_result::need_more;
    }
    if (auto r = parse_length_line(in, '*', at, count); r != parse_result::command) {
        return r;
    }
    args.clear();
    for (long long i = 0; i < count; ++i) {
        if (at >= in.size()) {
            return parse_result::need_more;
        }
        long long length = 0;
        if (auto r = parse_length_line(in, '$', at, length); r != parse_result::command) {
            return r;
        }
        const auto size = static_cast<std::size_t>(length);
        if (in.size() < at + size + 2) {
            return parse_result::need_more;
        }
        if (in.substr(at + size, 2) != "\r\n") {
            return parse_result::malformed;
        }
        args.emplace_back(in.substr(at, size));
        at += size + 2;
    }
    used = at;
    return parse_result::command;
}

} // namespace redlock::test
