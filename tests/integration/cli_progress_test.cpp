// The line `run` and `acquire` keep up to date while they wait for a lock on a terminal, read
// through a pseudo-terminal; and its absence everywhere else.
#include "support/child_process.hpp"
#include "support/fixture.hpp"

#include <cerrno>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

namespace redlock::test {
namespace {

using namespace std::chrono_literals;

struct terminal_run {
    int status = -1;
    std::string screen; ///< everything written to the terminal, stdout and stderr
};

std::string nodes_text() {
    std::string text;
    for (const auto& address : topology::addresses()) {
        text += (text.empty() ? "" : ",") + address;
    }
    return text;
}

std::vector<std::string> redlock_args(const std::vector<std::string>& args) {
    std::vector<std::string> argv{REDLOCK_CLI_PATH, "--no-quarantine", "--nodes", nodes_text()};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
}

/// `redlock ARGS` with a pseudo-terminal as its stdin, stdout and stderr.
terminal_run on_a_terminal(const std::vector<std::string>& args) {
    const auto argv_text = redlock_args(args);
    std::vector<char*> argv;
    for (const auto& a : argv_text) {
        argv.push_back(const_cast<char*>(a.c_str()));
    }
    argv.push_back(nullptr);
    int terminal = -1;
    const pid_t pid = ::forkpty(&terminal, nullptr, nullptr, nullptr);
    if (pid == 0) {
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    terminal_run r;
    if (pid < 0) {
        ADD_FAILURE() << "forkpty: " << std::strerror(errno);
        return r;
    }
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    char buffer[4096];
    for (;;) {
        pollfd p{terminal, POLLIN, 0};
        if (std::chrono::steady_clock::now() > deadline) {
            ADD_FAILURE() << "redlock did not end";
            ::kill(pid, SIGKILL);
            break;
        }
        if (::poll(&p, 1, 100) <= 0) {
            continue;
        }
        const auto got = ::read(terminal, buffer, sizeof buffer);
        if (got <= 0) {
            break; // EIO once the child, the last holder of the terminal, is gone
        }
        r.screen.append(buffer, static_cast<std::size_t>(got));
    }
    int wstatus = 0;
    ::waitpid(pid, &wstatus, 0);
    ::close(terminal);
    r.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
    return r;
}

void held_by_another(const std::string& key) {
    for (int node = 1; node <= static_cast<int>(topology::size()); ++node) {
        ASSERT_EQ(
            inspector(node).run({"SET", key, "0123456789abcdef0123456789abcdef", "PX", "20000"}),
            "OK");
    }
}

TEST_F(nodes_test, cli_waiting_on_a_terminal_shows_one_live_line) {
    held_by_another("progress:k");
    for (const auto& args :
         std::vector<std::vector<std::string>>{{"acquire", "-w", "2s", "progress:k"},
                                               {"run", "-w", "2s", "progress:k", "--", "true"}}) {
        const auto r = on_a_terminal(args);
        EXPECT_EQ(r.status, 75) << args[0] << "\n" << r.screen;
        // Redrawn in place: a carriage return, the line, an erase to its end.
        EXPECT_NE(r.screen.find("\rredlock: waiting for progress:k: 0.5 s, attempt "),
                  std::string::npos)
            << args[0] << "\n"
            << r.screen;
        EXPECT_NE(r.screen.find("\rredlock: waiting for progress:k: 1.5 s, attempt "),
                  std::string::npos)
            << r.screen;
        EXPECT_NE(r.screen.find(", the holder's lock expires in 1"), std::string::npos)
            << "about 18 s of the holder's 20 s are left\n"
            << r.screen;
        EXPECT_NE(r.screen.find("\033[K"), std::string::npos) << r.screen;
        // Cleared before the final note, which stands on a line of its own.
        EXPECT_NE(r.screen.find("\r\033[Kredlock: could not acquire progress:k"), std::string::npos)
            << r.screen;
    }
    // -q: nothing but what the command itself says.
    const auto quiet = on_a_terminal({"acquire", "-q", "-w", "1s", "progress:k"});
    EXPECT_EQ(quiet.status, 75);
    EXPECT_EQ(quiet.screen, "") << quiet.screen;
}

TEST_F(nodes_test, cli_waiting_without_a_terminal_adds_nothing) {
    held_by_another("progress:pipe");
    child_process p(redlock_args({"acquire", "-w", "1500ms", "progress:pipe"}));
    EXPECT_EQ(p.wait(20s), 75);
    const auto err = p.err();
    EXPECT_EQ(err.find("waiting for"), std::string::npos) << err;
    EXPECT_EQ(err.find('\r'), std::string::npos) << err;
    EXPECT_EQ(err.find('\033'), std::string::npos) << err;
    EXPECT_NE(err.find("could not acquire progress:pipe"), std::string::npos) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

} // namespace
} // namespace redlock::test
