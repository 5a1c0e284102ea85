#include "redlock/lock.hpp"

#include <utility>

namespace redlock {

namespace {

// What an empty lock answers (function statics: safe from other static initializers).
const std::string& no_string() {
    static const std::string none;
    return none;
}

} // namespace

lock::lock(std::string key, std::string token, clock::time_point valid_until, lock_options options,
           std::uint64_t fencing_token)
    : lock(std::vector<std::string>{std::move(key)}, std::move(token), valid_until,
           std::move(options), fencing_token) {}

lock::lock(std::vector<std::string> keys, std::string token, clock::time_point valid_until,
           lock_options options, std::uint64_t fencing_token)
    : fixed_(std::make_shared<const fixed_part>(
          fixed_part{std::move(keys), std::move(token), std::move(options), fencing_token}))
    , valid_until_(valid_until) {}

const std::string& lock::key() const noexcept {
    return fixed_ && !fixed_->keys.empty() ? fixed_->keys.front() : no_string();
}

const std::vector<std::string>& lock::keys() const noexcept {
    static const std::vector<std::string> none;
    return fixed_ ? fixed_->keys : none;
}

const std::string& lock::token() const noexcept {
    return fixed_ ? fixed_->token : no_string();
}

std::uint64_t lock::fencing_token() const noexcept {
    return fixed_ ? fixed_->fencing_token : 0;
}

const lock_options& lock::options() const noexcept {
    static const lock_options none{};
    return fixed_ ? fixed_->options : none;
}

} // namespace redlock
