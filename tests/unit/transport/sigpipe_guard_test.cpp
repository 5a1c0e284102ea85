// hiredis writes with write(2): without the guard a reset connection kills the process.
#include "transport/sigpipe_guard.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <csignal>
#include <sys/socket.h>
#include <unistd.h>

namespace {

struct closed_peer {
    int fds[2] = {-1, -1};
    closed_peer() {
        EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
        ::close(fds[1]);
    }
    ~closed_peer() { ::close(fds[0]); }
    ssize_t write_one() const { return ::write(fds[0], "x", 1); }
};

bool sigpipe_pending() {
    sigset_t pending;
    sigemptyset(&pending);
    sigpending(&pending);
    return sigismember(&pending, SIGPIPE) == 1;
}

TEST(sigpipe_guard, unguarded_the_write_kills_the_process) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            std::signal(SIGPIPE, SIG_DFL);
            closed_peer peer;
            peer.write_one();
        },
        ::testing::KilledBySignal(SIGPIPE), "");
}

TEST(sigpipe_guard, guarded_the_write_fails_with_epipe_and_leaves_nothing_pending) {
    std::signal(SIGPIPE, SIG_DFL);
    closed_peer peer;
    {
        const redlock::detail::sigpipe_guard guard;
        EXPECT_EQ(peer.write_one(), -1);
        EXPECT_EQ(errno, EPIPE);
    }
    EXPECT_FALSE(sigpipe_pending());
}

TEST(sigpipe_guard, a_sigpipe_pending_before_is_left_for_its_owner) {
    sigset_t pipe_only, previous;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, &previous);
    ::raise(SIGPIPE);
    ASSERT_TRUE(sigpipe_pending());
    {
        const redlock::detail::sigpipe_guard guard;
        closed_peer peer;
        peer.write_one();
    }
    EXPECT_TRUE(sigpipe_pending()) << "not ours to take";
    const timespec no_wait{0, 0};
    sigtimedwait(&pipe_only, nullptr, &no_wait);
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

} // namespace
