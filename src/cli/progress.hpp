#ifndef REDLOCK_CLI_PROGRESS_HPP
#define REDLOCK_CLI_PROGRESS_HPP

#include "cli/options.hpp"

#include <redlock/client.hpp>
#include <redlock/metrics.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>

namespace redlock::cli {

/// Counts the attempts of the acquires of one client: each wake from a backoff starts one.
class attempt_counter final : public metrics_observer {
public:
    void on_acquire_wake(bool) override { ++wakes_; }
    unsigned attempts() const noexcept { return wakes_.load() + 1; }

private:
    std::atomic<unsigned> wakes_{0};
};

/// While run or acquire waits for a lock on a terminal: one line on stderr, redrawn in place
/// every half second, with the time waited, the attempt, and the time the holder's lock has
/// left on a quorum of nodes (read with client::async_inspect, when a quorum reports one
/// exclusive holder). Nothing at all when stderr is no terminal (a script, a log) or with -q:
/// those get the one note at the end, as before.
class progress_line {
public:
    /// Whether a line would be shown: stderr is a terminal, and not --quiet.
    static bool wanted(const options& o);

    progress_line(boost::asio::any_io_executor executor, const options& o);
    ~progress_line();
    progress_line(const progress_line&) = delete;
    progress_line& operator=(const progress_line&) = delete;

    /// Starts drawing for the acquires of `locks`, whose config has `attempts` as metrics.
    /// Does nothing unless wanted().
    void start(client& locks, std::shared_ptr<const attempt_counter> attempts);
    /// Stops, and clears the line if one was drawn. Call before the client goes away.
    void stop();

private:
    void schedule();
    void draw();
    void look_at_holder();

    const options& o_;
    boost::asio::steady_timer timer_;
    client* locks_ = nullptr;
    std::shared_ptr<const attempt_counter> attempts_;
    std::chrono::steady_clock::time_point started_;
    /// The holder's time left as last read, and when it was read.
    std::optional<std::chrono::milliseconds> holder_left_;
    std::chrono::steady_clock::time_point holder_seen_;
    bool looking_ = false;
    bool drawn_ = false;
    std::shared_ptr<bool> stopped_ = std::make_shared<bool>(true);
};

} // namespace redlock::cli

#endif
