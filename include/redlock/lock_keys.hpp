#ifndef REDLOCK_LOCK_KEYS_HPP
#define REDLOCK_LOCK_KEYS_HPP

#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace redlock {

/// The keys one lock takes: one key, or several taken at once (all or nothing). Every call
/// that acquires takes it, and it converts from what a caller has at hand, so each of them
/// accepts a single key and a set alike:
///
///     c.async_acquire("stock:42", options, token);            // a C string
///     c.async_acquire(key, options, token);                   // a std::string or string_view
///     c.async_acquire({"stock:42", "stock:43"}, options, token); // a braced list
///     c.async_acquire(std::move(keys), options, token);        // a std::vector<std::string>
///
/// A braced list is always a set of keys (never the two-pointer string_view constructor, which
/// `{"a", "b"}` would match if a call took a string_view). What the keys must be (not empty, at
/// most max_keys_per_lock, none twice, several only for exclusive locks) is checked by the call.
class lock_keys {
public:
    /// One key.
    lock_keys(std::string_view key)
        : keys_{std::string(key)} {}
    /// One key.
    lock_keys(const char* key)
        : keys_{std::string(key)} {}
    /// One key.
    lock_keys(std::string key)
        : keys_{std::move(key)} {}
    /// Several keys (or one), in any order.
    lock_keys(std::vector<std::string> keys)
        : keys_(std::move(keys)) {}
    /// Several keys, in any order: what a braced list `{"a", b, c}` of strings becomes. Not an
    /// std::initializer_list: GCC 12 cannot keep an initializer list's array alive across a
    /// co_await ("array used as initializer"), and `co_await c.async_acquire({"a", "b"}, ...)`
    /// must compile.
    template <typename... Keys>
    requires(sizeof...(Keys) >= 2 && (std::is_convertible_v<const Keys&, std::string_view> && ...))
        lock_keys(const Keys&... keys)
        : keys_{std::string(std::string_view(keys))...} {}
    /// No key: refused by every call that takes keys.
    lock_keys() = default;

    /// The keys as given.
    const std::vector<std::string>& get() const& noexcept { return keys_; }
    /// The keys as given, moved out.
    std::vector<std::string> get() && noexcept { return std::move(keys_); }

private:
    std::vector<std::string> keys_;
};

} // namespace redlock

#endif
