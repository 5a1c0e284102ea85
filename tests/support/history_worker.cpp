// A contender process for the history checker: runs contenders against the given nodes and
// writes its grants to a file, so that histories from several processes can be merged.
//   redlock_history_worker OUT NODES KEYS COUNTER_DIR TTL_MS RUN_MS THREADS SEED
#include "support/history.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>

namespace {

std::vector<std::string> split(const std::string& list) {
    std::vector<std::string> items;
    std::stringstream stream(list);
    for (std::string item; std::getline(stream, item, ',');) {
        items.push_back(item);
    }
    return items;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 9) {
        std::fprintf(stderr, "usage: %s OUT NODES KEYS COUNTER_DIR TTL_MS RUN_MS THREADS SEED\n",
                     argv[0]);
        return 64;
    }
    try {
        redlock::test::contender_options o;
        o.nodes = split(argv[2]);
        o.keys = split(argv[3]);
        o.counter_dir = argv[4];
        o.ttl = std::chrono::milliseconds(std::atoll(argv[5]));
        o.run_for = std::chrono::milliseconds(std::atoll(argv[6]));
        o.seed = static_cast<unsigned>(std::atoi(argv[8]));
        const auto outcome =
            redlock::test::run_contenders(o, static_cast<unsigned>(std::atoi(argv[7])));
        redlock::test::write_history(argv[1], outcome.grants);
        std::printf("%zu grants, %llu failures\n", outcome.grants.size(),
                    static_cast<unsigned long long>(outcome.failures));
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "history worker: %s\n", e.what());
        return 70;
    }
}
