#ifndef REDLOCK_SRC_HELD_LOCKS_HPP
#define REDLOCK_SRC_HELD_LOCKS_HPP

#include <chrono>
#include <cstddef>
#include <string>
#include <unordered_map>

namespace redlock::detail {

/// The locks one client holds now, for the locks-held gauge: granted by this client, not yet
/// released, and within their validity (as extended or renewed). A lock left to expire
/// without a release leaves the count when its validity ends, so the registry never keeps
/// more entries than locks that are valid at once.
class held_locks {
public:
    using clock = std::chrono::steady_clock;

    /// A grant of this client (token drawn by it), valid until `valid_until`.
    void granted(const std::string& token, clock::time_point valid_until);
    /// An extend or renewal of a lock this client granted moved its validity.
    void extended(const std::string& token, clock::time_point valid_until);
    /// A release of the lock started: it is no longer held, whatever the release finds.
    void released(const std::string& token);
    /// Locks held at `now`; forgets those whose validity ended.
    std::size_t count(clock::time_point now);

private:
    std::unordered_map<std::string, clock::time_point> valid_until_;
};

} // namespace redlock::detail

#endif
