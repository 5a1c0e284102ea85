#include "core/recreate_where.hpp"

#include <gtest/gtest.h>

namespace {

using namespace std::chrono_literals;
using redlock::detail::clock;
using redlock::detail::recreate_where;

TEST(recreate_where, only_nodes_that_forgot_after_the_key_was_confirmed_there) {
    const clock::time_point t0{100s};
    // Node 0 restarted after the key was written: its key is gone with the restart, the
    // renewal writes it back. Node 1 restarted before (its key was written to the new
    // server): a missing key there was deleted (release --force) or expired, and stays so.
    // Node 2: restarts unknown. Node 3: restarted after its last confirmation, a later one.
    const std::vector<std::optional<clock::time_point>> forgot{t0 + 2s, t0 - 1s, std::nullopt,
                                                               t0 + 5s};
    const std::vector<clock::time_point> confirmed{t0, t0, t0, t0 + 4s};
    EXPECT_EQ(recreate_where(forgot, confirmed), (std::vector<bool>{true, false, false, true}));
    EXPECT_EQ(recreate_where(forgot, {t0 + 3s, t0 + 3s, t0 + 3s, t0 + 6s}),
              (std::vector<bool>{false, false, false, false}))
        << "confirmed again since: nothing was forgotten after that";
}

} // namespace
