#include "transport/server_text.hpp"

namespace redlock::detail {

std::string printable_server_text(std::string_view text) {
    const bool cut = text.size() > max_server_text;
    if (cut) {
        text = text.substr(0, max_server_text);
    }
    std::string out;
    out.reserve(text.size() + 16);
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        out.push_back(u < 0x20 || u > 0x7e ? '?' : c);
    }
    if (cut) {
        out += "... (cut)";
    }
    return out;
}

} // namespace redlock::detail
