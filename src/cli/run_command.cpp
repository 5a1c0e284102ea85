// run: hold KEY (renewed) while a child command runs; release when it exits.
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/progress.hpp"

#include <redlock/client.hpp>
#include <redlock/watchdog.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <optional>
#include <string_view>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace redlock::cli {

namespace asio = boost::asio;

namespace {

/// One `run`: the lock, the child, and what ends them. Lives on one io_context thread.
class runner {
public:
    runner(const options& o, asio::io_context& io)
        : o_(o)
        , io_(io)
        , signals_(io, SIGCHLD, SIGINT, SIGTERM)
        , grace_(io)
        , progress_(io.get_executor(), o) {
        signals_.add(SIGHUP);
    }

    int run() {
        auto config = make_config(o_);
        auto attempts = std::make_shared<attempt_counter>();
        config.metrics = attempts;
        client_.emplace(io_.get_executor(), config);
        progress_.start(*client_, attempts);
        wait_for_signals();
        client_->async_acquire(
            o_.positional, to_lock_options(o_),
            asio::bind_cancellation_slot(stop_waiting_.slot(),
                                         [this](boost::system::error_code ec, acquire_result r) {
                                             on_acquired(ec, std::move(r));
                                         }));
        io_.run();
        return status_;
    }

private:
    void on_acquired(boost::system::error_code ec, acquire_result r) {
        progress_.stop();
        if (interrupted_ != 0) {
            // The signal came while the lock was being taken: the command never starts, and a
            // lock granted in that very moment is given back.
            say(o_, std::string("interrupted (") + ::strsignal(interrupted_) +
                        ") while waiting for " + keys_text(o_.positional));
            status_ = 128 + interrupted_;
            if (ec) {
                finish();
            } else {
                client_->async_release(
                    r.lock, [this](boost::system::error_code, release_result) { finish(); });
            }
            return;
        }
        if (ec) {
            say(o_, "could not acquire " + keys_text(o_.positional) + ": " + r.message);
            status_ = exit_for(ec, static_cast<int>(o_.conflict_exit_code));
            finish();
            return;
        }
        held_ = r.lock;
        dog_.emplace(*client_, held_, renewal_options{}, [this](boost::system::error_code why) {
            asio::post(io_, [this, why] { on_lost(why); });
        });
        if (!spawn()) {
            status_ = exit_command_failed;
            stop_and_release();
        }
    }

    /// The command's environment: ours without the node list and the password (the command
    /// holds a lock, not the keys to every lock), plus the lock's key and token.
    std::vector<std::string> child_environment() const {
        std::vector<std::string> env;
        for (char** entry = environ; *entry; ++entry) {
            const std::string_view item(*entry);
            const auto name = item.substr(0, item.find('='));
            if (name != "REDLOCK_NODES" && name != "REDLOCK_PASSWORD" && name != "REDLOCK_KEY" &&
                name != "REDLOCK_KEYS" && name != "REDLOCK_TOKEN" &&
                name != "REDLOCK_FENCING_TOKEN") {
                env.emplace_back(item);
            }
        }
        env.push_back("REDLOCK_KEY=" + held_.key());
        std::string keys;
        for (const auto& key : held_.keys()) {
            keys.append(keys.empty() ? "" : "\n").append(key);
        }
        env.push_back("REDLOCK_KEYS=" + keys);
        env.push_back("REDLOCK_TOKEN=" + held_.token());
        if (held_.fencing_token() != 0) {
            env.push_back("REDLOCK_FENCING_TOKEN=" + std::to_string(held_.fencing_token()));
        }
        return env;
    }

    static std::vector<char*> pointers(std::vector<std::string>& strings) {
        std::vector<char*> out;
        for (auto& s : strings) {
            out.push_back(s.data());
        }
        out.push_back(nullptr);
        return out;
    }

    bool spawn() {
        auto args = o_.child;
        auto env = child_environment();
        const auto argv = pointers(args);
        const auto envp = pointers(env);
        // exec failures come back through this pipe (closed on a successful exec).
        int report[2];
        if (::pipe2(report, O_CLOEXEC) != 0) {
            say(o_, std::string("cannot run ") + o_.child[0] + ": pipe: " + std::strerror(errno));
            return false;
        }
        // No signal handler of ours may run in the child before exec: it would write into
        // the signal_set's pipe, which the child shares with us. Blocked across the fork,
        // reset to the default in the child, unblocked again on both sides.
        sigset_t all, previous;
        ::sigfillset(&all);
        ::pthread_sigmask(SIG_SETMASK, &all, &previous);
        const pid_t parent = ::getpid();
        const pid_t pid = ::fork();
        if (pid == 0) {
            ::close(report[0]);
            exec_child(parent, argv.data(), envp.data(), previous, report[1]);
        }
        const int fork_error = errno;
        ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
        ::close(report[1]);
        if (pid < 0) {
            ::close(report[0]);
            say(o_,
                std::string("cannot run ") + o_.child[0] + ": fork: " + std::strerror(fork_error));
            return false;
        }
        child_ = pid;
        int exec_error = 0;
        ssize_t got = 0;
        while ((got = ::read(report[0], &exec_error, sizeof exec_error)) < 0 && errno == EINTR) {
        }
        ::close(report[0]);
        if (got == static_cast<ssize_t>(sizeof exec_error)) {
            ::waitpid(pid, nullptr, 0);
            child_ = -1;
            say(o_, "cannot run " + o_.child[0] + ": " + std::strerror(exec_error));
            return false;
        }
        give_terminal(child_);
        return true;
    }

    /// In the forked child: only async-signal-safe calls until exec (other threads of ours,
    /// such as the resolver's, may have held locks at the fork).
    [[noreturn]] static void exec_child(pid_t parent, char* const* argv, char* const* envp,
                                        const sigset_t& mask, int report) {
        // Its own process group, so that a lost lock stops the command's whole process
        // tree, not only its first process.
        ::setpgid(0, 0);
        // If redlock dies (even of SIGKILL), nothing renews the lock any more: the command
        // dies with it rather than run unprotected. The death signal is tied to the thread
        // that forked, which is the one running the io_context until the command is gone.
        // A parent that died before prctl took effect is caught by the getppid() check.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) {
            ::_exit(exit_command_failed);
        }
        for (const int signal : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) {
            ::signal(signal, SIG_DFL);
        }
        ::pthread_sigmask(SIG_SETMASK, &mask, nullptr);
        ::execvpe(argv[0], argv, envp);
        const int error = errno;
        [[maybe_unused]] const auto written = ::write(report, &error, sizeof error);
        ::_exit(exit_command_failed);
    }

    /// When run from an interactive shell, the command gets the terminal as a job would
    /// (keyboard signals and terminal reads go to it), and we take it back at the end.
    void give_terminal(pid_t group) {
        if (::isatty(STDIN_FILENO) != 1 || ::tcgetpgrp(STDIN_FILENO) != ::getpgrp()) {
            return;
        }
        terminal_given_ = set_foreground(group);
    }

    void take_back_terminal() {
        if (terminal_given_) {
            set_foreground(::getpgrp());
            terminal_given_ = false;
        }
    }

    static bool set_foreground(pid_t group) {
        // tcsetpgrp from a background group raises SIGTTOU.
        auto* previous = ::signal(SIGTTOU, SIG_IGN);
        const bool done = ::tcsetpgrp(STDIN_FILENO, group) == 0;
        ::signal(SIGTTOU, previous);
        return done;
    }

    void signal_command(int signal) {
        if (child_ > 0) {
            ::kill(-child_, signal);
        }
    }

    void wait_for_signals() {
        signals_.async_wait([this](const boost::system::error_code& ec, int signal) {
            if (ec) {
                return;
            }
            if (signal == SIGCHLD) {
                reap();
            } else if (!dog_) {
                // Still waiting for the lock: stop waiting. The library cleans the attempt
                // up on every node; on_acquired ends the run.
                if (interrupted_ == 0) {
                    interrupted_ = signal;
                    stop_waiting_.emit(asio::cancellation_type::terminal);
                }
            } else {
                signal_command(signal); // the command decides what an interrupt means
            }
            if (!finished_) {
                wait_for_signals();
            }
        });
    }

    void reap() {
        int wstatus = 0;
        if (child_ <= 0 || ::waitpid(child_, &wstatus, WNOHANG) != child_) {
            return;
        }
        const pid_t group = child_;
        child_ = -1;
        take_back_terminal();
        if (lost_) {
            ::kill(-group, SIGKILL); // what is left of the command must not outlive the lock
        }
        grace_.cancel();
        status_ = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
        stop_and_release();
    }

    void on_lost(std::error_code why) {
        if (lost_ || finished_) {
            return;
        }
        lost_ = true;
        const std::string action = child_ > 0 && o_.loss_signal != 0
                                       ? "; sending " + std::string(::strsignal(o_.loss_signal)) +
                                             " to " + std::to_string(child_)
                                       : "";
        explain_loss(why, action);
        if (child_ > 0 && o_.loss_signal != 0) {
            signal_command(o_.loss_signal);
            grace_.expires_after(o_.grace);
            grace_.async_wait([this](const boost::system::error_code& ec) {
                if (!ec && child_ > 0) {
                    say(o_, "command still running after the grace period: SIGKILL");
                    signal_command(SIGKILL);
                }
            });
        }
    }

    /// Says why the lock was lost, which the watchdog's lock_lost does not tell: the nodes
    /// dropped our token (deleted, expired, taken over), or they could not be reached for a
    /// renewal until the validity ran out. One look at every key tells them apart; the
    /// command is signalled meanwhile, the message follows within the look's bound.
    void explain_loss(std::error_code why, const std::string& action) {
        const std::string lost = "lock " + keys_text(held_.keys()) + " lost";
        if (why != errc::lock_lost || !client_) {
            say(o_, lost + " (" + why.message() + ")" + action);
            return;
        }
        struct tally {
            std::size_t keys_left = 0;
            std::size_t fewest_answering = SIZE_MAX; ///< over the keys
            std::size_t fewest_ours = SIZE_MAX;
            bool failed = false;
        };
        explaining_ = true; // finish() leaves the client to the look
        auto t = std::make_shared<tally>();
        t->keys_left = held_.keys().size();
        const auto bound = std::max(o_.node_timeout, std::chrono::milliseconds(200));
        const std::size_t nodes = o_.nodes.size();
        const std::size_t quorum = nodes / 2 + 1;
        for (const auto& key : held_.keys()) {
            client_->async_inspect(
                key, bound,
                [this, t, lost, action, nodes, quorum](boost::system::error_code ec,
                                                       inspect_result r) {
                    std::size_t answering = 0, ours = 0;
                    for (const auto& view : r.nodes) {
                        if (view.error && view.error != errc::lock_mismatch) {
                            continue;
                        }
                        ++answering;
                        bool holds = view.holder && *view.holder == held_.token();
                        for (const auto& h : view.holders) {
                            holds = holds || (h.token == held_.token() && h.left.count() > 0);
                        }
                        ours += holds ? 1 : 0;
                    }
                    t->failed = t->failed || ec;
                    t->fewest_answering = std::min(t->fewest_answering, answering);
                    t->fewest_ours = std::min(t->fewest_ours, ours);
                    if (--t->keys_left != 0) {
                        return;
                    }
                    const auto of = [nodes](std::size_t n) {
                        return std::to_string(n) + " of " + std::to_string(nodes) + " nodes";
                    };
                    std::string cause;
                    if (t->failed) {
                        cause = "lock is no longer held";
                    } else if (t->fewest_answering < quorum) {
                        cause = "the nodes could not be reached: no renewal succeeded before its "
                                "validity ran out (" +
                                of(t->fewest_answering) + " answer now)";
                    } else if (t->fewest_ours < quorum) {
                        cause = "its token is gone from the nodes: deleted (expired, released, "
                                "release --force, FLUSHALL...) or replaced by another holder (" +
                                of(t->fewest_ours) + " still hold it)";
                    } else {
                        cause = "its validity ran out before a renewal succeeded (this process or "
                                "the nodes were too slow), though " +
                                of(t->fewest_ours) + " still hold its token";
                    }
                    say(o_, lost + ": " + cause + action);
                    explaining_ = false;
                    if (finished_) {
                        client_.reset();
                    }
                });
        }
    }

    void stop_and_release() {
        dog_->async_stop([this] {
            client_->async_release(
                dog_->current(), [this](boost::system::error_code ec, release_result r) {
                    if (ec == errc::lock_lost && !lost_) {
                        // Never noticed by renewal, yet gone by the end: still a lost lock.
                        say(o_, "lock " + held_.key() + " was no longer held at release");
                        lost_ = true;
                    } else if (ec && !lost_) {
                        say(o_, "release of " + held_.key() + ": " + r.message);
                    }
                    finish();
                });
        });
    }

    void finish() {
        progress_.stop();
        if (lost_) {
            status_ = exit_lock_lost;
        }
        finished_ = true;
        dog_.reset();
        if (!explaining_) {
            client_.reset(); // else explain_loss does, once it has said why
        }
        signals_.cancel();
        grace_.cancel();
    }

    const options& o_;
    asio::io_context& io_;
    asio::signal_set signals_;
    asio::steady_timer grace_;
    asio::cancellation_signal stop_waiting_;
    progress_line progress_;
    std::optional<client> client_;
    std::optional<watchdog> dog_;
    lock held_;
    pid_t child_ = -1;
    bool lost_ = false;
    bool finished_ = false;
    bool terminal_given_ = false;
    bool explaining_ = false; ///< explain_loss is looking at the nodes
    int interrupted_ = 0;     ///< the signal that ended the wait for the lock
    int status_ = exit_internal;
};

} // namespace

int run_command(const options& o) {
    if (o.positional.empty() || o.child.empty()) {
        std::cerr << "redlock run: expected KEY... -- COMMAND [ARGS...] (see redlock run --help)\n";
        return exit_usage;
    }
    for (const auto& key : o.positional) {
        if (key.find('\n') != std::string::npos) {
            // $REDLOCK_KEYS has one key per line: such a key would read as two.
            std::cerr << "redlock run: a key holds a newline, which $REDLOCK_KEYS (one key per "
                         "line) cannot carry\n";
            return exit_usage;
        }
    }
    // The command runs as our user, who may read /proc/<our pid>/environ (the node list and
    // password we were started with) and our memory. Not dumpable, those files belong to
    // root and need CAP_SYS_PTRACE (no core dump either). The command's own exec makes it
    // dumpable again: this stays ours.
    ::prctl(PR_SET_DUMPABLE, 0);
    asio::io_context io;
    return runner(o, io).run();
}

} // namespace redlock::cli
