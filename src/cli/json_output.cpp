#include "cli/json_output.hpp"

#include "cli/terminal.hpp"

#include <redlock/metrics.hpp>
#include <redlock/node_address.hpp>

#include <boost/json/serialize.hpp>

#include <chrono>
#include <iostream>

namespace redlock::cli {

namespace json = boost::json;

std::vector<std::string> node_names(const options& o) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < o.nodes.size(); ++i) {
        node_address a;
        std::string why;
        // main() checked every address before any command ran; the index is the fallback
        // that can never show a password.
        names.push_back(parse_node_address(o.nodes[i], a, why) ? "node " + std::to_string(i)
                                                               : a.display());
    }
    return names;
}

json::object outcome_json(const options& o, std::span<const std::string> keys,
                          std::error_code error, int exit_status, const std::string& message) {
    json::object out;
    out["command"] = o.command;
    json::array key_list;
    for (const auto& key : keys) {
        key_list.emplace_back(key);
    }
    out["keys"] = std::move(key_list);
    out["outcome"] = std::string(outcome_label(error));
    out["exit_status"] = exit_status;
    if (message.empty()) {
        out["message"] = nullptr;
    } else {
        // The library's text: node texts in it are printable and without secrets already.
        out["message"] = printable(message);
    }
    return out;
}

namespace {

const char* vote_name(node_outcome outcome) {
    switch (outcome) {
    case node_outcome::granted:
        return "granted";
    case node_outcome::refused:
        return "refused";
    case node_outcome::failed:
        return "failed";
    case node_outcome::pending:
        return "pending";
    }
    return "unknown";
}

} // namespace

json::array votes_json(const options& o, const std::vector<node_vote>& votes,
                       std::string_view refused) {
    const auto names = node_names(o);
    json::array out;
    for (const auto& vote : votes) {
        json::object node;
        node["node"] = vote.node < names.size() ? names[vote.node] : std::to_string(vote.node);
        node["vote"] = vote_name(vote.outcome);
        if (vote.error) {
            node["error"] = std::string(outcome_label(vote.error));
        } else {
            node["error"] = nullptr;
        }
        if (!vote.server_message.empty()) {
            node["reason"] = printable(vote.server_message);
        } else if (vote.error) {
            node["reason"] = vote.error.message();
        } else if (vote.outcome == node_outcome::refused) {
            node["reason"] = refused;
        } else {
            node["reason"] = nullptr;
        }
        if (vote.outcome == node_outcome::pending) {
            node["latency_us"] = nullptr;
        } else {
            node["latency_us"] = vote.latency.count();
        }
        out.push_back(std::move(node));
    }
    return out;
}

void add_lock(json::object& into, const options& o, const lock& l) {
    if (!l.held()) {
        into["token"] = nullptr;
        into["fencing_token"] = nullptr;
        into["validity_ms"] = nullptr;
        return;
    }
    into["token"] = l.token();
    if (o.fence) {
        into["fencing_token"] = l.fencing_token();
    } else {
        into["fencing_token"] = nullptr;
    }
    into["validity_ms"] =
        std::chrono::duration_cast<std::chrono::milliseconds>(l.remaining()).count();
}

void print_json(const json::object& value) {
    std::cout << json::serialize(value) << "\n" << std::flush;
}

} // namespace redlock::cli
