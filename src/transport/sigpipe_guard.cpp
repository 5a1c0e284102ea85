#include "transport/sigpipe_guard.hpp"

#include <pthread.h>
#include <time.h>

namespace redlock::detail {

namespace {

sigset_t only_sigpipe() noexcept {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    return set;
}

bool sigpipe_pending() noexcept {
    sigset_t pending;
    sigemptyset(&pending);
    return sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
}

} // namespace

sigpipe_guard::sigpipe_guard() noexcept {
    // A SIGPIPE that was pending before belongs to someone else: leave it alone.
    was_pending_ = sigpipe_pending();
    const auto set = only_sigpipe();
    pthread_sigmask(SIG_BLOCK, &set, &previous_mask_);
}

sigpipe_guard::~sigpipe_guard() {
    if (!was_pending_ && sigpipe_pending()) {
        const auto set = only_sigpipe();
        const timespec no_wait{0, 0};
        sigtimedwait(&set, nullptr, &no_wait);
    }
    pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
}

} // namespace redlock::detail
