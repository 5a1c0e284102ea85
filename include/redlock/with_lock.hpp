#ifndef REDLOCK_WITH_LOCK_HPP
#define REDLOCK_WITH_LOCK_HPP

#include <redlock/client.hpp>
#include <redlock/config.hpp>
#include <redlock/error.hpp>
#include <redlock/lock_keys.hpp>
#include <redlock/locked.hpp>
#include <redlock/watchdog.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/error_code.hpp>

#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

namespace redlock {

namespace detail {
template <typename>
inline constexpr bool always_false = false;

template <typename Awaitable>
struct awaited {
    static_assert(always_false<Awaitable>,
                  "with_lock's work must be a coroutine returning boost::asio::awaitable<T>, "
                  "called as work(const redlock::watchdog&); for work that runs on the "
                  "calling thread, use blocking_client::with_lock");
    using type = void;
};
template <typename T, typename Executor>
struct awaited<boost::asio::awaitable<T, Executor>> {
    using type = T;
};

/// The work inside a coroutine of its own: a `work` that throws before returning its
/// awaitable is then a failure of the work like any other, and the lock is still released.
template <typename T, typename Work>
boost::asio::awaitable<T> run_work(Work& work, const watchdog& dog) {
    co_return co_await work(dog);
}

struct loss_signal {
    boost::asio::cancellation_signal signal;
    boost::system::error_code reason;
};
} // namespace detail

/// Acquires `keys` (one key or several, see lock_keys), renews the lock in the background while
/// `work(const watchdog&)` (a coroutine returning `asio::awaitable<T>`) runs on this coroutine's
/// executor, and always releases.
///
/// On loss the work is cancelled through its cancellation slot (terminal): whatever it
/// awaits completes with operation_aborted. The result's error is then lock_lost (or
/// cancelled when the client shut down). Acquire failures are returned as they are. An
/// exception from the work (also one thrown before its first suspension) is rethrown after
/// the release, unless the lock was lost or the caller cancelled. No
/// renewal can follow the release. With a multi-threaded io_context, call this on a strand.
///
/// Success means the work finished while the lock was valid: a work that outlived the
/// validity (also across a pause of the process) is lock_lost, never success.
///
/// @par Per-operation cancellation
/// Cancelling the awaiting coroutine cancels the acquire, or, once the lock is held, the
/// work (with the same cancellation type; a work not yet started is not started); the lock
/// is then still released, and the result's error is cancelled, whatever the work threw.
/// It never makes this function throw.
template <typename Work>
auto with_lock(client& owner, lock_keys keys, lock_options options, renewal_options renewal,
               Work work)
    -> boost::asio::awaitable<
        locked<typename detail::awaited<std::invoke_result_t<Work&, const watchdog&>>::type>> {
    namespace asio = boost::asio;
    using value_type = typename detail::awaited<std::invoke_result_t<Work&, const watchdog&>>::type;
    constexpr auto as_tuple = asio::as_tuple(asio::use_awaitable);

    locked<value_type> out;
    // A caller's cancellation must not make the stop and the release below throw: they run
    // whatever happened, and the result says cancelled.
    co_await asio::this_coro::throw_if_cancelled(false);
    if (auto why = check_renewal_options(renewal); !why.empty()) {
        out.error = make_error_code(errc::invalid_argument);
        out.message = std::move(why);
        co_return out;
    }
    auto [acquire_error, acquired] =
        co_await owner.async_acquire(std::move(keys), options, as_tuple);
    if (acquire_error) {
        out.error = acquire_error;
        out.message = std::move(acquired.message);
        co_return out;
    }

    auto executor = co_await asio::this_coro::executor;
    auto loss = std::make_shared<detail::loss_signal>();
    watchdog dog(owner, acquired.lock, renewal, [executor, loss](boost::system::error_code why) {
        // Runs on the client's strand; the work's slot belongs to the work's executor.
        asio::post(executor, [loss, why] {
            loss->reason = why;
            loss->signal.emit(asio::cancellation_type::terminal);
        });
    });

    // The caller's cancellation reaches the work through the same signal as a loss.
    auto caller = co_await asio::this_coro::cancellation_state;
    auto cancelled_by_caller = std::make_shared<bool>(false);
    if (caller.slot().is_connected()) {
        caller.slot().assign([loss, cancelled_by_caller](asio::cancellation_type type) {
            *cancelled_by_caller = true;
            loss->signal.emit(type);
        });
    }
    // A cancellation that came while the acquire was completing reached no handler.
    if (caller.cancelled() != asio::cancellation_type::none) {
        *cancelled_by_caller = true;
    }

    std::exception_ptr failure;
    if (!*cancelled_by_caller) {
        if constexpr (std::is_void_v<value_type>) {
            auto [e] = co_await asio::co_spawn(
                executor, detail::run_work<value_type>(work, dog),
                asio::bind_cancellation_slot(loss->signal.slot(), as_tuple));
            failure = e;
        } else {
            auto [e, v] = co_await asio::co_spawn(
                executor, detail::run_work<value_type>(work, dog),
                asio::bind_cancellation_slot(loss->signal.slot(), as_tuple));
            failure = e;
            if (!e) {
                out.value.emplace(std::move(v));
            }
        }
    }

    if (caller.slot().is_connected()) {
        caller.slot().clear();
    }
    // Not cancellable: the lock is released whatever the caller wants meanwhile.
    const auto uncancellable = [] {
        return asio::bind_cancellation_slot(asio::cancellation_slot(),
                                            asio::as_tuple(asio::use_awaitable));
    };
    co_await dog.async_stop(uncancellable());
    auto [release_error, released] = co_await owner.async_release(dog.current(), uncancellable());
    if (dog.lost()) {
        out.error = loss->reason ? loss->reason : boost::system::error_code(errc::lock_lost);
        out.message = "the lock could no longer be trusted while the work ran";
        if constexpr (!std::is_void_v<value_type>) {
            out.value.reset();
        }
        co_return out;
    }
    if (*cancelled_by_caller) {
        out.error = make_error_code(errc::cancelled);
        out.message = "cancelled by the caller while the work ran; the lock was released";
        if constexpr (!std::is_void_v<value_type>) {
            out.value.reset();
        }
        co_return out;
    }
    if (failure) {
        std::rethrow_exception(failure);
    }
    if (release_error == errc::lock_lost) {
        // Renewal never noticed, yet our token was gone by the release: say so.
        out.error = release_error;
        out.message = std::move(released.message);
    }
    co_return out;
}

} // namespace redlock

#endif
