#include "redlock/scoped_lock.hpp"

#include "redlock/watchdog.hpp"

#include <system_error>
#include <utility>

namespace redlock {

/// A renewing guard's watchdog and the stop source its loss requests.
struct scoped_lock::renewal {
    std::stop_source stop;
    std::unique_ptr<watchdog> dog;
};

scoped_lock::scoped_lock(blocking_client& client, lock_keys keys, const lock_options& options,
                         std::error_code& ec) {
    auto result = client.acquire(std::move(keys), options, ec);
    if (!ec) {
        client_ = &client;
        held_ = std::move(result.lock);
    }
}

scoped_lock::scoped_lock(blocking_client& client, lock_keys keys, const lock_options& options,
                         const renewal_options& renewal_settings, std::error_code& ec) {
    if (!check_renewal_options(renewal_settings).empty()) {
        ec = errc::invalid_argument;
        return;
    }
    auto result = client.acquire(std::move(keys), options, ec);
    if (ec) {
        return;
    }
    client_ = &client;
    held_ = std::move(result.lock);
    auto renewing = std::make_unique<renewal>();
    try {
        renewing->dog = std::make_unique<watchdog>(
            client.async_client(), held_, renewal_settings,
            [stop = renewing->stop](boost::system::error_code) mutable { stop.request_stop(); });
    } catch (const std::system_error& refused) {
        // The acquire accepted what the watchdog refuses (none today): give the lock back.
        release_quietly();
        ec = refused.code();
        return;
    }
    renewal_ = std::move(renewing);
}

scoped_lock::scoped_lock(blocking_client& client, lock held) noexcept
    : client_(&client)
    , held_(std::move(held)) {}

scoped_lock::~scoped_lock() {
    release_quietly();
}

scoped_lock::scoped_lock(scoped_lock&& other) noexcept
    : client_(std::exchange(other.client_, nullptr))
    , held_(std::exchange(other.held_, lock{}))
    , renewal_(std::move(other.renewal_)) {}

scoped_lock& scoped_lock::operator=(scoped_lock&& other) noexcept {
    if (this != &other) {
        release_quietly();
        client_ = std::exchange(other.client_, nullptr);
        held_ = std::exchange(other.held_, lock{});
        renewal_ = std::move(other.renewal_);
    }
    return *this;
}

lock scoped_lock::get() const {
    if (renewal_ && owns_lock()) {
        return renewal_->dog->current();
    }
    return held_;
}

bool scoped_lock::lost() const noexcept {
    return renewal_ && renewal_->dog->lost();
}

std::stop_token scoped_lock::stop_token() const noexcept {
    return renewal_ ? renewal_->stop.get_token() : std::stop_token();
}

release_result scoped_lock::release(std::error_code& ec) {
    if (!owns_lock()) {
        ec = errc::invalid_argument;
        release_result r;
        r.message = "scoped_lock does not own a lock";
        return r;
    }
    auto* client = std::exchange(client_, nullptr);
    auto held = std::exchange(held_, lock{});
    bool lost = false;
    if (auto renewing = std::move(renewal_)) {
        held = renewing->dog->current();
        lost = renewing->dog->lost();
        // Destroying the watchdog stops it; a renewal already sent completes on every node
        // before the release below, so none can follow the release.
        renewing->dog.reset();
    }
    auto released = client->release(held, ec);
    if (lost && !ec) {
        ec = errc::lock_lost;
        released.message = "the lock could no longer be trusted while it was held; its copies "
                           "were released";
    }
    return released;
}

void scoped_lock::release_quietly() noexcept {
    if (!owns_lock()) {
        return;
    }
    try {
        std::error_code ignored;
        release(ignored);
    } catch (...) {
        // Out of memory while releasing: the key expires by its TTL.
    }
}

} // namespace redlock
