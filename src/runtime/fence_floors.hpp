#ifndef REDLOCK_SRC_RUNTIME_FENCE_FLOORS_HPP
#define REDLOCK_SRC_RUNTIME_FENCE_FLOORS_HPP

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

namespace redlock::detail {

/// The highest fencing token this client was granted per key, so that its next token for
/// the key is higher even if the nodes' counters went backwards (a node restarted without
/// fsync). Bounded: past `capacity` keys an arbitrary entry is forgotten, which only
/// weakens this second line of defence for that key, never the quorum's own guarantee.
class fence_floors {
public:
    explicit fence_floors(std::size_t capacity = 4096)
        : capacity_(capacity) {}

    std::uint64_t floor(const std::string& key) const;
    void raise(const std::string& key, std::uint64_t token);

private:
    std::size_t capacity_;
    std::unordered_map<std::string, std::uint64_t> floors_;
};

} // namespace redlock::detail

#endif
