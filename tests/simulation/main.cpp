// redlock_simulation: runs many seeded schedules of the whole coordinator over simulated
// nodes, network and clocks, and checks the invariants on each (see history.hpp).
//
//   REDLOCK_SIM_SEED=<n>       run exactly that schedule and print its trace
//   REDLOCK_SIM_SCHEDULES=<n>  how many random schedules (default 100000)
//   REDLOCK_SIM_FIRST=<n>      the first seed of the random run (default: from the clock)
//   REDLOCK_SIM_REGRESSION=0   skip the seeds in regression_seeds.txt
//   REDLOCK_SIM_ACCEPT_EVICTING=1  clients accept nodes that evict keys (the veto disabled):
//                              the evicting nodes' schedules must then find violations
//   REDLOCK_SIM_CLOCK_MARK=0   links and checker ignore the steps lua/clock_mark.lua records
//                              (the residue before it); =links only the links (must fail)
// The first schedules run again at the end: a different trace is a state leak between
// schedules (a failure).
#include "schedule.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using redlock::sim::run_schedule;
using redlock::sim::schedule_result;

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
    const char* text = std::getenv(name);
    return text && *text ? std::strtoull(text, nullptr, 10) : fallback;
}

void print_failure(const schedule_result& r) {
    // Replay with the trace on: the same seed runs the same schedule.
    const auto traced = run_schedule(r.seed, true);
    std::printf("FAILED seed %llu (%s)\n", static_cast<unsigned long long>(r.seed),
                r.summary.c_str());
    for (const auto& v : r.violations) {
        std::printf("  %s\n", v.c_str());
    }
    for (const auto& n : r.notes) {
        std::printf("  note: %s\n", n.c_str());
    }
    std::printf("replay: REDLOCK_SIM_SEED=%llu redlock_simulation\n",
                static_cast<unsigned long long>(r.seed));
    if (traced.violations != r.violations) {
        std::printf("  (NOT DETERMINISTIC: the traced replay found something else)\n");
    }
    const std::size_t shown = 400;
    const auto& t = traced.trace;
    const std::size_t from = t.size() > shown ? t.size() - shown : 0;
    if (from > 0) {
        for (std::size_t i = 0; i < from && i < 32; ++i) {
            if (t[i].find("  plan  ") != std::string::npos ||
                t[i].find("  sim  ") != std::string::npos) {
                std::printf("  %s\n", t[i].c_str());
            }
        }
        std::printf("  ... %zu earlier trace lines (full: REDLOCK_SIM_SEED)\n", from);
    }
    for (std::size_t i = from; i < t.size(); ++i) {
        std::printf("  %s\n", t[i].c_str());
    }
}

/// Which known defect each violation looks like, for the summary.
std::vector<std::string> diagnose(const schedule_result& r) {
    std::vector<std::string> out;
    bool cleanup_pattern = false;
    for (const auto& n : r.notes) {
        cleanup_pattern |= n.starts_with("defect 1 pattern");
    }
    for (const auto& v : r.violations) {
        std::string label;
        if (v.starts_with("(a)")) {
            label = cleanup_pattern
                        ? "double grant: acquire cleanup resent as EVAL deleted a later "
                          "attempt's key (defect 1)"
                        : "double grant: unclassified";
        } else if (v.starts_with("(d) loss never") && v.find("adopted") != std::string::npos) {
            label = "no loss signal although validity ran out (defect 2: late renewal adopted)";
        } else if (v.starts_with("(d) loss never") && v.find("was paused") != std::string::npos) {
            label = "no loss signal although the holder was paused across valid_until (the "
                    "holder's wake-up ran before the renewal deadline's)";
        } else if (v.starts_with("(d) loss never")) {
            label = "no loss signal although validity ran out (defect 2: a renewal round still "
                    "in flight at valid_until)";
        } else if (v.starts_with("(d)")) {
            label = "loss signalled after valid_until (defect 2: no deadline during a renewal)";
        } else if (v.starts_with("(c)") && v.find("adopted") == std::string::npos &&
                   v.find("was paused") != std::string::npos) {
            label = "with_lock success although the holder was paused across valid_until (the "
                    "work's wake-up ran before the renewal deadline's)";
        } else if (v.starts_with("(c)") && v.find("adopted") != std::string::npos) {
            label = "with_lock success outside validity (defect 2: late renewal adopted)";
        } else if (v.starts_with("(c)")) {
            label = "with_lock success outside validity (defect 2: a renewal round still in "
                    "flight at valid_until)";
        } else if (v.starts_with("(h)") && v.find("Operation canceled") != std::string::npos) {
            label = "with_lock cancelled by its caller during the work throws operation_aborted "
                    "(from its next co_await) and skips the release";
        } else if (v.starts_with("(g)")) {
            label = "extend resent (EVAL after NOSCRIPT) after the release was sent";
        } else {
            label = v.substr(0, v.find(':'));
        }
        if (std::find(out.begin(), out.end(), label) == out.end()) {
            out.push_back(label);
        }
    }
    return out;
}

std::vector<std::uint64_t> regression_seeds() {
    std::vector<std::uint64_t> seeds;
    std::ifstream in(REDLOCK_SIM_REGRESSION_FILE);
    std::string line;
    while (std::getline(in, line)) {
        if (const auto hash = line.find('#'); hash != std::string::npos) {
            line.resize(hash);
        }
        std::istringstream words(line);
        std::uint64_t seed = 0;
        if (words >> seed) {
            seeds.push_back(seed);
        }
    }
    return seeds;
}

} // namespace

int main() {
    if (const char* one = std::getenv("REDLOCK_SIM_SEED"); one && *one) {
        const auto r = run_schedule(std::strtoull(one, nullptr, 10), true);
        for (const auto& line : r.trace) {
            std::printf("%s\n", line.c_str());
        }
        std::printf("seed %llu: %s: %llu grants, %zu violations\n",
                    static_cast<unsigned long long>(r.seed), r.summary.c_str(),
                    static_cast<unsigned long long>(r.grants), r.violations.size());
        for (const auto& v : r.violations) {
            std::printf("  %s\n", v.c_str());
        }
        for (const auto& d : diagnose(r)) {
            std::printf("  diagnosis: %s\n", d.c_str());
        }
        for (const auto& v : r.residue) {
            std::printf("  residue (undetectable clock step or role change, not a failure): %s\n",
                        v.c_str());
        }
        return r.violations.empty() ? 0 : 1;
    }

    const auto count = env_number("REDLOCK_SIM_SCHEDULES", 100000);
    const auto first = env_number(
        "REDLOCK_SIM_FIRST",
        static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()) %
            1000000000000ULL);
    std::vector<std::uint64_t> seeds;
    if (env_number("REDLOCK_SIM_REGRESSION", 1) != 0) {
        seeds = regression_seeds();
    }
    const std::size_t regressions = seeds.size();
    std::printf("%zu regression seeds, then %llu schedules from seed %llu\n", regressions,
                static_cast<unsigned long long>(count), static_cast<unsigned long long>(first));
    std::fflush(stdout);

    // What the process shares between schedules (the Lua state with its compiled scripts,
    // the script SHA1s, the reply reader) must carry nothing from one schedule into the
    // next: the first schedules run once more after all the others and must give the same
    // traces, byte for byte, as they did in the fresh process.
    std::vector<std::uint64_t> probes(seeds.begin(),
                                      seeds.begin() + std::min<std::size_t>(seeds.size(), 8));
    for (std::uint64_t i = 0; i < count && probes.size() < 16; ++i) {
        probes.push_back(first + i);
    }
    std::vector<schedule_result> probed;
    for (const auto seed : probes) {
        probed.push_back(run_schedule(seed, true));
    }

    const auto started = std::chrono::steady_clock::now();
    std::uint64_t schedules = 0;
    std::uint64_t grants = 0;
    std::uint64_t violations = 0;
    std::uint64_t failed = 0;
    std::uint64_t stepped = 0;
    std::uint64_t role_changed = 0;
    std::uint64_t residue = 0;
    std::uint64_t residue_schedules = 0;
    std::uint64_t first_residue = 0;
    const std::uint64_t max_printed = env_number("REDLOCK_SIM_MAX_PRINTED", 1);
    std::map<std::string, std::vector<std::uint64_t>> by_defect;
    auto one = [&](std::uint64_t seed) {
        const auto r = run_schedule(seed, false);
        ++schedules;
        grants += r.grants;
        stepped += r.clock_steps > 0 ? 1 : 0;
        role_changed += r.role_changes > 0 ? 1 : 0;
        if (!r.residue.empty()) {
            residue += r.residue.size();
            if (residue_schedules++ == 0) {
                first_residue = seed;
            }
        }
        if (!r.violations.empty()) {
            violations += r.violations.size();
            for (const auto& d : diagnose(r)) {
                by_defect[d].push_back(seed);
            }
            if (failed++ < max_printed) {
                print_failure(r);
            } else if (failed <= 20) {
                std::printf("FAILED seed %llu: %s\n", static_cast<unsigned long long>(seed),
                            r.violations.front().c_str());
            }
            std::fflush(stdout);
        }
    };
    for (const auto seed : seeds) {
        one(seed);
    }
    for (std::uint64_t i = 0; i < count; ++i) {
        one(first + i);
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    for (std::size_t i = 0; i < probes.size(); ++i) {
        const auto again = run_schedule(probes[i], true);
        if (again.trace != probed[i].trace || again.violations != probed[i].violations) {
            ++violations;
            ++failed;
            std::printf("FAILED state leak: seed %llu ran differently after %llu other "
                        "schedules in this process (%zu trace lines, then %zu)\n",
                        static_cast<unsigned long long>(probes[i]),
                        static_cast<unsigned long long>(schedules), probed[i].trace.size(),
                        again.trace.size());
        }
    }
    for (const auto& [defect, found] : by_defect) {
        std::printf("%zu schedules: %s; seeds", found.size(), defect.c_str());
        for (std::size_t i = 0; i < found.size() && i < 8; ++i) {
            std::printf(" %llu", static_cast<unsigned long long>(found[i]));
        }
        std::printf("\n");
    }
    std::printf("%.0f schedules/s, %llu failing schedules\n",
                seconds > 0 ? static_cast<double>(schedules) / seconds : 0.0,
                static_cast<unsigned long long>(failed));
    std::printf("%llu schedules with clock steps, %llu with role changes in place; residue: "
                "%llu violations in %llu schedules caused by undetectable steps or role "
                "changes (first seed %llu), not failures\n",
                static_cast<unsigned long long>(stepped),
                static_cast<unsigned long long>(role_changed),
                static_cast<unsigned long long>(residue),
                static_cast<unsigned long long>(residue_schedules),
                static_cast<unsigned long long>(first_residue));
    std::printf("%llu schedules, %llu grants, %llu violations\n",
                static_cast<unsigned long long>(schedules), static_cast<unsigned long long>(grants),
                static_cast<unsigned long long>(violations));
    return violations == 0 ? 0 : 1;
}
