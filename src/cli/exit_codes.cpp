#include "cli/exit_codes.hpp"

#include <redlock/error.hpp>

namespace redlock::cli {

int exit_for(std::error_code error, int conflict) {
    if (!error) {
        return exit_ok;
    }
    if (error == errc::contention || error == errc::validity_expired ||
        error == errc::nodes_quarantined) {
        return conflict;
    }
    if (error == errc::quorum_unreachable) {
        return exit_unreachable;
    }
    // Not a fault of this run, and waiting does not mend it: an operator repairs the counter.
    if (error == errc::fencing_counter_refused) {
        return exit_data;
    }
    if (error == errc::lock_lost) {
        return exit_lock_lost;
    }
    if (error == errc::invalid_argument || error == errc::lock_mismatch) {
        return exit_usage;
    }
    return exit_internal;
}

} // namespace redlock::cli
