#include "redlock/scoped_lock.hpp"

#include <utility>

namespace redlock {

scoped_lock::scoped_lock(blocking_client& client, std::string_view key, const lock_options& options,
                         std::error_code& ec) {
    auto result = client.acquire(key, options, ec);
    if (!ec) {
        client_ = &client;
        held_ = std::move(result.lock);
    }
}

scoped_lock::scoped_lock(blocking_client& client, lock held) noexcept
    : client_(&client)
    , held_(std::move(held)) {}

scoped_lock::~scoped_lock() {
    release_quietly();
}

scoped_lock::scoped_lock(scoped_lock&& other) noexcept
    : client_(std::exchange(other.client_, nullptr))
    , held_(std::exchange(other.held_, lock{})) {}

scoped_lock& scoped_lock::operator=(scoped_lock&& other) noexcept {
    if (this != &other) {
        release_quietly();
        client_ = std::exchange(other.client_, nullptr);
        held_ = std::exchange(other.held_, lock{});
    }
    return *this;
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
    return client->release(held, ec);
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
