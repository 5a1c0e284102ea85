#include "transport/server_text.hpp"

#include "redlock/node_address.hpp"

#include <algorithm>

namespace redlock::detail {

std::vector<std::string> configured_secrets(const client_config& config,
                                            std::string_view own_password) {
    std::vector<std::string> secrets;
    const auto add = [&secrets](std::string_view password) {
        if (!password.empty() &&
            std::find(secrets.begin(), secrets.end(), password) == secrets.end()) {
            secrets.emplace_back(password);
        }
    };
    add(own_password);
    for (const auto& text : config.nodes) {
        node_address address;
        std::string why;
        if (!parse_node_address(text, address, why)) {
            add(address.password);
            add(address.sentinel_password);
        }
    }
    // Longest first: a password that contains another is cut whole.
    std::sort(secrets.begin(), secrets.end(),
              [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
    return secrets;
}

std::string printable_server_text(std::string_view text, const std::vector<std::string>& secrets) {
    // Secrets first, on the text as the node sent it (a secret may hold bytes that the
    // printable form replaces), and from the start: the beginning of the scrubbed text is
    // built until it is longer than what is kept, so that a secret starting anywhere in the
    // kept part is cut whole, however many came before it (cutting the raw text first left
    // a secret's beginning in view once earlier ones had shrunk to ***). Secrets are tried
    // longest first at every position; a node's error may be megabytes long, and only the
    // kept part is ever looked at.
    std::string plain;
    std::size_t at = 0;
    while (at < text.size() && plain.size() <= max_server_text) {
        const auto secret = std::find_if(secrets.begin(), secrets.end(), [&](const std::string& s) {
            return text.compare(at, s.size(), s) == 0;
        });
        if (secret != secrets.end()) {
            plain += "***";
            at += secret->size();
        } else {
            plain += text[at++];
        }
    }
    const bool cut = plain.size() > max_server_text || at < text.size();
    const std::string_view kept = std::string_view(plain).substr(0, max_server_text);
    std::string out;
    out.reserve(kept.size() + 16);
    for (const char c : kept) {
        const auto u = static_cast<unsigned char>(c);
        out.push_back(u < 0x20 || u > 0x7e ? '?' : c);
    }
    if (cut) {
        out += "... (cut)";
    }
    return out;
}

} // namespace redlock::detail
