#ifndef REDLOCK_CLI_OPTIONS_HPP
#define REDLOCK_CLI_OPTIONS_HPP

#include "cli/exit_codes.hpp"

#include <redlock/config.hpp>

#include <chrono>
#include <csignal>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::cli {

/// The longest duration any flag takes: the library's bound on every duration (max_ttl), so
/// that no sum of one with a clock reading can overflow.
inline constexpr std::chrono::milliseconds max_duration = max_ttl;

/// A duration as the command line writes it: a decimal number, with or without a fraction,
/// then a unit: `250ms`, `1.5s`, `.5s`, `2m`, `0.25h`. A bare number is seconds (`7`, `0.5`),
/// as for flock -w. The result must be a whole number of milliseconds, from 0 to
/// max_duration. On anything else returns empty and puts why in `why`, worded to follow the
/// quoted text ("is negative", "has an unknown unit ...").
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text, std::string& why);

/// Longest first line read from --password-file.
inline constexpr std::size_t max_password_size = 4096;

/// The nodes used when neither --nodes nor REDLOCK_NODES names any.
inline constexpr const char* built_in_nodes =
    "127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003,127.0.0.1:7004,127.0.0.1:7005";

/// Everything the subcommands take. Defaults documented in `redlock --help`.
struct options {
    std::string command;    ///< a subcommand, or "help" or "version"
    std::string help_topic; ///< help: the subcommand asked about; empty for the overview
    std::vector<std::string> nodes;
    /// Where `nodes` came from. built_in_nodes are named in every message that reports on
    /// them: someone else's nodes may answer there.
    enum class source { built_in, environment, flag } nodes_from = source::built_in;
    std::chrono::milliseconds ttl{30000};
    /// client_config::fleet_max_ttl: --max-ttl, else $REDLOCK_MAX_TTL, else the library's.
    std::chrono::milliseconds max_ttl = default_fleet_max_ttl;
    std::chrono::milliseconds wait{0};
    unsigned retries = 0;
    /// run, acquire: the exit status when the lock could not be had now (-E, as flock's).
    unsigned conflict_exit_code = exit_not_acquired;
    std::chrono::milliseconds node_timeout{50};
    int loss_signal = SIGTERM;             ///< run: sent to the child on lock loss (0: none)
    std::chrono::milliseconds grace{5000}; ///< run: then SIGKILL after this
    bool quiet = false;
    bool quarantine = true;
    /// client_config::eviction.accept_evicting_nodes (--accept-evicting-nodes)
    bool accept_evicting_nodes = false;
    bool fence = false;                ///< acquire and run: also take a fencing token
    bool shared = false;               ///< run, acquire, extend: a reader of a read-write lock
    unsigned permits = 0;              ///< run, acquire, extend: a permit of a semaphore (0: none)
    bool force = false;                ///< release: delete whatever lock state, any token
    bool yes = false;                  ///< release --force: no confirmation asked
    std::string token;                 ///< status --token: the token to look for
    bool json = false;                 ///< acquire, release, status: one JSON object on stdout
    std::string password_file;         ///< read by load_credentials, never by parse_options
    std::string node_credentials_file; ///< likewise: `ADDRESS [USER] PASSWORD` lines
    tls_options tls;
    // demo
    unsigned buyers = 200;
    unsigned stock = 100;
    unsigned instances = 6;
    std::vector<std::string> positional; ///< KEY..., TOKEN
    std::vector<std::string> child;      ///< run: after --
};

/// Parses argv; on error returns empty and puts what is wrong in `error`. Options may stand
/// before or after the subcommand; one that the subcommand does not take is an error.
/// `environment_nodes` is $REDLOCK_NODES, `environment_max_ttl` $REDLOCK_MAX_TTL,
/// `environment_node_timeout` $REDLOCK_NODE_TIMEOUT (any may be null); a flag wins over its
/// variable.
std::optional<options> parse_options(int argc, const char* const* argv,
                                     const char* environment_nodes, std::string& error,
                                     const char* environment_max_ttl = nullptr,
                                     const char* environment_node_timeout = nullptr);

/// What parse_options leaves to the file system and the environment: each node's own
/// credentials (--node-credentials, else `environment_credentials_file`, i.e.
/// $REDLOCK_NODE_CREDENTIALS_FILE; may be null) go into the addresses they name, then the
/// password (the first line of --password-file, else `environment_password`, i.e.
/// $REDLOCK_PASSWORD; may be null) into every node address that still has none, and the TLS
/// files must be readable. An address's own password always wins. On error returns false
/// and puts what is wrong in `error`, which never holds a password.
bool load_credentials(options& o, const char* environment_password, std::string& error,
                      const char* environment_credentials_file = nullptr);

/// The node address `text` with `password` in it (and `user`, unless empty: then the
/// address's own), unless it has a password already (then, or when `text` is no valid
/// address, `text` itself: validation reports it later).
std::string with_password(const std::string& text, std::string_view password,
                          std::string_view user = {});

/// The text of `redlock help COMMAND`: its usage, what it does, its options. With an empty
/// or unknown `command`, the overview of `redlock --help`.
std::string help_text(std::string_view command);

/// The lock options the subcommands use.
lock_options to_lock_options(const options& o);

} // namespace redlock::cli

#endif
