// status: what every node holds for KEY. Read through the library's own node connections,
// so that it reaches nodes exactly as the locks do (TLS, AUTH, SELECT, bounded replies) and
// learns each server's run_id; every node at once, within one deadline.
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/terminal.hpp"
#include "client/environment.hpp"
#include "core/validate.hpp"
#include "transport/commands.hpp"

#include <redlock/node_address.hpp>

#include <boost/asio/io_context.hpp>

#include <iomanip>
#include <iostream>
#include <map>
#include <memory>

namespace redlock::cli {

namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;

/// What one node answered to one command.
struct answer {
    bool arrived = false;
    std::error_code error; ///< no reply: the connection failed or was refused
    int type = 0;          ///< REDIS_REPLY_*
    std::string text;      ///< a string, status or error reply; the failure when `error`
    long long integer = 0;
};

/// Every node's answers to GET and PTTL; the tag of node i's GET is 2i, of its PTTL 2i+1.
class collector final : public detail::reply_target {
public:
    explicit collector(std::size_t nodes)
        : answers_(nodes * 2) {}

    void on_reply(std::uint64_t tag, const detail::node_reply& r) override {
        if (tag >= answers_.size() || answers_[tag].arrived) {
            return;
        }
        auto& a = answers_[tag];
        a.arrived = true;
        ++arrived_;
        a.error = r.error;
        if (r.error || !r.reply) {
            a.text = std::string(r.message);
            return;
        }
        a.type = r.reply->type;
        a.integer = r.reply->type == REDIS_REPLY_INTEGER ? r.reply->integer : 0;
        if (r.reply->str) {
            a.text.assign(r.reply->str, r.reply->len);
        }
    }

    const answer& get(std::size_t node) const { return answers_[node * 2]; }
    const answer& pttl(std::size_t node) const { return answers_[node * 2 + 1]; }
    bool complete() const { return arrived_ == answers_.size(); }

private:
    std::vector<answer> answers_;
    std::size_t arrived_ = 0;
};

/// Node text is cut after this many bytes: a value or error of megabytes is not for reading.
constexpr std::size_t shown = 200;

std::string describe_pttl(const answer& p) {
    if (!p.arrived) {
        return "pttl: no answer";
    }
    if (p.error) {
        return "pttl failed (" + printable(p.text, shown) + ")";
    }
    if (p.type == REDIS_REPLY_ERROR) {
        return "pttl refused (" + printable(p.text, shown) + ")";
    }
    if (p.type != REDIS_REPLY_INTEGER) {
        return "pttl: unexpected reply";
    }
    if (p.integer == -1) {
        return "no expiry";
    }
    if (p.integer == -2) {
        return "expired meanwhile";
    }
    return "pttl " + std::to_string(p.integer) + " ms";
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
    auto replies = std::make_shared<collector>(addresses.size());
    std::vector<std::unique_ptr<detail::node_link>> links;
    const detail::command get{{"GET", key}, 2};
    const detail::command pttl{{"PTTL", key}, 2};
    // The library's own connections: TLS, AUTH, SELECT and the reply bounds as for the locks.
    auto make_link = detail::environment::production().make_link;
    try {
        for (std::size_t node = 0; node < addresses.size(); ++node) {
            links.push_back(make_link(io.get_executor(), addresses[node], config));
            links.back()->send(get, replies, node * 2);
            links.back()->send(pttl, replies, node * 2 + 1);
        }
    } catch (const std::system_error& e) {
        std::cerr << "redlock status: " << printable(e.what()) << "\n";
        return exit_usage;
    }
    const auto bound = config.connect_timeout + std::max(o.node_timeout, milliseconds(200));
    const auto deadline = std::chrono::steady_clock::now() + bound;
    while (!replies->complete() && io.run_one_until(deadline) > 0) {
    }

    std::size_t reachable = 0, matching = 0;
    std::map<std::string, std::size_t> counted_run_ids; // run_id -> first node with it
    for (std::size_t node = 0; node < addresses.size(); ++node) {
        std::cout << std::left << std::setw(24) << addresses[node].display() << " ";
        const auto& value = replies->get(node);
        if (!value.arrived) {
            std::cout << "unreachable (no answer within " << bound.count() << " ms)\n";
            continue;
        }
        if (value.error) {
            std::cout << "unreachable (" << printable(value.text, shown) << ")\n";
            continue;
        }
        // The library counts a server reached under two names once (errc::duplicate_node).
        const std::string run_id(links[node]->run_id());
        if (!run_id.empty()) {
            const auto [first, inserted] = counted_run_ids.emplace(run_id, node);
            if (!inserted) {
                std::cout << "same server as " << addresses[first->second].display() << " (run_id "
                          << printable(run_id, shown) << "): not counted\n";
                continue;
            }
        }
        if (value.type == REDIS_REPLY_ERROR) {
            std::cout << "refused (" << printable(value.text, shown) << ")\n";
            continue;
        }
        if (value.type != REDIS_REPLY_NIL && value.type != REDIS_REPLY_STRING) {
            std::cout << "error (unexpected reply to GET)\n";
            continue;
        }
        ++reachable;
        if (value.type == REDIS_REPLY_NIL) {
            std::cout << "free\n";
            continue;
        }
        std::cout << "held  " << describe_pttl(replies->pttl(node)) << "  token "
                  << printable(value.text, shown);
        if (!token.empty()) {
            const bool ours = value.text == token;
            matching += ours ? 1 : 0;
            std::cout << (ours ? "  (matches)" : "  (another token)");
        }
        std::cout << "\n";
    }

    // What is still in flight is dropped with the connections; the io_context then runs
    // the aborted handlers to completion.
    for (auto& link : links) {
        link->shutdown(milliseconds(0));
    }
    links.clear();
    io.run();

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
