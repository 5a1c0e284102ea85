// status: what every node holds for KEY. Read through the library's own inspection
// (client::async_inspect), so that it reaches nodes exactly as the locks do (TLS, AUTH,
// SELECT, bounded replies) and knows each server's run_id; every node at once, within one
// deadline.
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/terminal.hpp"
#include "core/validate.hpp"
#include "transport/server_text.hpp" // configured_secrets

#include <redlock/client.hpp>
#include <redlock/node_address.hpp>

#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <optional>

namespace redlock::cli {

namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;

/// Node text is cut after this many bytes: a value or error of megabytes is not for reading.
constexpr std::size_t shown = 200;

std::string describe_pttl(const node_view& view) {
    if (view.pttl_error == errc::node_timeout) {
        return "pttl: no answer";
    }
    if (view.pttl_error == errc::server_error) {
        return "pttl refused (" + printable(view.pttl_message, shown) + ")";
    }
    if (view.pttl_error == errc::unexpected_reply) {
        return "pttl: unexpected reply";
    }
    if (view.pttl_error || !view.pttl) {
        return "pttl failed (" + printable(view.pttl_message, shown) + ")";
    }
    if (*view.pttl == milliseconds(-1)) {
        return "no expiry";
    }
    if (*view.pttl == milliseconds(-2)) {
        return "expired meanwhile";
    }
    return "pttl " + std::to_string(view.pttl->count()) + " ms";
}

/// Whether the node gave GET no reply at all (as opposed to an error reply or an odd one).
/// "  (quarantined: votes count again in 8.0 s)" for a node in restart quarantine, and
/// "  (can evict keys: maxmemory-policy volatile-ttl: votes do not count)" for a node that
/// can evict keys: its view is shown, but a lock it grants does not count (yet).
std::string quarantine_note(const node_view& view, bool accept_evicting) {
    std::string note;
    if (!view.can_evict.empty()) {
        note = "  (" + printable(view.can_evict, shown) +
               (accept_evicting ? ": accepted, --accept-evicting-nodes)" : ": votes do not count)");
    }
    if (!view.quarantined_for) {
        return note;
    }
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.1f",
                  std::chrono::duration<double>(*view.quarantined_for).count());
    return note + "  (quarantined: votes count again in " + seconds + " s)";
}

/// What a node stored or says, for the terminal: the value under a key is anybody's text, so
/// every configured password is cut out of it, as out of every vote's server text
/// (configured_secrets(), printable_server_text()); only the display is, comparisons use
/// what the node sent.
class node_text {
public:
    node_text(const client_config& config, const std::vector<node_address>& addresses) {
        for (const auto& address : addresses) {
            for (auto& secret : detail::configured_secrets(config, address.password)) {
                if (std::find(secrets_.begin(), secrets_.end(), secret) == secrets_.end()) {
                    secrets_.push_back(std::move(secret));
                }
            }
        }
        // Longest first, as configured_secrets() orders them: a password holding another is
        // cut whole.
        std::sort(secrets_.begin(), secrets_.end(),
                  [](const auto& a, const auto& b) { return a.size() > b.size(); });
    }
    /// Each secret becomes `***` (longest first at every position, on the bytes as stored),
    /// then the terminal's escaping (printable()) applies as to any other text.
    std::string operator()(std::string_view text) const {
        std::string scrubbed;
        for (std::size_t at = 0; at < text.size();) {
            const auto secret =
                std::find_if(secrets_.begin(), secrets_.end(),
                             [&](const std::string& s) { return text.substr(at).starts_with(s); });
            if (secret != secrets_.end()) {
                scrubbed += "***";
                at += secret->size();
            } else {
                scrubbed += text[at++];
            }
        }
        return printable(scrubbed, shown);
    }

private:
    std::vector<std::string> secrets_;
};

/// "readers 2 [pttl 900 ms]: T1 (900 ms left), T2 (450 ms left)  writer waiting 800 ms"
/// or "permits 2 of 3 ...". Returns whether `token` is one of the live holders.
bool describe_holders(const node_view& view, const std::string& token, const options& o,
                      const node_text& shown_text) {
    std::size_t live = 0;
    bool ours = false;
    std::string list;
    for (const auto& h : view.holders) {
        if (h.left.count() <= 0) {
            continue; // past its deadline: the next script run purges it
        }
        ++live;
        const bool match = !token.empty() && h.token == token;
        ours = ours || match;
        list += (list.empty() ? "" : ", ") + shown_text(h.token) + " (" +
                std::to_string(h.left.count()) + " ms left" + (match ? ", matches" : "") + ")";
    }
    if (view.mode == lock_mode::shared) {
        std::cout << "readers " << live;
    } else {
        std::cout << "permits " << live << " of " << view.permits;
    }
    std::cout << "  " << describe_pttl(view);
    if (!list.empty()) {
        std::cout << "  " << list;
    }
    if (view.writer_waiting) {
        std::cout << "  writer waiting (new readers refused for " << view.writer_waiting->count()
                  << " ms)";
    }
    if (!token.empty() && !ours) {
        std::cout << "  (token not among them)";
    }
    std::cout << quarantine_note(view, o.accept_evicting_nodes) << "\n";
    return ours;
}

bool unreachable(const node_view& view) {
    return view.error && view.error != errc::server_error && view.error != errc::unexpected_reply &&
           view.error != errc::lock_mismatch;
}

} // namespace

int status_command(const options& o) {
    if (o.positional.empty() || o.positional.size() > 2) {
        std::cerr << "redlock status: expected KEY [TOKEN] (see redlock status --help)\n";
        return exit_usage;
    }
    const std::string& key = o.positional[0];
    const std::string token = o.positional.size() == 2 ? o.positional[1] : "";
    const client_config config = make_config(o);
    std::vector<node_address> addresses;
    if (auto why = detail::check_client_config(config, addresses); !why.empty()) {
        std::cerr << "redlock status: " << why << "\n";
        return exit_usage;
    }

    asio::io_context io;
    std::optional<client> locks;
    try {
        locks.emplace(io.get_executor(), config);
    } catch (const std::system_error& e) {
        std::cerr << "redlock status: " << printable(e.what()) << "\n";
        return exit_usage;
    }
    const auto bound = config.connect_timeout + std::max(o.node_timeout, milliseconds(200));
    boost::system::error_code error;
    inspect_result views;
    locks->async_inspect(key, bound, [&](boost::system::error_code e, inspect_result r) {
        error = e;
        views = std::move(r);
        // Nothing else to do: the connections close and io.run() returns.
        locks->close();
    });
    io.run();
    if (error) {
        std::cerr << "redlock status: " << printable(error.message() + ": " + views.message)
                  << "\n";
        return error == errc::invalid_argument ? exit_usage : exit_unreachable;
    }

    if (const auto note = built_in_nodes_note(o); !note.empty() && !o.quiet) {
        std::cerr << "redlock status: reporting on" << note << "\n";
    }
    const node_text shown_text(config, addresses);
    std::size_t reachable = 0, matching = 0;
    for (const auto& view : views.nodes) {
        std::cout << std::left << std::setw(24) << addresses[view.node].display() << " ";
        if (view.error == errc::node_timeout) {
            std::cout << "unreachable (no answer within " << bound.count() << " ms)\n";
            continue;
        }
        if (unreachable(view)) {
            std::cout << "unreachable (" << printable(view.message, shown) << ")\n";
            continue;
        }
        // The library counts a server reached under two names once (errc::duplicate_node).
        if (view.same_server_as) {
            std::cout << "same server as " << addresses[*view.same_server_as].display()
                      << " (run_id " << shown_text(view.run_id) << "): not counted\n";
            continue;
        }
        if (view.error == errc::server_error) {
            std::cout << "refused (" << printable(view.message, shown) << ")\n";
            continue;
        }
        if (view.error == errc::lock_mismatch) {
            ++reachable;
            std::cout << "not a lock (" << shown_text(view.message) << ")"
                      << quarantine_note(view, o.accept_evicting_nodes) << "\n";
            continue;
        }
        if (view.error) {
            std::cout << "error (" << printable(view.message, shown) << ")\n";
            continue;
        }
        ++reachable;
        if (view.mode != lock_mode::exclusive) {
            const bool ours = describe_holders(view, token, o, shown_text);
            matching += ours ? 1 : 0;
            continue;
        }
        if (!view.holder) {
            std::cout << "free" << quarantine_note(view, o.accept_evicting_nodes) << "\n";
            continue;
        }
        std::cout << "held  " << describe_pttl(view) << "  token " << shown_text(*view.holder);
        if (!token.empty()) {
            const bool ours = *view.holder == token;
            matching += ours ? 1 : 0;
            std::cout << (ours ? "  (matches)" : "  (another token)");
        }
        std::cout << quarantine_note(view, o.accept_evicting_nodes) << "\n";
    }

    const std::size_t quorum = addresses.size() / 2 + 1;
    if (reachable < quorum) {
        return exit_unreachable;
    }
    if (!token.empty()) {
        return matching >= quorum ? exit_ok : exit_lock_lost;
    }
    return exit_ok;
}

} // namespace redlock::cli
