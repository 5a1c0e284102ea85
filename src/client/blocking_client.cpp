#include "redlock/blocking_client.hpp"

#include "redlock/client.hpp"
#include "redlock/watchdog.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>
#include <utility>

namespace redlock {

namespace asio = boost::asio;

struct blocking_client::state {
    asio::io_context io{1};
    asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
    std::optional<redlock::client> coordinator;
    std::thread thread;

    // Calls in progress on other threads: the destructor waits for them, since the client
    // they use goes with it (with_lock's work may still be returning and releasing).
    std::mutex calls_mutex;
    std::condition_variable calls_ended;
    int calls = 0;

    /// Counts one call for as long as it lives.
    class call {
    public:
        explicit call(state& s)
            : s_(s) {
            std::lock_guard guard(s_.calls_mutex);
            ++s_.calls;
        }
        ~call() {
            std::lock_guard guard(s_.calls_mutex);
            if (--s_.calls == 0) {
                s_.calls_ended.notify_all();
            }
        }
        call(const call&) = delete;
        call& operator=(const call&) = delete;

    private:
        state& s_;
    };

    bool on_io_thread() const { return std::this_thread::get_id() == thread.get_id(); }

    /// Runs one asynchronous operation and waits for its result.
    template <typename Result, typename Start>
    Result wait(std::error_code& ec, Start start) {
        if (on_io_thread()) {
            ec = errc::invalid_argument;
            Result refused;
            refused.message = "blocking call made on the client's own I/O thread";
            return refused;
        }
        const call counted(*this);
        std::promise<std::pair<std::error_code, Result>> promise;
        auto future = promise.get_future();
        start([&promise](std::error_code e, Result r) { promise.set_value({e, std::move(r)}); });
        auto [error, result] = future.get();
        ec = error;
        return std::move(result);
    }
};

blocking_client::blocking_client(client_config config)
    : state_(std::make_shared<state>()) {
    state_->coordinator.emplace(state_->io.get_executor(), std::move(config));
    // The thread owns the state too: destroyed from one of its own handlers, the
    // blocking_client cannot join it, and the io_context must outlive the run() it is in.
    state_->thread = std::thread([s = state_]() mutable {
        s->io.run();
        // Last owner when the blocking_client was destroyed on this thread: then the
        // io_context goes here, once nothing runs in it any more.
        s.reset();
    });
}

blocking_client::~blocking_client() {
    // The client's shutdown completes what is in flight, calls on other threads return
    // (with_lock's work is told through its stop token), then the thread runs dry. On the
    // I/O thread nothing can be waited for: the calls need that thread to finish.
    state_->coordinator->close();
    if (!state_->on_io_thread()) {
        std::unique_lock lock(state_->calls_mutex);
        state_->calls_ended.wait(lock, [this] { return state_->calls == 0; });
    }
    state_->coordinator.reset();
    state_->work.reset();
    if (state_->thread.joinable()) {
        if (state_->on_io_thread()) {
            state_->thread.detach();
        } else {
            state_->thread.join();
        }
    }
}

void blocking_client::close() noexcept {
    state_->coordinator->close();
}

acquire_result blocking_client::acquire(lock_keys keys, const lock_options& options,
                                        std::error_code& ec) {
    return state_->wait<acquire_result>(ec, [&](auto handler) {
        state_->coordinator->async_acquire(std::move(keys), options, std::move(handler));
    });
}

extend_result blocking_client::extend(const lock& held, std::chrono::milliseconds ttl,
                                      std::error_code& ec) {
    return state_->wait<extend_result>(ec, [&](auto handler) {
        state_->coordinator->async_extend(held, ttl, std::move(handler));
    });
}

extend_result blocking_client::extend(const lock& held, std::error_code& ec) {
    return extend(held, held.options().ttl, ec);
}

release_result blocking_client::release(const lock& held, std::error_code& ec) {
    return state_->wait<release_result>(
        ec, [&](auto handler) { state_->coordinator->async_release(held, std::move(handler)); });
}

inspect_result blocking_client::inspect(std::string_view key, std::chrono::milliseconds timeout,
                                        std::error_code& ec) {
    return state_->wait<inspect_result>(ec, [&](auto handler) {
        state_->coordinator->async_inspect(key, timeout, std::move(handler));
    });
}

inspect_result blocking_client::inspect(std::string_view key, std::error_code& ec) {
    return state_->wait<inspect_result>(
        ec, [&](auto handler) { state_->coordinator->async_inspect(key, std::move(handler)); });
}

std::optional<lock> blocking_client::try_lock(lock_keys keys, std::chrono::milliseconds ttl,
                                              std::chrono::milliseconds wait, unsigned retries,
                                              std::error_code& ec) {
    lock_options options;
    options.ttl = ttl;
    options.retry.max_attempts = retries + 1;
    options.retry.wait_budget = wait;
    return try_lock(std::move(keys), options, ec);
}

std::optional<lock> blocking_client::try_lock(lock_keys keys, const lock_options& options,
                                              std::error_code& ec) {
    auto result = acquire(std::move(keys), options, ec);
    if (ec) {
        return std::nullopt;
    }
    return std::move(result.lock);
}

std::error_code blocking_client::run_locked(
    lock_keys keys, const lock_options& options, const renewal_options& renewal,
    const std::function<void(const watchdog&, std::stop_token)>& work, std::string& message) {
    const state::call counted(*state_);
    if (auto why = check_renewal_options(renewal); !why.empty()) {
        message = std::move(why);
        return errc::invalid_argument;
    }
    std::error_code ec;
    auto acquired = acquire(std::move(keys), options, ec);
    if (ec) {
        message = std::move(acquired.message);
        return ec;
    }
    std::stop_source stop;
    std::error_code loss_reason; // written before stop is requested, read after
    std::mutex loss_mutex;
    watchdog dog(*state_->coordinator, acquired.lock, renewal, [&](std::error_code why) {
        {
            std::lock_guard guard(loss_mutex);
            loss_reason = why;
        }
        stop.request_stop();
    });
    std::exception_ptr failure;
    try {
        work(dog, stop.get_token());
    } catch (...) {
        failure = std::current_exception();
    }
    // After this no renewal is in flight, and the loss handler will not run again.
    std::promise<void> stopped;
    dog.async_stop([&stopped] { stopped.set_value(); });
    stopped.get_future().wait();
    std::error_code release_error;
    auto released = release(dog.current(), release_error);
    if (dog.lost()) {
        std::lock_guard guard(loss_mutex);
        message = "the lock could no longer be trusted while the work ran";
        return loss_reason ? loss_reason : make_error_code(errc::lock_lost);
    }
    if (failure) {
        std::rethrow_exception(failure);
    }
    if (release_error == errc::lock_lost) {
        message = std::move(released.message);
        return release_error;
    }
    return {};
}

client& blocking_client::async_client() noexcept {
    return *state_->coordinator;
}

} // namespace redlock
