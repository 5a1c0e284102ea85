#include "transport/commands.hpp"

#include <redlock/error.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

using redlock::errc;
using redlock::lock_mode;
using redlock::lock_options;
using redlock::max_keys_per_lock;
using redlock::node_outcome;
namespace d = redlock::detail;

struct fake_reply {
    redisReply reply{};
    std::string text;

    fake_reply(int type, std::string s = {}, long long integer = 0)
        : text(std::move(s)) {
        reply.type = type;
        reply.str = text.data();
        reply.len = text.size();
        reply.integer = integer;
    }
    d::node_reply view() const {
        d::node_reply r;
        r.reply = &reply;
        if (reply.type == REDIS_REPLY_ERROR) {
            r.message = text;
        }
        return r;
    }
};

TEST(commands, set_nx_px_argument_vector) {
    const std::string ttl = "30000";
    auto c = d::set_nx_px("k", "tok", ttl);
    ASSERT_EQ(c.args.size(), 6u);
    EXPECT_EQ(c.args[0], "SET");
    EXPECT_EQ(c.args[1], "k");
    EXPECT_EQ(c.args[2], "tok");
    EXPECT_EQ(c.args[3], "NX");
    EXPECT_EQ(c.args[4], "PX");
    EXPECT_EQ(c.args[5], "30000");
}

TEST(commands, wire_bytes_are_a_resp_array_of_bulk_strings) {
    // Arguments a key or token may hold: empty, CRLF and NUL inside, and one long enough
    // for a length of several digits.
    const std::string binary("a\r\n\0b", 5);
    const std::string long_text(12345, 'x');
    const d::command cmd{{"SET", "", binary, long_text}};
    EXPECT_EQ(d::wire_bytes(cmd), "*4\r\n$3\r\nSET\r\n$0\r\n\r\n$5\r\n" + binary +
                                      "\r\n$12345\r\n" + long_text + "\r\n");
    const std::string_view none[1] = {"PING"};
    EXPECT_EQ(d::wire_bytes(none, 1), "*1\r\n$4\r\nPING\r\n");
}

TEST(commands, scripts_use_evalsha_with_their_digest_and_eval_as_fallback) {
    const std::vector<std::string> keys{"k"};
    auto sha = d::script_call(d::release_script, false, {keys}, {"tok"});
    ASSERT_EQ(sha.args.size(), 5u);
    EXPECT_EQ(sha.args[0], "EVALSHA");
    EXPECT_EQ(sha.args[1], d::release_script.sha1);
    EXPECT_EQ(sha.args[2], "1");
    EXPECT_EQ(sha.args[3], "k");
    EXPECT_EQ(sha.args[4], "tok");
    auto eval = d::script_call(d::extend_script, true, {keys}, {"tok", "500", "0", ""});
    ASSERT_EQ(eval.args.size(), 8u);
    EXPECT_EQ(eval.args[0], "EVAL");
    EXPECT_EQ(eval.args[1], d::extend_script.text);
    EXPECT_EQ(eval.args[5], "500");
    EXPECT_EQ(eval.args[6], "0");
    EXPECT_EQ(eval.args[7], "");
}

TEST(commands, several_keys_and_their_counters_go_in_keys_in_order) {
    const std::vector<std::string> keys{"a", "b", "c"};
    const std::vector<std::string> counters{"{a}:fence", "{b}:fence", "{c}:fence"};
    auto c = d::script_call(d::acquire_script, false, {keys, counters}, {"tok", "900", "3"});
    ASSERT_EQ(c.args.size(), 3u + 6u + 3u);
    EXPECT_EQ(c.args[2], "6");
    EXPECT_EQ(c.args[3], "a");
    EXPECT_EQ(c.args[5], "c");
    EXPECT_EQ(c.args[6], "{a}:fence");
    EXPECT_EQ(c.args[8], "{c}:fence");
    EXPECT_EQ(c.args[9], "tok");
    EXPECT_EQ(c.args[11], "3");
    EXPECT_EQ(d::small_decimal(2 * max_keys_per_lock), std::to_string(2 * max_keys_per_lock));
}

TEST(commands, kind_argument_names_the_mode) {
    lock_options o;
    EXPECT_EQ(d::kind_argument(o), "");
    o.mode = lock_mode::shared;
    EXPECT_EQ(d::kind_argument(o), "shared");
    o.mode = lock_mode::permit;
    o.permits = 12;
    EXPECT_EQ(d::kind_argument(o), "12");
}

TEST(commands, acquire_script_replies) {
    EXPECT_EQ(d::classify_acquire_script_reply(fake_reply(REDIS_REPLY_NIL).view()).outcome,
              node_outcome::refused);
    EXPECT_EQ(
        d::classify_acquire_script_reply(fake_reply(REDIS_REPLY_INTEGER, {}, 1).view()).outcome,
        node_outcome::granted);
    auto counted = d::classify_acquire_script_reply(fake_reply(REDIS_REPLY_STRING, "41").view());
    EXPECT_EQ(counted.outcome, node_outcome::granted);
    EXPECT_EQ(counted.counter, 41u);
    for (const char* bad : {"041", "-1", "", "12x", "18446744073709551616"}) {
        EXPECT_EQ(
            d::classify_acquire_script_reply(fake_reply(REDIS_REPLY_STRING, bad).view()).error,
            errc::unexpected_reply)
            << bad;
    }
    EXPECT_EQ(d::classify_acquire_script_reply(fake_reply(REDIS_REPLY_INTEGER, {}, 0).view()).error,
              errc::unexpected_reply);
    auto mismatch = d::classify_acquire_script_reply(
        fake_reply(REDIS_REPLY_ERROR, "REDLOCK_MISMATCH key holds a semaphore of 3 permits")
            .view());
    EXPECT_EQ(mismatch.outcome, node_outcome::failed);
    EXPECT_EQ(mismatch.error, errc::lock_mismatch);
    auto other = d::classify_acquire_script_reply(
        fake_reply(REDIS_REPLY_ERROR, "WRONGTYPE Operation against a key").view());
    EXPECT_EQ(other.error, errc::server_error);
    auto missing = d::classify_acquire_script_reply(
        fake_reply(REDIS_REPLY_ERROR, "NOSCRIPT No matching script. Please use EVAL.").view());
    EXPECT_TRUE(missing.noscript);
}

TEST(commands, embedded_scripts_come_from_lua_files) {
    EXPECT_NE(d::release_script.text.find("redis.call('DEL'"), std::string_view::npos);
    EXPECT_NE(d::extend_script.text.find("redis.call('PEXPIRE'"), std::string_view::npos);
    EXPECT_EQ(d::release_script.sha1.size(), 40u);
    EXPECT_NE(d::release_script.sha1, d::extend_script.sha1);
}

TEST(commands, set_replies) {
    EXPECT_EQ(d::classify_set_reply(fake_reply(REDIS_REPLY_STATUS, "OK").view()).outcome,
              node_outcome::granted);
    EXPECT_EQ(d::classify_set_reply(fake_reply(REDIS_REPLY_NIL).view()).outcome,
              node_outcome::refused);
    auto ro = d::classify_set_reply(
        fake_reply(REDIS_REPLY_ERROR, "READONLY You can't write against a read only replica.")
            .view());
    EXPECT_EQ(ro.outcome, node_outcome::failed);
    EXPECT_EQ(ro.error, errc::server_error);
    auto odd = d::classify_set_reply(fake_reply(REDIS_REPLY_INTEGER, {}, 1).view());
    EXPECT_EQ(odd.error, errc::unexpected_reply);

    d::node_reply lost;
    lost.error = errc::connection_failed;
    EXPECT_EQ(d::classify_set_reply(lost).error, errc::connection_failed);
}

TEST(commands, a_refusal_by_a_string_without_expiry_is_a_mismatch) {
    // PTTL -1: the key never expires, so it is no lock (every Redlock client's lock has a
    // TTL) and waiting for it would never end.
    const auto forever = d::classify_refusal_ttl(fake_reply(REDIS_REPLY_INTEGER, {}, -1).view());
    EXPECT_EQ(forever.outcome, node_outcome::failed);
    EXPECT_EQ(forever.error, errc::lock_mismatch);
    // A TTL left (how other Redlock clients hold a lock), the key gone meanwhile, or no
    // answer to PTTL (NOPERM for a user without +pttl, a cut): the refusal stands.
    for (const long long pttl : {25'000LL, 1LL, -2LL}) {
        const auto held = d::classify_refusal_ttl(fake_reply(REDIS_REPLY_INTEGER, {}, pttl).view());
        EXPECT_EQ(held.outcome, node_outcome::refused) << pttl;
        EXPECT_FALSE(held.error) << pttl;
    }
    EXPECT_EQ(d::classify_refusal_ttl(
                  fake_reply(REDIS_REPLY_ERROR, "NOPERM this user has no permissions").view())
                  .outcome,
              node_outcome::refused);
    d::node_reply lost;
    lost.error = errc::connection_failed;
    EXPECT_EQ(d::classify_refusal_ttl(lost).outcome, node_outcome::refused);
}

TEST(commands, script_replies_and_noscript) {
    EXPECT_EQ(d::classify_script_reply(fake_reply(REDIS_REPLY_INTEGER, {}, 1).view()).outcome,
              node_outcome::granted);
    EXPECT_EQ(d::classify_script_reply(fake_reply(REDIS_REPLY_INTEGER, {}, 0).view()).outcome,
              node_outcome::refused);
    EXPECT_EQ(d::classify_script_reply(fake_reply(REDIS_REPLY_INTEGER, {}, 7).view()).error,
              errc::unexpected_reply);
    auto missing = d::classify_script_reply(
        fake_reply(REDIS_REPLY_ERROR, "NOSCRIPT No matching script. Please use EVAL.").view());
    EXPECT_TRUE(missing.noscript);
    auto busy = d::classify_script_reply(
        fake_reply(REDIS_REPLY_ERROR, "BUSY Redis is busy running a script.").view());
    EXPECT_FALSE(busy.noscript);
    EXPECT_EQ(busy.error, errc::server_error);
}

} // namespace
