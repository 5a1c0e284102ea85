#ifndef REDLOCK_LOCKED_HPP
#define REDLOCK_LOCKED_HPP

#include <boost/system/error_code.hpp>

#include <optional>
#include <string>

namespace redlock {

/// The outcome of work run under a lock (with_lock, blocking_client::with_lock): `error` is
/// empty when the lock was held from start to end and the work finished; `value` holds what
/// the work returned.
template <typename T>
struct locked {
    boost::system::error_code error; ///< lock_lost, cancelled, or why the acquire failed
    std::string message;             ///< a human-readable explanation of the error
    std::optional<T> value;          ///< what the work returned; empty on error
};

/// The outcome of work without a value run under a lock: `error` is empty when the lock was
/// held from start to end and the work finished.
template <>
struct locked<void> {
    boost::system::error_code error; ///< lock_lost, cancelled, or why the acquire failed
    std::string message;             ///< a human-readable explanation of the error
};

} // namespace redlock

#endif
