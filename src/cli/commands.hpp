#ifndef REDLOCK_CLI_COMMANDS_HPP
#define REDLOCK_CLI_COMMANDS_HPP

#include "cli/options.hpp"

#include <redlock/config.hpp>

#include <span>
#include <string>

namespace redlock::cli {

/// Each returns the process exit status.
int run_command(const options& o);
int acquire_command(const options& o);
int extend_command(const options& o);
int release_command(const options& o);
int status_command(const options& o);
int nodes_command(const options& o);
int demo_command(const options& o);

/// The client configuration every subcommand uses; messages go to stderr unless quiet.
client_config make_config(const options& o);
/// " (nodes: the built-in ...)" when the nodes are the built-in ones, else empty.
std::string built_in_nodes_note(const options& o);
/// Prints to stderr unless quiet, naming the built-in nodes when they are used.
void say(const options& o, const std::string& message);
/// The keys as the messages name them: separated by spaces.
std::string keys_text(std::span<const std::string> keys);

} // namespace redlock::cli

#endif
