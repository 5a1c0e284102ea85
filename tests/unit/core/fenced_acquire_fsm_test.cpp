// The second phase of a fenced acquire, on a fake clock: the candidate token, the raise
// quorum, and what a failed raise costs.
#include "core/acquire_fsm.hpp"
#include "runtime/fence_floors.hpp"

#include "redlock/fencing.hpp"

#include <gtest/gtest.h>

namespace {

using namespace std::chrono_literals;
using redlock::errc;
using redlock::lock_options;
using redlock::node_outcome;
using redlock::detail::acquire_action;
using redlock::detail::acquire_fsm;
using kind = acquire_action::kind;
using clock_type = redlock::detail::clock;

struct harness {
    clock_type::time_point now{100s};
    lock_options options;

    harness() {
        options.ttl = 10s;
        options.node_timeout = 50ms;
        options.retry.max_attempts = 1;
        options.fencing = true;
    }
    acquire_fsm make(std::uint64_t floor = 0) {
        return acquire_fsm(
            5, options, [] { return 0; }, [floor] { return floor; });
    }
};

TEST(fenced_acquire_fsm, token_is_one_above_the_granting_majoritys_highest_counter) {
    harness h;
    auto fsm = h.make();
    fsm.start(h.now);
    EXPECT_EQ(fsm.on_set_reply(1, 0, node_outcome::granted, h.now, 7).what, kind::wait);
    EXPECT_EQ(fsm.on_set_reply(1, 1, node_outcome::refused, h.now).what, kind::wait);
    EXPECT_EQ(fsm.on_set_reply(1, 2, node_outcome::granted, h.now, 12).what, kind::wait);
    const auto raise = fsm.on_set_reply(1, 3, node_outcome::granted, h.now + 1ms, 3);
    ASSERT_EQ(raise.what, kind::send_raise);
    EXPECT_EQ(fsm.fence_token(), 13u);
    EXPECT_EQ(raise.at, h.now + 1ms + 50ms);
    EXPECT_FALSE(fsm.finished()) << "a quorum of SETs is not yet a fenced grant";
    EXPECT_FALSE(fsm.needs_cleanup(1)) << "the refusing node gets neither raise nor cleanup";
    EXPECT_TRUE(fsm.needs_cleanup(4)) << "the silent node's SET may still land: raise there too";
}

TEST(fenced_acquire_fsm, granted_only_when_a_majority_raised_with_validity_from_phase_one) {
    harness h;
    auto fsm = h.make();
    const auto start = h.now;
    fsm.start(h.now);
    for (std::size_t n = 0; n < 3; ++n) {
        fsm.on_set_reply(1, n, node_outcome::granted, h.now, 4);
    }
    ASSERT_TRUE(fsm.raising());
    h.now += 2ms;
    EXPECT_EQ(fsm.on_raise_reply(1, 0, node_outcome::granted, h.now).what, kind::wait);
    EXPECT_EQ(fsm.on_raise_reply(1, 1, node_outcome::refused, h.now).what, kind::wait);
    EXPECT_EQ(fsm.on_raise_reply(1, 3, node_outcome::failed, h.now).what, kind::wait);
    const auto done = fsm.on_raise_reply(1, 2, node_outcome::granted, h.now);
    EXPECT_EQ(done.what, kind::wait) << "two raised of five: not yet";
    const auto granted = fsm.on_raise_reply(1, 4, node_outcome::granted, h.now);
    ASSERT_EQ(granted.what, kind::done);
    EXPECT_FALSE(granted.error);
    EXPECT_EQ(fsm.fence_token(), 5u);
    // Validity runs from the start of phase 1: ttl - drift (100 ms + 2 ms).
    EXPECT_EQ(fsm.valid_until(), start + 10s - 102ms);
}

TEST(fenced_acquire_fsm, a_raise_handled_at_or_after_its_deadline_is_no_vote) {
    harness h;
    auto fsm = h.make();
    fsm.start(h.now);
    fsm.on_set_reply(1, 0, node_outcome::granted, h.now, 4);
    fsm.on_set_reply(1, 1, node_outcome::granted, h.now, 4);
    const auto raise = fsm.on_set_reply(1, 2, node_outcome::granted, h.now, 4);
    ASSERT_EQ(raise.what, kind::send_raise);
    fsm.on_raise_reply(1, 0, node_outcome::granted, h.now + 1ms);
    fsm.on_raise_reply(1, 1, node_outcome::granted, h.now + 1ms);
    const auto a = fsm.on_raise_reply(1, 2, node_outcome::granted, raise.at);
    ASSERT_EQ(a.what, kind::send_cleanup) << "a stalled loop's waiting raise reply is late";
    EXPECT_FALSE(fsm.finished());
}

TEST(fenced_acquire_fsm, raise_refused_by_a_majority_fails_and_cleans_up) {
    harness h;
    auto fsm = h.make();
    fsm.start(h.now);
    for (std::size_t n = 0; n < 3; ++n) {
        fsm.on_set_reply(1, n, node_outcome::granted, h.now, 0);
    }
    fsm.on_raise_reply(1, 0, node_outcome::refused, h.now);
    fsm.on_raise_reply(1, 1, node_outcome::refused, h.now);
    const auto a = fsm.on_raise_reply(1, 2, node_outcome::refused, h.now);
    ASSERT_EQ(a.what, kind::send_cleanup);
    for (std::size_t n = 0; n < 5; ++n) {
        EXPECT_TRUE(fsm.needs_cleanup(n)) << n;
    }
    fsm.on_cleanup_sent(h.now);
    for (std::size_t n = 0; n < 4; ++n) {
        EXPECT_EQ(fsm.on_cleanup_reply(1, n, h.now).what, kind::wait);
    }
    const auto done = fsm.on_cleanup_reply(1, 4, h.now);
    ASSERT_EQ(done.what, kind::done);
    EXPECT_EQ(done.error, errc::contention);
}

TEST(fenced_acquire_fsm, raise_deadline_is_capped_by_the_validity_and_says_so) {
    harness h;
    h.options.ttl = 100ms; // horizon: 100 - 3 (drift) - 1 (min validity) = 96 ms
    h.options.node_timeout = 80ms;
    auto fsm = h.make();
    const auto start = h.now;
    fsm.start(h.now);
    h.now += 60ms;
    for (std::size_t n = 0; n < 3; ++n) {
        fsm.on_set_reply(1, n, node_outcome::granted, h.now, 1);
    }
    const auto raise = fsm.on_set_reply(1, 3, node_outcome::granted, h.now, 1);
    ASSERT_EQ(fsm.fence_token(), 2u);
    EXPECT_EQ(raise.what, kind::wait) << "already raising since the third grant";
    h.now = start + 96ms;
    const auto late = fsm.on_deadline(h.now);
    ASSERT_EQ(late.what, kind::send_cleanup);
    fsm.on_cleanup_sent(h.now);
    // The fourth grant came after the quorum: cleaned up, but not waited for.
    EXPECT_TRUE(fsm.needs_cleanup(3));
    EXPECT_EQ(fsm.on_cleanup_reply(1, 0, h.now).what, kind::wait);
    EXPECT_EQ(fsm.on_cleanup_reply(1, 1, h.now).what, kind::wait);
    const auto done = fsm.on_cleanup_reply(1, 2, h.now);
    ASSERT_EQ(done.what, kind::done);
    EXPECT_EQ(done.error, errc::validity_expired);
}

TEST(fenced_acquire_fsm, raise_timeout_within_the_validity_is_quorum_unreachable) {
    harness h;
    auto fsm = h.make();
    fsm.start(h.now);
    for (std::size_t n = 0; n < 3; ++n) {
        fsm.on_set_reply(1, n, node_outcome::granted, h.now, 1);
    }
    fsm.on_raise_reply(1, 0, node_outcome::granted, h.now);
    ASSERT_EQ(fsm.on_deadline(h.now + 50ms).what, kind::send_cleanup);
    fsm.on_cleanup_sent(h.now + 50ms);
    fsm.on_cleanup_reply(1, 0, h.now + 50ms);
    fsm.on_cleanup_reply(1, 1, h.now + 50ms);
    const auto done = fsm.on_cleanup_reply(1, 2, h.now + 50ms);
    ASSERT_EQ(done.what, kind::done);
    EXPECT_EQ(done.error, errc::quorum_unreachable);
}

TEST(fenced_acquire_fsm, a_floor_above_the_counters_wins_and_names_the_nodes_behind_it) {
    harness h;
    auto fsm = h.make(40);
    fsm.start(h.now);
    fsm.on_set_reply(1, 0, node_outcome::granted, h.now, 40);
    fsm.on_set_reply(1, 2, node_outcome::granted, h.now, 0);
    fsm.on_set_reply(1, 4, node_outcome::granted, h.now, 39);
    EXPECT_EQ(fsm.fence_token(), 41u);
    EXPECT_EQ(fsm.counters_behind_floor(), (std::vector<std::size_t>{2, 4}));
}

// The floor is asked at the raise, not at the start: another acquire of this client granted
// the key token 7 while this one waited, and the nodes lost their counters since (a restart
// without fsync): the token is still above 7, never 7 again.
TEST(fenced_acquire_fsm, the_floor_is_read_at_the_raise_not_when_the_acquire_began) {
    harness h;
    std::uint64_t floor = 0;
    acquire_fsm fsm(
        5, h.options, [] { return 0; }, [&floor] { return floor; });
    fsm.start(h.now);
    floor = 7;
    fsm.on_set_reply(1, 0, node_outcome::granted, h.now, 6);
    fsm.on_set_reply(1, 1, node_outcome::granted, h.now, 0);
    ASSERT_EQ(fsm.on_set_reply(1, 2, node_outcome::granted, h.now, 0).what, kind::send_raise);
    EXPECT_EQ(fsm.fence_token(), 8u);
    EXPECT_EQ(fsm.fence_floor(), 7u);
    EXPECT_EQ(fsm.counters_behind_floor(), (std::vector<std::size_t>{0, 1, 2}));
}

TEST(fenced_acquire_fsm, cancel_while_raising_cleans_up_and_reports_cancelled) {
    harness h;
    auto fsm = h.make();
    fsm.start(h.now);
    for (std::size_t n = 0; n < 3; ++n) {
        fsm.on_set_reply(1, n, node_outcome::granted, h.now, 1);
    }
    ASSERT_EQ(fsm.on_cancel(h.now).what, kind::send_cleanup);
    EXPECT_EQ(fsm.on_raise_reply(1, 0, node_outcome::granted, h.now).what, kind::wait)
        << "a raise after the cancel changes nothing";
    fsm.on_cleanup_sent(h.now);
    fsm.on_cleanup_reply(1, 0, h.now);
    fsm.on_cleanup_reply(1, 1, h.now);
    const auto done = fsm.on_cleanup_reply(1, 2, h.now);
    ASSERT_EQ(done.what, kind::done);
    EXPECT_EQ(done.error, errc::cancelled);
}

TEST(fenced_acquire_fsm, counter_at_the_top_of_the_range_fails_instead_of_wrapping) {
    harness h;
    auto fsm = h.make();
    fsm.start(h.now);
    fsm.on_set_reply(1, 0, node_outcome::granted, h.now, 1);
    fsm.on_set_reply(1, 1, node_outcome::granted, h.now, UINT64_MAX);
    const auto a = fsm.on_set_reply(1, 2, node_outcome::granted, h.now, 1);
    EXPECT_EQ(a.what, kind::send_cleanup);
}

TEST(fenced_acquire_fsm, without_fencing_a_quorum_of_sets_is_the_grant) {
    harness h;
    h.options.fencing = false;
    auto fsm = h.make();
    fsm.start(h.now);
    fsm.on_set_reply(1, 0, node_outcome::granted, h.now);
    fsm.on_set_reply(1, 1, node_outcome::granted, h.now);
    const auto a = fsm.on_set_reply(1, 2, node_outcome::granted, h.now);
    EXPECT_EQ(a.what, kind::done);
    EXPECT_EQ(fsm.fence_token(), 0u);
}

TEST(fence_floors, keeps_the_highest_and_stays_bounded) {
    redlock::detail::fence_floors floors(2);
    floors.raise("a", 5);
    floors.raise("a", 3);
    EXPECT_EQ(floors.floor("a"), 5u);
    EXPECT_EQ(floors.floor("b"), 0u);
    floors.raise("b", 1);
    floors.raise("c", 9);
    const int remembered =
        (floors.floor("a") != 0) + (floors.floor("b") != 0) + (floors.floor("c") != 0);
    EXPECT_EQ(remembered, 2);
    EXPECT_EQ(floors.floor("c"), 9u);
}

/// Redis Cluster's key slot, to show the counter lands in the lock key's slot.
unsigned crc16(std::string_view s) {
    unsigned crc = 0;
    for (const unsigned char c : s) {
        crc ^= static_cast<unsigned>(c) << 8;
        for (int i = 0; i < 8; ++i) {
            crc = (crc & 0x8000) ? ((crc << 1) ^ 0x1021) : (crc << 1);
            crc &= 0xffff;
        }
    }
    return crc;
}

unsigned slot(std::string_view key) {
    const auto open = key.find('{');
    if (open != std::string_view::npos) {
        const auto close = key.find('}', open + 1);
        if (close != std::string_view::npos && close > open + 1) {
            key = key.substr(open + 1, close - open - 1);
        }
    }
    return crc16(key) % 16384;
}

TEST(fencing_counter_key, shares_the_lock_keys_slot) {
    EXPECT_EQ(crc16("123456789"), 0x31C3u) << "the reference CRC16-CCITT (XModem) value";
    for (const std::string key : {"orders:42", "{user:7}:cart", "a{b}c", "x"}) {
        const auto counter = redlock::fencing_counter_key(key);
        EXPECT_NE(counter, key);
        EXPECT_EQ(slot(counter), slot(key)) << key << " -> " << counter;
    }
    EXPECT_EQ(redlock::fencing_counter_key("orders:42"), "{orders:42}:fence");
    EXPECT_EQ(redlock::fencing_counter_key("{user:7}:cart"), "{user:7}:cart:fence");
}

} // namespace

namespace {

TEST(fenced_acquire_fsm, a_counter_far_ahead_of_the_others_refuses_the_acquire_without_a_raise) {
    harness h;
    h.options.retry.max_attempts = 5; // refused counters are not retried anyway
    acquire_fsm fsm(3, h.options, [] { return 0; });
    fsm.start(h.now);
    fsm.on_set_reply(1, 2, node_outcome::failed, h.now);
    EXPECT_EQ(fsm.on_set_reply(1, 0, node_outcome::granted, h.now, 18446744073709551614u).what,
              kind::wait);
    const auto cleanup = fsm.on_set_reply(1, 1, node_outcome::granted, h.now, 3);
    ASSERT_EQ(cleanup.what, kind::send_cleanup) << "no raise: the counters stay as they are";
    EXPECT_EQ(fsm.fence_token(), 0u);
    ASSERT_TRUE(fsm.counter_refused());
    EXPECT_EQ(fsm.counter_refused()->node, 0u);
    fsm.on_cleanup_sent(h.now);
    fsm.on_cleanup_reply(1, 0, h.now);
    const auto done = fsm.on_cleanup_reply(1, 1, h.now);
    ASSERT_EQ(done.what, kind::done);
    EXPECT_EQ(done.error, errc::fencing_counter_refused);
    EXPECT_EQ(fsm.attempt(), 1u);
}

TEST(fenced_acquire_fsm, counters_within_the_bound_are_raised_above_the_highest) {
    harness h;
    h.options.max_counter_lead = 10;
    acquire_fsm fsm(3, h.options, [] { return 0; });
    fsm.start(h.now);
    fsm.on_set_reply(1, 0, node_outcome::granted, h.now, 13);
    ASSERT_EQ(fsm.on_set_reply(1, 1, node_outcome::granted, h.now, 3).what, kind::send_raise);
    EXPECT_EQ(fsm.fence_token(), 14u) << "the leader stays in the maximum";
    EXPECT_FALSE(fsm.counter_refused());
}

TEST(fenced_acquire_fsm, counters_at_the_top_refuse_with_the_same_error) {
    harness h;
    acquire_fsm fsm(3, h.options, [] { return 0; });
    fsm.start(h.now);
    fsm.on_set_reply(1, 0, node_outcome::granted, h.now, 18446744073709551615u);
    const auto cleanup =
        fsm.on_set_reply(1, 1, node_outcome::granted, h.now, 18446744073709551615u);
    ASSERT_EQ(cleanup.what, kind::send_cleanup);
    ASSERT_TRUE(fsm.counter_refused());
    EXPECT_EQ(fsm.counter_refused()->what, redlock::detail::counter_rejection::kind::exhausted);
    fsm.on_cleanup_sent(h.now);
    fsm.on_cleanup_reply(1, 0, h.now);
    fsm.on_cleanup_reply(1, 1, h.now);
    const auto done = fsm.on_cleanup_reply(1, 2, h.now); // silent: its SET may have landed
    ASSERT_EQ(done.what, kind::done);
    EXPECT_EQ(done.error, errc::fencing_counter_refused);
}

} // namespace
