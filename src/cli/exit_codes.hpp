#ifndef REDLOCK_CLI_EXIT_CODES_HPP
#define REDLOCK_CLI_EXIT_CODES_HPP

#include <system_error>

namespace redlock::cli {

/// Exit statuses, in the spirit of flock(1) and sysexits.h. `run` otherwise exits with its
/// child's status (128 + signal when the child was killed by a signal).
enum exit_code : int {
    exit_ok = 0,
    exit_usage = 64,           ///< bad command line (EX_USAGE)
    exit_data = 65,            ///< the nodes' data refused: a fencing counter (EX_DATAERR)
    exit_unreachable = 69,     ///< too few nodes reachable for a quorum (EX_UNAVAILABLE)
    exit_internal = 70,        ///< unexpected failure (EX_SOFTWARE)
    exit_not_acquired = 75,    ///< held by another, granted too slowly, or too many nodes
                               ///< in restart quarantine (EX_TEMPFAIL: try again later)
    exit_lock_lost = 79,       ///< the lock was lost, or the token does not hold it
    exit_command_failed = 127, ///< run: the command could not be started
};

/// The exit status for an operation's error; `conflict` stands for exit_not_acquired (the
/// lock could not be had now: held by another, granted too slowly, nodes in quarantine), as
/// flock(1)'s -E sets it.
int exit_for(std::error_code error, int conflict = exit_not_acquired);

} // namespace redlock::cli

#endif
