#include "redlock/lock.hpp"

#include <utility>

namespace redlock {

lock::lock(std::string key, std::string token, clock::time_point valid_until, lock_options options,
           std::uint64_t fencing_token)
    : lock(std::vector<std::string>{std::move(key)}, std::move(token), valid_until,
           std::move(options), fencing_token) {}

lock::lock(std::vector<std::string> keys, std::string token, clock::time_point valid_until,
           lock_options options, std::uint64_t fencing_token)
    : keys_(std::move(keys))
    , token_(std::move(token))
    , valid_until_(valid_until)
    , options_(std::move(options))
    , fencing_token_(fencing_token) {}

const std::string& lock::key() const noexcept {
    static const std::string none;
    return keys_.empty() ? none : keys_.front();
}

} // namespace redlock
