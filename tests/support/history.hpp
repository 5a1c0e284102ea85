#ifndef REDLOCK_TESTS_SUPPORT_HISTORY_HPP
#define REDLOCK_TESTS_SUPPORT_HISTORY_HPP

#include <redlock/config.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace redlock::test {

/// One grant as its holder saw it. Times are CLOCK_MONOTONIC nanoseconds, which every
/// process on the machine shares, so histories from several processes can be merged.
struct grant_record {
    std::string key;
    std::int64_t granted_ns = 0;
    /// min(start of the release, validity deadline): until when the holder relied on it.
    std::int64_t ended_ns = 0;
    /// Whether the holder did its read-modify-write of the key's counter file.
    bool incremented = false;
};

/// What one contender does: until `run_for` is over, take a random one of `keys` (retrying
/// while busy), read-modify-write the key's counter file in `counter_dir` under the lock if
/// the lock is still valid, release, and record the grant.
struct contender_options {
    std::vector<std::string> nodes;
    std::vector<std::string> keys;
    std::string counter_dir;
    std::chrono::milliseconds ttl{1000};
    std::chrono::milliseconds run_for{5000};
    bool quarantine = true;
    unsigned seed = 1;
};

struct contender_outcome {
    std::vector<grant_record> grants;
    std::uint64_t failures = 0; ///< acquires that gave up (quorum unreachable and the like)
};

/// Runs `threads` contenders on one blocking client.
contender_outcome run_contenders(const contender_options& options, unsigned threads);

/// One line per grant, to merge histories across processes.
void write_history(const std::string& path, const std::vector<grant_record>& grants);
std::vector<grant_record> read_history(const std::string& path);

/// Every pair of grants of one key whose intervals [granted, ended] overlap, as text.
std::vector<std::string> overlapping_grants(std::vector<grant_record> grants);

/// The counter file of `key`: how many increments it holds.
long long read_counter(const std::string& counter_dir, const std::string& key);

} // namespace redlock::test

#endif
