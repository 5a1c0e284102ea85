#ifndef REDLOCK_CLI_JSON_OUTPUT_HPP
#define REDLOCK_CLI_JSON_OUTPUT_HPP

#include "cli/options.hpp"

#include <redlock/lock.hpp>
#include <redlock/vote.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <span>
#include <string>
#include <system_error>
#include <vector>

namespace redlock::cli {

/// --json: what acquire, release and status print on stdout instead of their text, one
/// object on one line (docs/cli.md lists every field). Nodes are named by host:port (never
/// with credentials); text that came from a node is the library's, with the nodes'
/// passwords already cut out, and anything else a node sent (a holder's token) is escaped
/// as the text output escapes it, so that the JSON stays valid UTF-8.

/// The fields every object starts with: the command, the keys, the outcome (`ok`, or the
/// error's snake_case name: `contention`, `quorum_unreachable`, `lock_lost`...), the exit
/// status, and the message that explains a failure (null on success).
boost::json::object outcome_json(const options& o, std::span<const std::string> keys,
                                 std::error_code error, int exit_status,
                                 const std::string& message);

/// One object per node: its address, its vote (granted, refused, failed, pending), the
/// reason (the error's name and the node's or connection's text; null when it granted) and
/// the latency in microseconds, null while pending). `refused` is what a refusal means for
/// this command ("held by another token" for acquire).
boost::json::array votes_json(const options& o, const std::vector<node_vote>& votes,
                              std::string_view refused);

/// The lock's fields: token, fencing_token (null without --fence), validity_ms, keys held.
void add_lock(boost::json::object& into, const options& o, const lock& l);

/// Writes `value` and a line end on stdout.
void print_json(const boost::json::object& value);

/// The host:port (or unix:///path) of each of `o.nodes`: never its credentials.
std::vector<std::string> node_names(const options& o);

} // namespace redlock::cli

#endif
