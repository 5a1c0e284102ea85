// The clients' workload: each client runs its planned operations one after the other
// (acquire/extend/release, a watchdog kept for a while, with_lock around work that may
// outlive the ttl, cancellations mid-acquire) and reports grants, renewals, losses and ends
// of use to the history.
#include "schedule.hpp"

// GCC 12 misreads Asio's awaitable frame allocator (its operator delete takes the size) as a
// mismatched new/delete once with_lock's coroutines are inlined here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

#include "redlock/with_lock.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <optional>

namespace redlock::sim {

namespace asio = boost::asio;

namespace {

constexpr auto as_tuple = asio::as_tuple(asio::use_awaitable);

/// The handler given to the library: counts every invocation for (f); only the first one
/// reaches the coroutine.
template <typename Handler>
struct counted {
    Handler handler;
    history* h;
    std::uint64_t id;
    const char* what;
    bool called = false;

    template <typename... Args>
    void operator()(Args... args) {
        h->completed(id, what);
        if (called) {
            return;
        }
        called = true;
        std::move(handler)(std::move(args)...);
    }
};

template <typename Signature, typename Start>
auto tracked(history& h, const char* what, asio::cancellation_slot slot, Start start) {
    return asio::async_initiate<decltype(as_tuple), Signature>(
        [&h, what, slot](auto handler, Start start) mutable {
            const auto id = h.issue();
            using handler_type = decltype(handler);
            start(asio::bind_cancellation_slot(
                slot, counted<handler_type>{std::move(handler), &h, id, what}));
        },
        as_tuple, std::move(start));
}

/// Sleeps `d` on the client's clock (a client event: held back while it is paused).
/// When `cancellable`, the handler's cancellation slot ends it with operation_aborted.
template <typename Token>
auto sim_sleep(world& w, drift_clock clock, int client, real_ns d, bool cancellable,
               Token&& token) {
    return asio::async_initiate<Token, void(boost::system::error_code)>(
        [&w, clock, client, d, cancellable](auto handler) {
            using handler_type = decltype(handler);
            struct state {
                std::optional<handler_type> h;
            };
            auto s = std::make_shared<state>();
            s->h.emplace(std::move(handler));
            auto fire = [s](boost::system::error_code ec, bool from_slot) {
                if (!s->h) {
                    return;
                }
                auto h = std::move(*s->h);
                s->h.reset();
                auto slot = asio::get_associated_cancellation_slot(h);
                if (!from_slot && slot.is_connected()) {
                    slot.clear();
                }
                auto ex = asio::get_associated_executor(h);
                asio::post(ex, [h = std::move(h), ec]() mutable { std::move(h)(ec); });
            };
            if (cancellable) {
                auto slot = asio::get_associated_cancellation_slot(*s->h);
                if (slot.is_connected()) {
                    slot.assign([fire](asio::cancellation_type) {
                        fire(asio::error::operation_aborted, true);
                    });
                }
            }
            const auto target = clock.local(w.now()) + d;
            w.at(clock.real_at(target, w.now()), client, [fire] { fire({}, false); });
        },
        token);
}

std::string ms_text(real_ns d) {
    return std::to_string(d / ms) + " ms";
}

/// The outcome, and the nodes whose deletes were still on their way when it completed.
std::string release_text(const std::tuple<boost::system::error_code, release_result>& r) {
    const auto& [ec, result] = r;
    std::string text = ec ? ec.message() : "ok";
    std::string pending;
    for (const auto& v : result.votes) {
        if (v.outcome == node_outcome::pending) {
            pending += " n" + std::to_string(v.node);
        }
    }
    return text + " (" + std::to_string(result.released) + " deleted" +
           (pending.empty() ? "" : ", still pending:" + pending) + ")";
}

} // namespace

asio::awaitable<void> schedule::sleep(int c, real_ns local_duration) {
    co_await sim_sleep(w_, h_.clock(c), c, local_duration, false, as_tuple);
}

asio::awaitable<void> schedule::client_task(int c, int lane) {
    for (const auto& op : sc_.ops[static_cast<std::size_t>(c)]) {
        if (op.lane != lane) {
            continue;
        }
        co_await sleep(c, op.gap);
        switch (op.what) {
        case op_plan::kind::plain:
            co_await run_plain(c, op);
            break;
        case op_plan::kind::watchdog:
            co_await run_watchdog(c, op);
            break;
        case op_plan::kind::with_lock:
            co_await run_with_lock(c, op);
            break;
        }
    }
    // A close due after a release that never came: at the end of the workload.
    // The last lane to end (its count goes down once this returns).
    if (clients_[static_cast<std::size_t>(c)].lanes_running == 1) {
        released(c);
        SIM_TRACE(w_, who(c), "workload done");
    }
}

namespace {

std::string options_text(const op_plan& op) {
    std::string keys = op.key;
    for (const auto& more : op.more_keys) {
        keys += "+" + more;
    }
    if (op.lock.mode == lock_mode::shared) {
        keys += " shared";
    } else if (op.lock.mode == lock_mode::permit) {
        keys += " permit/" + std::to_string(op.lock.permits);
    }
    return keys + " ttl " + std::to_string(op.lock.ttl.count()) + " ms, node_timeout " +
           std::to_string(op.lock.node_timeout.count()) + " ms, attempts " +
           std::to_string(op.lock.retry.max_attempts) + ", backoff " +
           std::to_string(op.lock.retry.backoff_initial.count()) + "-" +
           std::to_string(op.lock.retry.backoff_max.count()) + " ms" +
           (op.lock.retry.wait_budget.count() > 0
                ? ", budget " + std::to_string(op.lock.retry.wait_budget.count()) + " ms"
                : "") +
           (op.lock.retry.wake_on_release ? "" : ", no handoff") +
           (op.lock.fencing ? ", fenced" : "");
}

} // namespace

void schedule::waiter_ended(int c, const op_plan& op, real_ns started, bool granted) {
    if (op.lock.mode != lock_mode::exclusive) {
        return;
    }
    auto keys = op.more_keys;
    keys.push_back(op.key);
    std::sort(keys.begin(), keys.end());
    std::string joined;
    for (const auto& k : keys) {
        joined += (joined.empty() ? "" : "+") + k;
    }
    // The one exception to (x) docs/design.md gives: a try-lock attempts at once whoever
    // waits.
    h_.waiter_ended(c, std::move(joined), started, granted, op.lock.retry.max_attempts == 1,
                    op.lock.retry.wake_on_release);
}

asio::awaitable<std::optional<schedule::granted>> schedule::acquire_step(int c, const op_plan& op,
                                                                         const char* what) {
    auto& cl = *clients_[static_cast<std::size_t>(c)].client;
    auto sig = std::make_shared<asio::cancellation_signal>();
    if (op.cancel_after >= 0) {
        w_.after(op.cancel_after, c, [this, sig, c] {
            SIM_TRACE(w_, who(c), "cancels its acquire");
            sig->emit(asio::cancellation_type::terminal);
        });
    }
    SIM_TRACE(w_, who(c), what + options_text(op));
    const auto started = w_.now();
    const auto span = h_.acquire_began(c);
    auto acquired = co_await tracked<client::acquire_signature>(
        h_, "acquire", sig->slot(), [&cl, &op](auto handler) {
            if (op.more_keys.empty()) {
                cl.async_acquire(op.key, op.lock, std::move(handler));
                return;
            }
            auto keys = op.more_keys;
            keys.push_back(op.key);
            cl.async_acquire(std::move(keys), op.lock, std::move(handler));
        });
    const auto ec = std::get<0>(acquired);
    const auto& r = std::get<1>(acquired);
    SIM_TRACE(w_, who(c), "acquire -> " + (ec ? ec.message() + ": " + r.message : "ok"));
    h_.acquire_ended(
        c, span, started,
        std::chrono::duration_cast<std::chrono::nanoseconds>(op.lock.node_timeout).count(), ec);
    waiter_ended(c, op, started, !ec);
    if (ec) {
        co_return std::nullopt;
    }
    const int holder = h_.grant(c, r.lock, local(r.lock.valid_until()), false);
    co_return granted{holder, r.lock};
}

asio::awaitable<void> schedule::run_plain(int c, const op_plan& op) {
    auto& cl = *clients_[static_cast<std::size_t>(c)].client;
    auto granted = co_await acquire_step(c, op, "acquire ");
    if (!granted) {
        co_return;
    }
    const int hid = granted->holder;
    lock held = granted->held;
    real_ns remaining = op.hold;
    if (op.extend_midway) {
        co_await sleep(c, op.hold / 2);
        remaining -= op.hold / 2;
        SIM_TRACE(w_, who(c), "extend h" + std::to_string(hid));
        auto extended = co_await tracked<client::extend_signature>(
            h_, "extend", {},
            [&cl, &held](auto handler) { cl.async_extend(held, std::move(handler)); });
        const auto e2 = std::get<0>(extended);
        SIM_TRACE(w_, who(c), "extend -> " + (e2 ? e2.message() : "ok"));
        if (!e2) {
            held = std::get<1>(extended).lock;
            h_.extended(hid, held, local(held.valid_until()));
        } else if (e2 == errc::lock_lost) {
            h_.end(hid);
        }
    }
    co_await sleep(c, remaining);
    h_.end(hid);
    h_.release_intent(held.token(), std::chrono::nanoseconds(held.options().node_timeout).count());
    SIM_TRACE(w_, who(c), "release h" + std::to_string(hid));
    auto released =
        co_await tracked<client::release_signature>(h_, "release", {}, [&cl, &held](auto handler) {
            cl.async_release(held, std::move(handler));
        });
    SIM_TRACE(w_, who(c), "release -> " + release_text(released));
    this->released(c);
}

asio::awaitable<void> schedule::run_watchdog(int c, const op_plan& op) {
    auto& cl = *clients_[static_cast<std::size_t>(c)].client;
    auto granted = co_await acquire_step(c, op, "acquire for a watchdog ");
    if (!granted) {
        co_return;
    }
    const int hid = granted->holder;
    lock current;
    {
        // (f) for the loss handler too: at most once, and exactly once if lost() says so.
        auto losses = std::make_shared<int>(0);
        watchdog dog(cl, granted->held, op.renewal,
                     [losses](boost::system::error_code) { ++*losses; });
        auto it = add_watch(dog, hid, c);
        SIM_TRACE(w_, who(c),
                  "watchdog on h" + std::to_string(hid) + " for " + ms_text(op.hold) +
                      (op.renewal.recreate_missing ? " (recreate_missing)" : ""));
        co_await sleep(c, op.hold);
        poll(*it);
        h_.end(hid);
        co_await tracked<void()>(h_, "watchdog stop", {},
                                 [&dog](auto handler) { dog.async_stop(std::move(handler)); });
        current = dog.current();
        remove_watch(it);
        if (*losses != (dog.lost() ? 1 : 0)) {
            h_.violation("(f) loss handler", who(c) + " h" + std::to_string(hid) + ": called " +
                                                 std::to_string(*losses) + " times, lost() " +
                                                 (dog.lost() ? "true" : "false"));
        }
    }
    h_.release_intent(current.token(),
                      std::chrono::nanoseconds(current.options().node_timeout).count());
    SIM_TRACE(w_, who(c), "release h" + std::to_string(hid));
    auto released = co_await tracked<client::release_signature>(
        h_, "release", {},
        [&cl, &current](auto handler) { cl.async_release(current, std::move(handler)); });
    SIM_TRACE(w_, who(c), "release -> " + release_text(released));
    this->released(c);
}

asio::awaitable<void> schedule::run_with_lock(int c, const op_plan& op) {
    auto& cl = *clients_[static_cast<std::size_t>(c)].client;
    int hid = -1;
    real_ns work_start = 0;
    const auto call = h_.issue();
    SIM_TRACE(w_, who(c),
              "with_lock " + options_text(op) + ", work " + ms_text(op.hold) +
                  (op.cancellable_work ? "" : " (ignores cancellation)") +
                  (op.cancel_after >= 0 ? ", cancelled after " + ms_text(op.cancel_after) : ""));
    const auto span = h_.acquire_began(c);
    const auto called = w_.now();
    const auto node_timeout =
        std::chrono::duration_cast<std::chrono::nanoseconds>(op.lock.node_timeout).count();
    bool span_open = true;
    auto body = with_lock(
        cl, op.key, op.lock, op.renewal,
        [this, c, &op, &hid, &work_start, span, &span_open, called,
         node_timeout](const watchdog& dog) -> asio::awaitable<int> {
            // (q) judges with_lock's acquire as it judges a plain one: granted here.
            h_.acquire_ended(c, span, called, node_timeout, {});
            span_open = false;
            waiter_ended(c, op, called, true);
            const auto current = dog.current();
            hid = h_.grant(c, current, local(dog.valid_until()), true);
            work_start = w_.now();
            auto it = add_watch(dog, hid, c);
            co_await sim_sleep(w_, h_.clock(c), c, op.hold, op.cancellable_work, as_tuple);
            remove_watch(it);
            h_.end(hid);
            h_.release_intent(current.token(),
                              std::chrono::nanoseconds(current.options().node_timeout).count());
            SIM_TRACE(w_, who(c), "work of h" + std::to_string(hid) + " ends");
            co_return 1;
        });
    // Cancelling with_lock itself (terminal, through the slot of the coroutine awaiting it)
    // reaches whatever it awaits then: the acquire, the stop, the release.
    auto sig = std::make_shared<asio::cancellation_signal>();
    if (op.cancel_after >= 0) {
        w_.after(op.cancel_after, c, [this, sig, c] {
            SIM_TRACE(w_, who(c), "cancels its with_lock");
            sig->emit(asio::cancellation_type::terminal);
        });
    }
    auto [failure, out] =
        co_await asio::co_spawn(co_await asio::this_coro::executor, std::move(body),
                                asio::bind_cancellation_slot(sig->slot(), as_tuple));
    h_.completed(call, "with_lock");
    if (span_open) {
        // Its work never began: the result's error is the acquire's (with_lock passes it on),
        // or cancelled or the loss when the caller's cancellation came as the acquire was
        // granted (cancelled is excepted by (q), and a lock lost after a quorum of mismatches
        // is as silent as a grant). A with_lock that threw is a violation of its own, (h).
        if (failure) {
            h_.span_ended(c, span);
        } else {
            h_.acquire_ended(c, span, called, node_timeout, out.error);
        }
        waiter_ended(c, op, called, false);
    }
    if (failure) {
        std::string what = "unknown exception";
        try {
            std::rethrow_exception(failure);
        } catch (const std::exception& e) {
            what = e.what();
        } catch (...) {
        }
        SIM_TRACE(w_, who(c), "with_lock threw: " + what);
        h_.violation("(h) with_lock threw", who(c) + " h" + std::to_string(hid) + ": " + what +
                                                (hid >= 0 ? " (after the grant)" : ""));
        co_return;
    }
    SIM_TRACE(w_, who(c),
              "with_lock -> " + (out.error ? out.error.message() + ": " + out.message : "ok"));
    if (hid >= 0) {
        released(c); // with_lock released the lock it was granted
    }
    if (!out.error && hid >= 0) {
        h_.with_lock_success(hid, work_start);
    }
}

} // namespace redlock::sim
