#include "cli/progress.hpp"

#include "cli/commands.hpp"
#include "cli/terminal.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <unistd.h>
#include <vector>

namespace redlock::cli {

namespace {

using std::chrono::milliseconds;

/// Between redraws: often enough that the seconds count visibly.
constexpr milliseconds redraw_every{500};

std::string seconds(std::chrono::steady_clock::duration d) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f s",
                  std::max(0.0, std::chrono::duration<double>(d).count()));
    return text;
}

} // namespace

bool progress_line::wanted(const options& o) {
    return !o.quiet && ::isatty(STDERR_FILENO) == 1;
}

progress_line::progress_line(boost::asio::any_io_executor executor, const options& o)
    : o_(o)
    , timer_(std::move(executor)) {}

progress_line::~progress_line() {
    *stopped_ = true;
}

void progress_line::start(client& locks, std::shared_ptr<const attempt_counter> attempts) {
    if (!wanted(o_)) {
        return;
    }
    locks_ = &locks;
    attempts_ = std::move(attempts);
    started_ = std::chrono::steady_clock::now();
    *stopped_ = false;
    schedule();
}

void progress_line::stop() {
    if (*stopped_) {
        return;
    }
    *stopped_ = true;
    timer_.cancel();
    locks_ = nullptr;
    if (drawn_) {
        std::cerr << "\r\033[K" << std::flush; // the notes that follow start on a clean line
        drawn_ = false;
    }
}

void progress_line::schedule() {
    timer_.expires_after(redraw_every);
    timer_.async_wait([this, stopped = stopped_](const boost::system::error_code& ec) {
        if (ec || *stopped) {
            return;
        }
        look_at_holder();
        draw();
        schedule();
    });
}

void progress_line::draw() {
    const auto now = std::chrono::steady_clock::now();
    std::string line = "redlock: waiting for " + keys_text(o_.positional) + ": " +
                       seconds(now - started_) + ", attempt " +
                       std::to_string(attempts_ ? attempts_->attempts() : 1);
    if (holder_left_) {
        line += ", the holder's lock expires in " + seconds(*holder_left_ - (now - holder_seen_));
    }
    // \r and "erase to the end of the line": the line is redrawn where it stands.
    std::cerr << "\r" << printable(line) << "\033[K" << std::flush;
    drawn_ = true;
}

void progress_line::look_at_holder() {
    if (looking_ || !locks_) {
        return;
    }
    looking_ = true;
    const auto quorum = o_.nodes.size() / 2 + 1;
    locks_->async_inspect(
        o_.positional.front(), std::max(o_.node_timeout, milliseconds(200)),
        [this, quorum, stopped = stopped_](boost::system::error_code ec, inspect_result r) {
            if (*stopped) {
                return;
            }
            looking_ = false;
            holder_left_.reset();
            if (ec) {
                return;
            }
            // The exclusive holder's time left per node; the lock is free for us once fewer
            // than a quorum hold it: at the quorum-th longest of those times.
            std::map<std::string, std::vector<milliseconds>> left_by_holder;
            for (const auto& view : r.nodes) {
                if (!view.error && view.holder && view.pttl && view.pttl->count() >= 0) {
                    left_by_holder[*view.holder].push_back(*view.pttl);
                }
            }
            for (auto& [holder, left] : left_by_holder) {
                if (left.size() >= quorum) {
                    std::sort(left.begin(), left.end(), std::greater<>());
                    holder_left_ = left[quorum - 1];
                    holder_seen_ = std::chrono::steady_clock::now();
                }
            }
        });
}

} // namespace redlock::cli
