#ifndef REDLOCK_TESTS_SUPPORT_NAIVE_FENCING_HPP
#define REDLOCK_TESTS_SUPPORT_NAIVE_FENCING_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace redlock::test {

/// The scheme the library does not use, kept to show why: each grant INCRs a counter on
/// the nodes it reached and takes the maximum. Takes `key` on the `reachable` nodes (of
/// `total`), returns the naive token if a majority granted, and releases at once.
std::optional<std::uint64_t> naive_max_of_incr_grant(const std::vector<int>& reachable,
                                                     std::size_t total, const std::string& key);

} // namespace redlock::test

#endif
