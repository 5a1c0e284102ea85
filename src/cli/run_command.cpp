// run: hold KEY (renewed) while a child command runs; release when it exits.
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"

#include <redlock/client.hpp>
#include <redlock/watchdog.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <spawn.h>
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
        , grace_(io) {
        signals_.add(SIGHUP);
    }

    int run() {
        try {
            client_.emplace(io_.get_executor(), make_config(o_));
        } catch (const std::system_error& e) {
            say(o_, e.what());
            return exit_usage;
        }
        client_->async_acquire(
            o_.positional[0], to_lock_options(o_),
            [this](std::error_code ec, acquire_result r) { on_acquired(ec, std::move(r)); });
        io_.run();
        return status_;
    }

private:
    void on_acquired(std::error_code ec, acquire_result r) {
        if (ec) {
            say(o_, "could not acquire " + o_.positional[0] + ": " + r.message);
            status_ = exit_for(ec);
            finish();
            return;
        }
        held_ = r.lock;
        dog_.emplace(*client_, held_, renewal_options{}, [this](std::error_code why) {
            asio::post(io_, [this, why] { on_lost(why); });
        });
        wait_for_signals();
        if (!spawn()) {
            status_ = exit_command_failed;
            stop_and_release();
        }
    }

    bool spawn() {
        ::setenv("REDLOCK_KEY", held_.key().c_str(), 1);
        ::setenv("REDLOCK_TOKEN", held_.token().c_str(), 1);
        if (held_.fencing_token() != 0) {
            ::setenv("REDLOCK_FENCING_TOKEN", std::to_string(held_.fencing_token()).c_str(), 1);
        }
        std::vector<char*> argv;
        for (const auto& a : o_.child) {
            argv.push_back(const_cast<char*>(a.c_str()));
        }
        argv.push_back(nullptr);
        // Its own process group, so that a lost lock stops the command's whole process
        // tree, not only its first process.
        posix_spawnattr_t attributes;
        ::posix_spawnattr_init(&attributes);
        ::posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
        ::posix_spawnattr_setpgroup(&attributes, 0);
        const int error =
            ::posix_spawnp(&child_, argv[0], nullptr, &attributes, argv.data(), environ);
        ::posix_spawnattr_destroy(&attributes);
        if (error != 0) {
            say(o_, "cannot run " + o_.child[0] + ": " + std::strerror(error));
            child_ = -1;
            return false;
        }
        give_terminal(child_);
        return true;
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
        say(o_, "lock " + held_.key() + " lost (" + why.message() + ")" +
                    (child_ > 0 && o_.loss_signal != 0
                         ? ": sending " + std::string(::strsignal(o_.loss_signal)) + " to " +
                               std::to_string(child_)
                         : ""));
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

    void stop_and_release() {
        dog_->async_stop([this] {
            client_->async_release(dog_->current(), [this](std::error_code ec, release_result r) {
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
        if (lost_) {
            status_ = exit_lock_lost;
        }
        finished_ = true;
        dog_.reset();
        client_.reset();
        signals_.cancel();
        grace_.cancel();
    }

    const options& o_;
    asio::io_context& io_;
    asio::signal_set signals_;
    asio::steady_timer grace_;
    std::optional<client> client_;
    std::optional<watchdog> dog_;
    lock held_;
    pid_t child_ = -1;
    bool lost_ = false;
    bool finished_ = false;
    bool terminal_given_ = false;
    int status_ = exit_internal;
};

} // namespace

int run_command(const options& o) {
    if (o.positional.size() != 1 || o.child.empty()) {
        std::cerr << "redlock run: expected KEY -- COMMAND [ARGS...] (see redlock --help)\n";
        return exit_usage;
    }
    asio::io_context io;
    return runner(o, io).run();
}

} // namespace redlock::cli
