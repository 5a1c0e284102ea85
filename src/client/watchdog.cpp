#include "redlock/watchdog.hpp"

#include "core/validate.hpp"
#include "operations/renewal_runner.hpp"
#include "runtime/lock_access.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/system_executor.hpp>

namespace redlock {

namespace asio = boost::asio;

std::string check_renewal_options(const renewal_options& options) {
    return detail::check_renewal_options(options);
}

watchdog::watchdog(client& owner, const lock& held, renewal_options options, loss_handler on_loss)
    : state_(std::make_shared<detail::watchdog_state>()) {
    if (auto why = check_renewal_options(options); !why.empty()) {
        throw std::system_error(make_error_code(errc::invalid_argument), why);
    }
    // Each renewal sets the lock's ttl again (a lock built from a token, or acquired by a
    // client with a larger maximum, may carry one this client must not set).
    if (auto why = detail::check_fleet_ttl(held.options().ttl, owner.impl_->config().fleet_max_ttl);
        !why.empty()) {
        throw std::system_error(make_error_code(errc::invalid_argument), why);
    }
    state_->held = held;
    state_->valid_until.store(held.valid_until().time_since_epoch().count());
    state_->on_loss = std::move(on_loss);
    state_->impl = owner.impl_;
    asio::post(owner.impl_->strand(), [impl = owner.impl_, state = state_, options] {
        auto runner = std::make_shared<detail::renewal_runner>(impl, state, options);
        state->runner = runner;
        runner->start();
    });
}

watchdog::~watchdog() {
    try {
        start_stop(asio::any_completion_handler<void()>([] {}));
    } catch (...) {
        // Out of memory: renewal goes on until the lock's deadline, then reports loss.
    }
}

void watchdog::start_stop(asio::any_completion_handler<void()> handler) {
    auto impl = state_->impl.lock();
    if (!impl) {
        // The client is gone, and renewal with it.
        detail::completion<void()>(std::move(handler), asio::system_executor()).complete();
        return;
    }
    // The runner is created and finished on the strand: look it up there.
    asio::post(impl->strand(), [impl, state = state_, handler = std::move(handler)]() mutable {
        if (auto runner = state->runner.lock()) {
            runner->stop(std::move(handler));
        } else {
            detail::completion<void()>(std::move(handler), impl->strand()).complete();
        }
    });
}

watchdog::clock::time_point watchdog::valid_until() const noexcept {
    return clock::time_point(clock::duration(state_->valid_until.load()));
}

bool watchdog::lost() const noexcept {
    return state_->lost.load();
}

std::uint64_t watchdog::renewals() const noexcept {
    return state_->renewals.load();
}

lock watchdog::current() const {
    return detail::lock_access::with_validity(state_->held, valid_until());
}

} // namespace redlock
