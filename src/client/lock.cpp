#include "redlock/lock.hpp"

#include <utility>

namespace redlock {

lock::lock(std::string key, std::string token, clock::time_point valid_until, lock_options options,
           std::uint64_t fencing_token)
    : key_(std::move(key))
    , token_(std::move(token))
    , valid_until_(valid_until)
    , options_(std::move(options))
    , fencing_token_(fencing_token) {}

} // namespace redlock
