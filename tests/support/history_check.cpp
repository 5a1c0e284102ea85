// Judges a nemesis run (scripts/nemesis.sh) from what its clients left in one directory:
//   *.history         grants of the library's contenders (redlock_history_worker)
//   KEY.counter       the plain read-modify-write counter of KEY, shared by every client
//   KEY.cli           one line per increment the CLI's clients made under KEY's lock
//   fenced.starts     "NANOSECONDS FENCE" per command the CLI ran under `run --fence`
//   store.value       the fenced store's count of accepted writes
//   store.accepted    the token of each write the fenced store accepted, in order
//   store.refused     "TOKEN HIGHEST" per write it refused (a token not above its highest)
//   client.pauses     one line naming the key per client pause the nemesis applied
// and prints one line of counts. Violations: overlapping holders (the library's intervals),
// lost updates (a counter below the increments recorded), fences out of order (a command
// started after another with a lower fencing token), the fenced store's lost writes (its value
// below the writes it accepted) or accepted tokens out of order, and its refusals. A client
// pause excuses what only fencing can prevent: lost updates on the paused clients' keys, fences
// out of order and the store's refusals (which are then fencing at work); they are counted
// apart. Exit status 1 when any violation is found.
//   redlock_history_check DIR
#include "support/history.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace fs = std::filesystem;

long long lines_of(const fs::path& path) {
    std::ifstream in(path);
    long long n = 0;
    for (std::string line; std::getline(in, line);) {
        n += line.empty() ? 0 : 1;
    }
    return n;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 64;
    }
    const fs::path dir = argv[1];
    std::vector<redlock::test::grant_record> grants;
    std::map<std::string, long long> expected; // increments recorded per key
    for (const auto& entry : fs::directory_iterator(dir)) {
        const auto& path = entry.path();
        if (path.extension() == ".history") {
            for (auto& g : redlock::test::read_history(path.string())) {
                expected[g.key] += g.incremented ? 1 : 0;
                grants.push_back(std::move(g));
            }
        } else if (path.extension() == ".cli") {
            expected[path.stem().string()] += lines_of(path);
        } else if (path.extension() == ".counter") {
            expected.try_emplace(path.stem().string(), 0);
        }
    }
    std::set<std::string> paused_keys; // keys whose clients the nemesis paused
    long long client_pauses = 0;
    {
        std::ifstream in(dir / "client.pauses");
        for (std::string key; std::getline(in, key);) {
            if (!key.empty()) {
                paused_keys.insert(key);
                ++client_pauses;
            }
        }
    }
    const auto overlaps = redlock::test::overlapping_grants(grants);
    for (const auto& o : overlaps) {
        std::printf("overlap: %s\n", o.c_str());
    }

    long long lost = 0, lost_paused = 0, unrecorded = 0, increments = 0;
    for (const auto& [key, want] : expected) {
        const long long have = redlock::test::read_counter(dir.string(), key);
        increments += want;
        if (have < want) {
            const bool paused = paused_keys.count(key) != 0;
            std::printf("lost updates%s: %s counts %lld, %lld increments recorded\n",
                        paused ? " (its clients were paused: unfenced state)" : "", key.c_str(),
                        have, want);
            (paused ? lost_paused : lost) += want - have;
        } else {
            // A CLI command killed on loss between its write and its record: not a violation.
            unrecorded += have - want;
        }
    }

    std::vector<std::pair<long long, unsigned long long>> starts;
    {
        std::ifstream in(dir / "fenced.starts");
        long long at = 0;
        unsigned long long fence = 0;
        while (in >> at >> fence) {
            starts.emplace_back(at, fence);
        }
    }
    std::sort(starts.begin(), starts.end());
    long long disorder = 0;
    for (std::size_t i = 1; i < starts.size(); ++i) {
        if (starts[i].second <= starts[i - 1].second) {
            std::printf("fence out of order: %llu started at %lld ns, after %llu at %lld ns\n",
                        starts[i].second, starts[i].first, starts[i - 1].second,
                        starts[i - 1].first);
            ++disorder;
        }
    }

    // The fenced store: every accepted write counted, accepted tokens strictly rising, and a
    // refusal only where a client was paused past its lock.
    long long store_accepted = 0, store_disorder = 0, store_refused = 0;
    {
        std::ifstream in(dir / "store.accepted");
        unsigned long long previous = 0, token = 0;
        while (in >> token) {
            if (store_accepted++ > 0 && token <= previous) {
                std::printf("fenced store accepted %llu after %llu\n", token, previous);
                ++store_disorder;
            }
            previous = token;
        }
        store_refused = lines_of(dir / "store.refused");
    }
    long long store_value = 0;
    std::ifstream(dir / "store.value") >> store_value;
    const long long store_lost = store_value < store_accepted ? store_accepted - store_value : 0;
    if (store_lost > 0) {
        std::printf("fenced store lost writes: counts %lld, %lld accepted\n", store_value,
                    store_accepted);
    }
    if (store_refused > 0) {
        std::printf("fenced store refused %lld stale writes%s\n", store_refused,
                    client_pauses > 0 ? " (clients were paused: fencing at work)" : "");
    }
    const long long excused_disorder = client_pauses > 0 ? disorder : 0;
    const long long excused_refusals = client_pauses > 0 ? store_refused : 0;
    const long long refusals = store_refused - excused_refusals;
    disorder -= excused_disorder;

    std::printf("history: %zu library grants, %lld increments on %zu counters (%lld unrecorded), "
                "%zu fenced commands, %lld fenced store writes (%lld refused), %lld client "
                "pauses (%lld lost updates and %lld fences out of order under them); "
                "violations: %zu overlapping holders, %lld lost updates, %lld fences out of "
                "order, %lld fenced store errors\n",
                grants.size(), increments, expected.size(), unrecorded, starts.size(),
                store_accepted, store_refused, client_pauses, lost_paused, excused_disorder,
                overlaps.size(), lost, disorder, store_lost + store_disorder + refusals);
    return overlaps.empty() && lost == 0 && disorder == 0 &&
                   store_lost + store_disorder + refusals == 0
               ? 0
               : 1;
}
