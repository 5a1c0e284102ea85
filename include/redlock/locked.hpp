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
    boost::system::error_code error;
    std::string message;
    std::optional<T> value;
};

template <>
struct locked<void> {
    boost::system::error_code error;
    std::string message;
};

} // namespace redlock

#endif
