// status: what every node holds for KEY. Read through the library's own inspection
// (client::async_inspect), so that it reaches nodes exactly as the locks do (TLS, AUTH,
// SELECT, bounded replies) and knows each server's run_id; every node at once, within one
// deadline.
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/json_output.hpp"
#include "cli/terminal.hpp"
#include "core/validate.hpp"
#include "transport/server_text.hpp" // configured_secrets

#include <redlock/client.hpp>
#include <redlock/metrics.hpp>
#include <redlock/node_address.hpp>

#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <cctype>
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
/// "  (quarantined: votes count again in 8.0 s)" for a node in restart quarantine,
/// "  (can evict keys: maxmemory-policy volatile-ttl: votes do not count)" for a node that
/// can evict keys, and "  (not a primary: INFO replication says role:slave: votes do not
/// count)" for a replica: its view is shown, but a lock it grants does not count (yet).
std::string quarantine_note(const node_view& view, bool accept_evicting) {
    std::string note;
    if (!view.not_primary.empty()) {
        note = "  (" + printable(view.not_primary, shown) + ": votes do not count)";
    }
    if (!view.can_evict.empty()) {
        note +=
            "  (" + printable(view.can_evict, shown) +
            (accept_evicting ? ": accepted, --accept-evicting-nodes)" : ": votes do not count)");
    }
    if (!view.quarantined_for) {
        return note;
    }
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.1f",
                  std::chrono::duration<double>(*view.quarantined_for).count());
    return note + "  (quarantined: " + printable(view.quarantine_cause, shown) +
           ", votes count again in " + seconds + " s; " + printable(view.quarantine_basis, shown) +
           ")";
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

/// What one node said of a key, as the text and the JSON both name it.
enum class node_state { timeout, unreachable, same_server, refused, not_a_lock, error, readable };

node_state state_of(const node_view& view) {
    if (view.error == errc::node_timeout) {
        return node_state::timeout;
    }
    if (unreachable(view)) {
        return node_state::unreachable;
    }
    // The library counts a server reached under two names once (errc::duplicate_node).
    if (view.same_server_as) {
        return node_state::same_server;
    }
    if (view.error == errc::server_error) {
        return node_state::refused;
    }
    if (view.error == errc::lock_mismatch) {
        return node_state::not_a_lock;
    }
    return view.error ? node_state::error : node_state::readable;
}

/// One node's view of `key` as --json gives it (docs/cli.md). Node text is escaped, and
/// cleared of configured passwords, as the text output does it.
boost::json::object view_json(const node_view& view, const std::string& key,
                              const std::string& token, const std::vector<std::string>& names,
                              milliseconds bound, const node_text& shown_text) {
    namespace json = boost::json;
    json::object out;
    out["node"] = names[view.node];
    out["key"] = key;
    out["state"] = nullptr; // set below; here so that it comes first after the names
    const auto state = state_of(view);
    static constexpr const char* state_names[] = {"unreachable", "unreachable", "same_server",
                                                  "refused",     "not_a_lock",  "error"};
    const auto text_or_null = [&](const std::string& text) -> json::value {
        return text.empty() ? json::value(nullptr) : json::value(shown_text(text));
    };
    out["error"] =
        view.error ? json::value(std::string(outcome_label(view.error))) : json::value(nullptr);
    out["reason"] = state == node_state::timeout
                        ? json::value("no answer within " + std::to_string(bound.count()) + " ms")
                        : text_or_null(view.message);
    out["latency_us"] = view.latency.count();
    out["run_id"] = text_or_null(view.run_id);
    out["same_server_as"] =
        view.same_server_as ? json::value(names[*view.same_server_as]) : json::value(nullptr);
    out["quarantined_for_ms"] =
        view.quarantined_for ? json::value(view.quarantined_for->count()) : json::value(nullptr);
    out["quarantine_basis"] = text_or_null(view.quarantine_basis);
    out["quarantine_cause"] = text_or_null(view.quarantine_cause);
    out["can_evict"] = text_or_null(view.can_evict);
    out["not_primary"] = text_or_null(view.not_primary);
    out["restarts_undetectable"] = text_or_null(view.restarts_undetectable);
    out["holder"] = nullptr;
    out["matches"] = nullptr;
    out["pttl_ms"] = nullptr;
    if (state != node_state::readable) {
        out["state"] = state_names[static_cast<int>(state)];
        return out;
    }
    out["pttl_ms"] = view.pttl ? json::value(view.pttl->count()) : json::value(nullptr);
    out["pttl_error"] = view.pttl_error ? json::value(std::string(outcome_label(view.pttl_error)) +
                                                      ": " + printable(view.pttl_message, shown))
                                        : json::value(nullptr);
    if (view.mode == lock_mode::exclusive) {
        out["state"] = view.holder ? "held" : "free";
        if (view.holder) {
            out["holder"] = shown_text(*view.holder);
            if (!token.empty()) {
                out["matches"] = *view.holder == token;
            }
        }
        return out;
    }
    out["state"] = view.mode == lock_mode::shared ? "readers" : "permits";
    if (view.mode == lock_mode::permit) {
        out["permits"] = view.permits;
    }
    json::array holders;
    bool ours = false;
    for (const auto& h : view.holders) {
        if (h.left.count() <= 0) {
            continue; // past its deadline: the next script run purges it
        }
        ours = ours || (!token.empty() && h.token == token);
        holders.push_back(
            json::object{{"token", shown_text(h.token)}, {"left_ms", h.left.count()}});
    }
    out["holders"] = std::move(holders);
    out["writer_waiting_ms"] =
        view.writer_waiting ? json::value(view.writer_waiting->count()) : json::value(nullptr);
    if (!token.empty()) {
        out["matches"] = ours;
    }
    return out;
}

/// The text line of one node's view of a key; returns whether it holds `token`.
bool print_view(const node_view& view, const std::string& token,
                const std::vector<node_address>& addresses, milliseconds bound, const options& o,
                const node_text& shown_text) {
    std::cout << std::left << std::setw(24) << addresses[view.node].display() << " ";
    switch (state_of(view)) {
    case node_state::timeout:
        std::cout << "unreachable (no answer within " << bound.count() << " ms)\n";
        return false;
    case node_state::unreachable:
        std::cout << "unreachable (" << printable(view.message, shown) << ")\n";
        return false;
    case node_state::same_server:
        std::cout << "same server as " << addresses[*view.same_server_as].display() << " (run_id "
                  << shown_text(view.run_id) << "): not counted\n";
        return false;
    case node_state::refused:
        std::cout << "refused (" << printable(view.message, shown) << ")\n";
        return false;
    case node_state::not_a_lock:
        std::cout << "not a lock (" << shown_text(view.message) << ")"
                  << quarantine_note(view, o.accept_evicting_nodes) << "\n";
        return false;
    case node_state::error:
        std::cout << "error (" << printable(view.message, shown) << ")\n";
        return false;
    case node_state::readable:
        break;
    }
    if (view.mode != lock_mode::exclusive) {
        return describe_holders(view, token, o, shown_text);
    }
    if (!view.holder) {
        std::cout << "free" << quarantine_note(view, o.accept_evicting_nodes) << "\n";
        return false;
    }
    std::cout << "held  " << describe_pttl(view) << "  token " << shown_text(*view.holder);
    const bool ours = !token.empty() && *view.holder == token;
    if (!token.empty()) {
        std::cout << (ours ? "  (matches)" : "  (another token)");
    }
    std::cout << quarantine_note(view, o.accept_evicting_nodes) << "\n";
    return ours;
}

/// Whether the node told what the key holds: it counts towards the quorum that status needs.
bool answered(const node_view& view) {
    const auto state = state_of(view);
    return state == node_state::readable || state == node_state::not_a_lock;
}

/// A token as acquire prints it: 32 lowercase hex digits (128 bits).
bool is_token(std::string_view text) {
    return text.size() == 32 && std::all_of(text.begin(), text.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

/// Hex digits only, and long: what a token cut short or upper-cased looks like.
bool is_almost_token(std::string_view text) {
    return text.size() >= 16 && std::all_of(text.begin(), text.end(), [](char c) {
               return std::isxdigit(static_cast<unsigned char>(c)) != 0;
           });
}

/// KEY... [TOKEN]: the last of several arguments is TOKEN when it is shaped like one (a lock
/// over several keys is shown as `status a b`, as acquire takes it); --token gives it
/// explicitly. A token given that is not shaped like ours is a usage error: read as a key,
/// it would show a free lock, and without the check the holder's token could never match.
bool keys_and_token(const options& o, std::vector<std::string>& keys, std::string& token) {
    keys = o.positional;
    token = o.token;
    const auto fail = [](const std::string& why) {
        std::cerr << "redlock status: " << printable(why) << " (see redlock status --help)\n";
        return false;
    };
    if (!token.empty() && !is_token(token)) {
        return fail("--token \"" + token +
                    "\" is not a token: a token is 32 lowercase hex "
                    "digits, as acquire prints it");
    }
    if (token.empty() && keys.size() >= 2) {
        if (is_token(keys.back())) {
            token = keys.back();
            keys.pop_back();
        } else if (is_almost_token(keys.back())) {
            return fail("\"" + keys.back() + "\" looks like a token but is not one (a token is " +
                        "32 lowercase hex digits, as acquire prints it); for a key of that name, "
                        "give the token, if any, with --token");
        }
    }
    if (keys.empty()) {
        return fail("expected KEY... [TOKEN]");
    }
    return true;
}

} // namespace

int status_command(const options& o) {
    std::vector<std::string> keys;
    std::string token;
    if (!keys_and_token(o, keys, token)) {
        return exit_usage;
    }
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
    std::vector<inspect_result> views(keys.size());
    // Every key at once, each within the same bound.
    std::size_t left = keys.size();
    for (std::size_t k = 0; k < keys.size(); ++k) {
        locks->async_inspect(keys[k], bound, [&, k](boost::system::error_code e, inspect_result r) {
            if (e && !error) {
                error = e;
            }
            views[k] = std::move(r);
            if (--left == 0) {
                // Nothing else to do: the connections close and io.run() returns.
                locks->close();
            }
        });
    }
    io.run();
    std::vector<std::string> names;
    for (const auto& a : addresses) {
        names.push_back(a.display());
    }
    const std::size_t quorum = addresses.size() / 2 + 1;
    if (error) {
        std::string message;
        for (const auto& v : views) {
            message = message.empty() ? v.message : message;
        }
        const int status = error == errc::invalid_argument ? exit_usage : exit_unreachable;
        if (o.json) {
            auto out = outcome_json(o, keys, error, status, message);
            out["token"] = token.empty() ? boost::json::value(nullptr) : boost::json::value(token);
            out["quorum"] = quorum;
            out["nodes"] = boost::json::array();
            print_json(out);
        }
        std::cerr << "redlock status: " << printable(error.message() + ": " + message) << "\n";
        return status;
    }

    if (const auto note = built_in_nodes_note(o); !note.empty() && !o.quiet) {
        std::cerr << "redlock status: reporting on" << note << "\n";
    }
    const node_text shown_text(config, addresses);
    // A key is known when a quorum answered for it; with TOKEN, held when a quorum holds it.
    bool every_key_known = true;
    bool every_key_held = true;
    boost::json::array nodes;
    for (std::size_t k = 0; k < keys.size(); ++k) {
        std::size_t reachable = 0, matching = 0;
        if (keys.size() > 1 && !o.json) {
            std::cout << printable(keys[k], shown) << ":\n";
        }
        for (const auto& view : views[k].nodes) {
            reachable += answered(view) ? 1 : 0;
            if (o.json) {
                auto entry = view_json(view, keys[k], token, names, bound, shown_text);
                const auto& matches = entry["matches"];
                matching += matches.is_bool() && matches.get_bool() ? 1 : 0;
                nodes.push_back(std::move(entry));
            } else {
                matching += print_view(view, token, addresses, bound, o, shown_text) ? 1 : 0;
            }
        }
        every_key_known = every_key_known && reachable >= quorum;
        every_key_held = every_key_held && matching >= quorum;
    }

    const int status = !every_key_known                    ? exit_unreachable
                       : !token.empty() && !every_key_held ? exit_lock_lost
                                                           : exit_ok;
    if (o.json) {
        const std::error_code outcome = status == exit_unreachable ? errc::quorum_unreachable
                                        : status == exit_lock_lost ? errc::lock_lost
                                                                   : std::error_code();
        auto out = outcome_json(o, keys, outcome, status, "");
        out["token"] = token.empty() ? boost::json::value(nullptr) : boost::json::value(token);
        out["quorum"] = quorum;
        out["nodes"] = std::move(nodes);
        print_json(out);
    }
    return status;
}

} // namespace redlock::cli
