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
        }
    }
    // Longest first: a password that contains another is cut whole.
    std::sort(secrets.begin(), secrets.end(),
              [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
    return secrets;
}

std::string printable_server_text(std::string_view text, const std::vector<std::string>& secrets) {
    // Secrets first: a cut could leave a secret's beginning, and a secret may hold bytes
    // that the printable form replaces. Only what can reach the kept part is searched (a
    // node's error may be megabytes long).
    std::size_t longest = 0;
    for (const auto& secret : secrets) {
        longest = std::max(longest, secret.size());
    }
    std::string plain(text.substr(0, max_server_text + longest));
    for (const auto& secret : secrets) {
        for (auto at = plain.find(secret); at != std::string::npos;
             at = plain.find(secret, at + 3)) {
            plain.replace(at, secret.size(), "***");
        }
    }
    std::string_view kept = plain;
    const bool cut = text.size() > max_server_text;
    kept = kept.substr(0, max_server_text);
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
