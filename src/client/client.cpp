#include "redlock/client.hpp"

#include "core/validate.hpp"
#include "operations/acquire_op.hpp"
#include "operations/extend_release_traits.hpp"
#include "operations/force_release_op.hpp"
#include "operations/inspect_op.hpp"
#include "operations/round_op.hpp"
#include "runtime/client_impl.hpp"

#include <boost/asio/post.hpp>

#include <algorithm>
#include <stdexcept>
#include <system_error>

namespace redlock {

namespace asio = boost::asio;

namespace {

std::shared_ptr<detail::client_impl> make_impl(const client::executor_type& executor,
                                               client_config config) {
    std::vector<node_address> addresses;
    if (auto why = detail::check_client_config(config, addresses); !why.empty()) {
        throw std::system_error(make_error_code(errc::invalid_argument), why);
    }
    return detail::client_impl::create(executor, std::move(config), std::move(addresses));
}

/// Rejects bad input, or any input once the client is closed, before anything is sent;
/// true when the handler was completed.
template <typename Result, typename Signature>
bool reject(const detail::client_impl& impl, std::string why, detail::completion<Signature>& done) {
    if (impl.close_requested()) {
        Result result;
        result.message = "the client was closed (client::close() or its destructor)";
        done.complete(make_error_code(errc::client_closed), std::move(result));
        return true;
    }
    if (why.empty()) {
        return false;
    }
    Result result;
    result.message = std::move(why);
    done.complete(make_error_code(errc::invalid_argument), std::move(result));
    return true;
}

std::string check_held(const lock& held) {
    if (!held.held()) {
        return "the lock is not held (default-constructed or from a failed acquire)";
    }
    // The names of a lock hash's own fields (docs/api.md, "The lock family"): as a token,
    // such a "holder" would release or extend the hash's mode or a writer's mark.
    if (held.token() == "mode" || held.token() == "writer_waiting") {
        return "\"" + held.token() + "\" is no token: the lock state uses that name";
    }
    if (auto why = detail::check_lock_options(held.options()); !why.empty()) {
        return why;
    }
    return detail::check_lock_keys(held.keys(), held.options());
}

template <typename Traits>
void start_round(const std::shared_ptr<detail::client_impl>& impl, lock held,
                 std::chrono::milliseconds ttl,
                 detail::completion<typename Traits::signature> done) {
    asio::post(
        impl->strand(), [impl, held = std::move(held), ttl, done = std::move(done)]() mutable {
            std::make_shared<detail::round_op<Traits>>(impl, std::move(held), ttl, std::move(done))
                ->start();
        });
}

} // namespace

client::client(executor_type executor, client_config config)
    : executor_(std::move(executor))
    , impl_(make_impl(executor_, std::move(config))) {}

client::client(executor_type executor, std::shared_ptr<detail::client_impl> impl)
    : executor_(std::move(executor))
    , impl_(std::move(impl)) {}

client::~client() {
    close();
}

void client::close() noexcept {
    if (!impl_->request_close()) {
        return;
    }
    try {
        asio::post(impl_->strand(), [impl = impl_] { impl->shutdown(); });
    } catch (...) {
        // Out of memory: the operations and connections end with the executor instead.
    }
}

std::size_t client::node_count() const noexcept {
    return impl_->node_count();
}

std::size_t client::quorum() const noexcept {
    return impl_->node_count() / 2 + 1;
}

void client::start_acquire(std::vector<std::string> keys, lock_options options,
                           asio::any_completion_handler<acquire_signature> handler) {
    detail::completion<acquire_signature> done(std::move(handler), executor_);
    auto why = detail::check_lock_options(options);
    if (why.empty()) {
        why = detail::check_fleet_ttl(options.ttl, impl_->config().fleet_max_ttl);
    }
    if (why.empty()) {
        why = detail::check_lock_keys(keys, options);
    }
    if (reject<acquire_result>(*impl_, std::move(why), done)) {
        return;
    }
    // Canonical order: two locks over overlapping sets see their keys in the same order, and
    // the result names them so.
    std::sort(keys.begin(), keys.end());
    // Operations are built on the strand: they draw tokens and register with the client.
    asio::post(impl_->strand(), [impl = impl_, keys = std::move(keys), options = std::move(options),
                                 done = std::move(done)]() mutable {
        std::make_shared<detail::acquire_op>(impl, std::move(keys), std::move(options),
                                             std::move(done))
            ->start();
    });
}

void client::start_extend(lock held, std::chrono::milliseconds ttl,
                          asio::any_completion_handler<extend_signature> handler) {
    detail::completion<extend_signature> done(std::move(handler), executor_);
    auto why = check_held(held);
    if (why.empty()) {
        auto options = held.options();
        options.ttl = ttl;
        why = detail::check_lock_options(options);
    }
    if (why.empty()) {
        why = detail::check_fleet_ttl(ttl, impl_->config().fleet_max_ttl);
    }
    if (reject<extend_result>(*impl_, std::move(why), done)) {
        return;
    }
    start_round<detail::extend_traits>(impl_, std::move(held), ttl, std::move(done));
}

void client::start_release(lock held, asio::any_completion_handler<release_signature> handler) {
    detail::completion<release_signature> done(std::move(handler), executor_);
    if (reject<release_result>(*impl_, check_held(held), done)) {
        return;
    }
    const auto ttl = held.options().ttl;
    asio::post(impl_->strand(),
               [impl = impl_, held = std::move(held), ttl, done = std::move(done)]() mutable {
                   const auto key = held.key();
                   const auto op = std::make_shared<detail::round_op<detail::release_traits>>(
                       impl, std::move(held), ttl, std::move(done));
                   // The release and the SETs of the waiter it wakes leave in one write per
                   // node: written at once, the release would go alone and the SETs a
                   // scheduler step later in a second write (the handoff fell from about
                   // 1.2x to 0.9x of one client's back-to-back cycles with that).
                   impl->batched([&] {
                       op->start();
                       // The release is queued on every connection now: a waiter of this
                       // client that sends its SETs from here on has them run right behind it
                       // on every node, without waiting for the release's reply or its
                       // notification.
                       impl->releases().released_here(key, op->announcement());
                   });
               });
}

void client::start_inspect(std::string key, std::chrono::milliseconds timeout,
                           asio::any_completion_handler<inspect_signature> handler) {
    detail::completion<inspect_signature> done(std::move(handler), executor_);
    auto why = detail::check_key(key);
    if (why.empty() && (timeout.count() <= 0 || timeout > max_ttl)) {
        why = "inspect timeout must be from 1 ms to max_ttl, not " +
              std::to_string(timeout.count()) + " ms";
    }
    if (reject<inspect_result>(*impl_, std::move(why), done)) {
        return;
    }
    asio::post(impl_->strand(), [impl = impl_, key = std::move(key), timeout,
                                 done = std::move(done)]() mutable {
        std::make_shared<detail::inspect_op>(impl, std::move(key), timeout, std::move(done))
            ->start();
    });
}

void client::start_force_release(std::vector<std::string> keys, std::chrono::milliseconds timeout,
                                 asio::any_completion_handler<release_signature> handler) {
    detail::completion<release_signature> done(std::move(handler), executor_);
    auto why = detail::check_lock_keys(keys, lock_options{});
    if (why.empty() && (timeout.count() <= 0 || timeout > max_ttl)) {
        why = "force release timeout must be from 1 ms to max_ttl, not " +
              std::to_string(timeout.count()) + " ms";
    }
    if (reject<release_result>(*impl_, std::move(why), done)) {
        return;
    }
    std::sort(keys.begin(), keys.end());
    asio::post(impl_->strand(), [impl = impl_, keys = std::move(keys), timeout,
                                 done = std::move(done)]() mutable {
        std::make_shared<detail::force_release_op>(impl, std::move(keys), timeout, std::move(done))
            ->start();
    });
}

std::chrono::milliseconds client::default_inspect_timeout() const noexcept {
    return impl_->config().connect_timeout + std::chrono::milliseconds(200);
}

} // namespace redlock
