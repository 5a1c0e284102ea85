#ifndef REDLOCK_SRC_SIGPIPE_GUARD_HPP
#define REDLOCK_SRC_SIGPIPE_GUARD_HPP

#include <csignal>

namespace redlock::detail {

/// hiredis writes with write(2), and writing to a connection the peer has reset raises
/// SIGPIPE, which kills the whole process unless the application ignores it. A library must
/// not ask for that: for the lifetime of this guard SIGPIPE is blocked on the calling thread,
/// and one raised meanwhile is taken off the thread's pending set before unblocking. The
/// write itself then fails with EPIPE, which hiredis reports as a lost connection.
class sigpipe_guard {
public:
    sigpipe_guard() noexcept;
    ~sigpipe_guard();
    sigpipe_guard(const sigpipe_guard&) = delete;
    sigpipe_guard& operator=(const sigpipe_guard&) = delete;

private:
    sigset_t previous_mask_{};
    bool was_pending_ = false;
};

} // namespace redlock::detail

#endif
