// The Lua scripts of lua/ against a real Redis 7 node, one script call at a time: the
// contract each one promises (grants and refusals, all or nothing over several keys, the
// holders' hash of readers and permits with its expiry and purge, the release channel),
// and that no key of an unexpected type makes a script fail.
#include "support/script_node.hpp"
#include "support/topology.hpp"

#include <redlock/fencing.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <thread>

namespace redlock::test {
namespace {

using namespace std::chrono_literals;
using detail::acquire_script;
using detail::extend_script;
using detail::fence_raise_script;
using detail::force_release_script;
using detail::holders_acquire_script;
using detail::release_script;
using detail::writer_waiting_script;

/// A token as the library makes them: 32 lowercase hex characters, then, as a semaphore's
/// holder's token ends, its slot: holders 1, 3, 5... take slot 0, holders 2, 4... slot 1 (a
/// string or a reader carries it as part of an opaque token).
std::string token(int i) {
    std::string t = "0123456789abcdef0123456789abcdef";
    t[0] = "0123456789abcdef"[i % 16];
    t[1] = "0123456789abcdef"[(i / 16) % 16];
    return t + "/" + std::to_string((i + 1) % 2);
}

class scripts_test : public ::testing::Test {
protected:
    void TearDown() override {
        const auto keys = node.call({"KEYS", "*" + prefix() + "*"});
        for (const auto& k : keys.elements) {
            node.call({"DEL", k.text});
        }
    }

    /// A key of this test's own: tests never see each other's keys.
    std::string key(const std::string& name) const { return prefix() + name; }

    long long now_ms() {
        const auto t = node.call({"TIME"});
        return std::stoll(t.elements.at(0).text) * 1000 + std::stoll(t.elements.at(1).text) / 1000;
    }
    std::map<std::string, std::string> fields(const std::string& k) {
        std::map<std::string, std::string> out;
        const auto flat = node.call({"HGETALL", k});
        for (std::size_t i = 0; i + 1 < flat.elements.size(); i += 2) {
            out[flat.elements[i].text] = flat.elements[i + 1].text;
        }
        return out;
    }
    long long pttl(const std::string& k) { return node.call({"PTTL", k}).integer; }
    std::string type(const std::string& k) { return node.call({"TYPE", k}).text; }

    resp_value reader(const std::string& k, int who, const std::string& ttl = "10000") {
        return node.eval(holders_acquire_script, {k}, {token(who), ttl, "shared"});
    }
    resp_value permit(const std::string& k, int who, const std::string& n,
                      const std::string& ttl = "10000") {
        return node.eval(holders_acquire_script, {k}, {token(who), ttl, n});
    }

    /// Keys of every type that is not a lock of ours, with the one string that is not a lock
    /// (no expiry: what a fencing counter looks like).
    std::vector<std::string> foreign_keys() {
        node.call({"RPUSH", key("list"), "x"});
        node.call({"SADD", key("set"), "x"});
        node.call({"ZADD", key("zset"), "1", "x"});
        node.call({"HSET", key("hash"), "field", "1"});
        node.call({"HSET", key("badmode"), "mode", "0", token(1), "99999999999999"});
        node.call({"XADD", key("stream"), "*", "f", "v"});
        node.call({"SET", key("plain"), "7"});
        return {key("list"),    key("set"),    key("zset"), key("hash"),
                key("badmode"), key("stream"), key("plain")};
    }

    script_node node{1};

private:
    static std::string prefix() {
        return std::string("scripts:") +
               ::testing::UnitTest::GetInstance()->current_test_info()->name() + ":";
    }
};

::testing::AssertionResult error_starting(const resp_value& reply, const std::string& prefix) {
    if (reply.is_error() && reply.text.starts_with(prefix)) {
        return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure()
           << "expected an error starting with \"" << prefix << "\", got " << reply.show();
}

// ---- release.lua ----

TEST_F(scripts_test, release_deletes_only_our_string_and_publishes_on_its_channel) {
    script_node listener(1);
    const auto k = key("k");
    listener.subscribe("redlock:released:" + k);
    node.call({"SET", k, token(1), "PX", "10000"});

    EXPECT_TRUE(node.eval(release_script, {k}, {token(2)}).is_integer(0));
    EXPECT_TRUE(node.call({"GET", k}).is_string(token(1)));
    EXPECT_TRUE(listener.messages().empty()) << "nothing of ours was removed: no message";

    EXPECT_TRUE(node.eval(release_script, {k}, {token(1)}).is_integer(1));
    EXPECT_EQ(type(k), "none");
    EXPECT_EQ(listener.messages(), std::vector<std::string>{"redlock:released:" + k + " "});

    EXPECT_TRUE(node.eval(release_script, {k}, {token(1)}).is_integer(0)) << "already gone";
    EXPECT_TRUE(listener.messages().empty());

    // A client's release says which one it was, so that the client knows its own.
    node.call({"SET", k, token(1), "PX", "10000"});
    EXPECT_TRUE(node.eval(release_script, {k}, {token(1), "00c0ffee00c0ffee"}).is_integer(1));
    EXPECT_EQ(listener.messages(),
              std::vector<std::string>{"redlock:released:" + k + " 00c0ffee00c0ffee"});
}

TEST_F(scripts_test, release_of_several_keys_removes_ours_and_says_whether_it_held_them_all) {
    script_node listener(1);
    const auto a = key("a"), b = key("b"), c = key("c");
    for (const auto& k : {a, b, c}) {
        listener.subscribe("redlock:released:" + k);
    }
    node.call({"SET", a, token(1), "PX", "10000"});
    node.call({"SET", b, token(2), "PX", "10000"}); // another holder's
    node.call({"SET", c, token(1), "PX", "10000"});

    EXPECT_TRUE(node.eval(release_script, {a, b, c}, {token(1)}).is_integer(0));
    EXPECT_EQ(type(a), "none");
    EXPECT_TRUE(node.call({"GET", b}).is_string(token(2)));
    EXPECT_EQ(type(c), "none");
    EXPECT_EQ(listener.messages(), (std::vector<std::string>{"redlock:released:" + a + " ",
                                                             "redlock:released:" + c + " "}));

    node.call({"SET", a, token(3), "PX", "10000"});
    node.call({"SET", c, token(3), "PX", "10000"});
    EXPECT_TRUE(node.eval(release_script, {a, c}, {token(3)}).is_integer(1));
    EXPECT_EQ(listener.messages().size(), 2u);
}

TEST_F(scripts_test, release_of_a_holder_leaves_the_others_and_the_key_goes_with_the_last) {
    script_node listener(1);
    const auto k = key("k");
    listener.subscribe("redlock:released:" + k);
    ASSERT_TRUE(reader(k, 1, "20000").is_integer(1));
    ASSERT_TRUE(reader(k, 2, "5000").is_integer(1));
    EXPECT_GT(pttl(k), 19000) << "the key expires with its latest holder";

    EXPECT_TRUE(node.eval(release_script, {k}, {token(1)}).is_integer(1));
    EXPECT_EQ(fields(k).count(token(1)), 0u);
    EXPECT_EQ(fields(k).count(token(2)), 1u);
    EXPECT_LE(pttl(k), 5000) << "the expiry follows the latest remaining holder";
    EXPECT_GT(pttl(k), 4000);
    EXPECT_EQ(listener.messages().size(), 1u);

    EXPECT_TRUE(node.eval(release_script, {k}, {token(3)}).is_integer(0));
    EXPECT_TRUE(listener.messages().empty());

    EXPECT_TRUE(node.eval(release_script, {k}, {token(2)}).is_integer(1));
    EXPECT_EQ(type(k), "none");
    EXPECT_EQ(listener.messages().size(), 1u);
    EXPECT_TRUE(node.call({"SET", k, token(4), "NX", "PX", "1000"}).type == REDIS_REPLY_STATUS)
        << "a plain acquire works again";
}

TEST_F(scripts_test, release_of_an_expired_holder_removes_it_but_says_it_did_not_hold) {
    script_node listener(1);
    const auto k = key("k");
    listener.subscribe("redlock:released:" + k);
    ASSERT_TRUE(permit(k, 1, "3", "100").is_integer(1));
    ASSERT_TRUE(permit(k, 2, "3", "10000").is_integer(1));
    std::this_thread::sleep_for(200ms);
    EXPECT_TRUE(node.eval(release_script, {k}, {token(1)}).is_integer(0));
    EXPECT_EQ(fields(k), (std::map<std::string, std::string>{{"mode", "3"},
                                                             {token(2), fields(k).at(token(2))}}));
    EXPECT_EQ(listener.messages().size(), 1u) << "something of ours went";
}

TEST_F(scripts_test, release_purges_expired_holders_and_the_passed_writer_mark) {
    const auto k = key("k");
    ASSERT_TRUE(reader(k, 1, "100").is_integer(1));
    ASSERT_TRUE(reader(k, 2, "10000").is_integer(1));
    ASSERT_TRUE(reader(k, 3, "10000").is_integer(1));
    ASSERT_TRUE(node.eval(writer_waiting_script, {k}, {"100"}).is_integer(1));
    std::this_thread::sleep_for(200ms);
    EXPECT_TRUE(node.eval(release_script, {k}, {token(2)}).is_integer(1));
    const auto left = fields(k);
    EXPECT_EQ(left.size(), 2u);
    EXPECT_EQ(left.count(token(3)), 1u);
    EXPECT_EQ(left.at("mode"), "shared");
}

// ---- acquire.lua ----

TEST_F(scripts_test, acquire_takes_every_key_or_none) {
    const auto a = key("a"), b = key("b"), c = key("c");
    EXPECT_TRUE(node.eval(acquire_script, {a, b}, {token(1), "10000", "2"}).is_integer(1));
    EXPECT_TRUE(node.call({"GET", a}).is_string(token(1)));
    EXPECT_TRUE(node.call({"GET", b}).is_string(token(1)));
    EXPECT_GT(pttl(a), 9000);
    EXPECT_GT(pttl(b), 9000);

    // b is taken: c must not be written.
    EXPECT_TRUE(node.eval(acquire_script, {c, b}, {token(2), "10000", "2"}).is_nil());
    EXPECT_EQ(type(c), "none");

    // Readers and permit holders exclude an exclusive holder, and so does any other type;
    // a string without expiry is no lock (it would never free): a mismatch, by name.
    ASSERT_TRUE(reader(key("r"), 3).is_integer(1));
    EXPECT_TRUE(node.eval(acquire_script, {c, key("r")}, {token(2), "10000", "2"}).is_nil());
    for (const auto& other : foreign_keys()) {
        const auto reply = node.eval(acquire_script, {c, other}, {token(2), "10000", "2"});
        if (other == key("plain")) {
            EXPECT_TRUE(error_starting(reply, "REDLOCK_MISMATCH ")) << reply.show();
        } else {
            EXPECT_TRUE(reply.is_nil()) << other;
        }
    }
    // A string with an expiry is how every Redlock client holds a lock: held by another.
    node.call({"SET", key("other-client"), "their-token", "PX", "10000"});
    EXPECT_TRUE(
        node.eval(acquire_script, {c, key("other-client")}, {token(2), "10000", "2"}).is_nil());
    EXPECT_TRUE(reader(key("other-client"), 1).is_nil());
    EXPECT_EQ(type(c), "none");
}

TEST_F(scripts_test, fenced_acquire_returns_the_largest_counter_read_before_writing) {
    const auto a = key("a"), b = key("b");
    const auto ca = fencing_counter_key(a), cb = fencing_counter_key(b);
    EXPECT_TRUE(node.eval(acquire_script, {a, b, ca, cb}, {token(1), "10000", "2"}).is_string("0"))
        << "no counter yet";
    node.eval(release_script, {a, b}, {token(1)});

    node.call({"SET", ca, "9"});
    node.call({"SET", cb, "12"});
    EXPECT_TRUE(node.eval(acquire_script, {a, b, ca, cb}, {token(2), "10000", "2"}).is_string("12"))
        << "by value, not lexically";
    EXPECT_TRUE(node.eval(acquire_script, {a, b, ca, cb}, {token(3), "10000", "2"}).is_nil());
    node.eval(release_script, {a, b}, {token(2)});

    node.call({"DEL", cb});
    node.call({"RPUSH", cb, "x"});
    EXPECT_TRUE(error_starting(node.eval(acquire_script, {a, b, ca, cb}, {token(4), "10000", "2"}),
                               "WRONGTYPE fencing counter " + cb));
    EXPECT_EQ(type(a), "none") << "nothing written before the counters were read";
    EXPECT_EQ(type(b), "none");
}

TEST_F(scripts_test, acquire_refuses_malformed_arguments_with_a_clear_error) {
    const auto a = key("a"), b = key("b");
    EXPECT_TRUE(error_starting(node.eval(acquire_script, {a, b, a}, {token(1), "10000", "2"}),
                               "ERR acquire.lua"));
    EXPECT_TRUE(error_starting(node.eval(acquire_script, {a}, {token(1), "10000", "0"}),
                               "ERR acquire.lua"));
    EXPECT_TRUE(error_starting(node.eval(acquire_script, {a}, {token(1), "-5", "1"}),
                               "ERR acquire.lua: ttl"));
    EXPECT_TRUE(
        error_starting(node.eval(acquire_script, {a}, {token(1), "10000"}), "ERR acquire.lua"));
    EXPECT_EQ(type(a), "none");
}

// ---- holders_acquire.lua ----

TEST_F(scripts_test, readers_share_and_exclude_a_writer_and_the_key_expires_with_the_latest) {
    const auto k = key("k");
    const auto before = now_ms();
    EXPECT_TRUE(reader(k, 1, "5000").is_integer(1));
    EXPECT_TRUE(reader(k, 2, "20000").is_integer(1));
    EXPECT_TRUE(reader(k, 3, "1000").is_integer(1));
    const auto f = fields(k);
    EXPECT_EQ(f.at("mode"), "shared");
    EXPECT_GE(std::stoll(f.at(token(1))), before + 5000);
    EXPECT_LE(std::stoll(f.at(token(1))), now_ms() + 5000);
    EXPECT_GE(std::stoll(f.at(token(2))), before + 20000);
    EXPECT_GT(pttl(k), 19000);
    EXPECT_LE(pttl(k), 20000);

    EXPECT_TRUE(node.call({"SET", k, token(9), "NX", "PX", "1000"}).is_nil()) << "the writer";
    EXPECT_TRUE(node.eval(acquire_script, {k}, {token(9), "1000", "1"}).is_nil());
}

TEST_F(scripts_test, a_string_key_refuses_readers_and_permits) {
    const auto k = key("k");
    node.call({"SET", k, token(1), "PX", "10000"});
    EXPECT_TRUE(reader(k, 2).is_nil());
    EXPECT_TRUE(permit(k, 2, "5").is_nil());
    EXPECT_TRUE(node.call({"GET", k}).is_string(token(1)));
}

TEST_F(scripts_test, a_pending_writer_blocks_new_readers_and_dies_with_the_last_reader) {
    const auto k = key("k");
    ASSERT_TRUE(reader(k, 1, "300").is_integer(1));
    EXPECT_TRUE(node.eval(writer_waiting_script, {k}, {"60000"}).is_integer(1));
    EXPECT_TRUE(reader(k, 2).is_nil()) << "the writer is not starved";
    EXPECT_EQ(fields(k).count(token(2)), 0u);
    EXPECT_LE(pttl(k), 300) << "the mark does not keep the key alive";

    std::this_thread::sleep_for(400ms);
    EXPECT_EQ(type(k), "none") << "the mark died with the last reader";
    EXPECT_EQ(node.call({"SET", k, token(3), "NX", "PX", "1000"}).text, "OK");
}

TEST_F(scripts_test, a_passed_writer_mark_lets_readers_in_again) {
    const auto k = key("k");
    ASSERT_TRUE(reader(k, 1).is_integer(1));
    ASSERT_TRUE(node.eval(writer_waiting_script, {k}, {"150"}).is_integer(1));
    EXPECT_TRUE(reader(k, 2).is_nil());
    std::this_thread::sleep_for(250ms);
    EXPECT_TRUE(reader(k, 2).is_integer(1));
    EXPECT_EQ(fields(k).count("writer_waiting"), 0u) << "purged with the expired holders";
}

TEST_F(scripts_test, permits_count_unexpired_holders_and_expired_ones_are_purged) {
    const auto k = key("k");
    EXPECT_TRUE(permit(k, 1, "2", "150").is_integer(1));
    EXPECT_TRUE(permit(k, 2, "2").is_integer(1));
    EXPECT_TRUE(permit(k, 3, "2").is_nil()) << "two permits, two holders";
    EXPECT_EQ(fields(k).count(token(3)), 0u);

    std::this_thread::sleep_for(250ms);
    EXPECT_TRUE(permit(k, 3, "2").is_integer(1)) << "holder 1 expired";
    const auto f = fields(k);
    EXPECT_EQ(f.size(), 3u) << "mode and two holders: the expired one is gone";
    EXPECT_EQ(f.count(token(1)), 0u);

    EXPECT_TRUE(node.eval(release_script, {k}, {token(2)}).is_integer(1));
    EXPECT_TRUE(permit(k, 4, "2").is_integer(1));
    EXPECT_TRUE(permit(k, 5, "2").is_nil());
}

TEST_F(scripts_test, a_permit_takes_the_slot_its_token_names_and_only_a_free_one) {
    const auto k = key("k");
    const std::string base = "00112233445566778899aabbccddeeff";
    EXPECT_TRUE(node.eval(holders_acquire_script, {k}, {base + "a/2", "10000", "3"}).is_integer(1));
    EXPECT_TRUE(node.eval(holders_acquire_script, {k}, {base + "b/2", "10000", "3"}).is_nil())
        << "slot 2 is held, though a permit is free: two holders of one slot never both get a "
           "quorum, which is what keeps holders at most N";
    EXPECT_TRUE(node.eval(holders_acquire_script, {k}, {base + "b/02", "10000", "3"}).is_nil())
        << "the same slot written otherwise";
    EXPECT_TRUE(node.eval(holders_acquire_script, {k}, {base + "c/0", "10000", "3"}).is_integer(1));
    for (const auto* bad : {"d/3", "e", "f/", "g/-1", "h/x", "i/00000001"}) {
        EXPECT_TRUE(
            error_starting(node.eval(holders_acquire_script, {k}, {base + bad, "10000", "3"}),
                           "ERR holders_acquire.lua: a permit token ends in /SLOT"))
            << bad;
    }
    EXPECT_TRUE(node.eval(extend_script, {k}, {base + "b/2", "10000", "1", "3"}).is_integer(0))
        << "re-created only into a free slot";
    EXPECT_TRUE(node.eval(extend_script, {k}, {base + "b/1", "10000", "1", "3"}).is_integer(1));
}

TEST_F(scripts_test, the_key_disappears_with_its_last_holder) {
    const auto k = key("k");
    ASSERT_TRUE(permit(k, 1, "4", "100").is_integer(1));
    ASSERT_TRUE(permit(k, 2, "4", "200").is_integer(1));
    EXPECT_LE(pttl(k), 200);
    std::this_thread::sleep_for(300ms);
    EXPECT_EQ(type(k), "none");
    EXPECT_EQ(node.call({"SET", k, token(3), "NX", "PX", "1000"}).text, "OK");
}

TEST_F(scripts_test, holders_must_agree_on_the_kind_and_the_permit_count) {
    const auto sem = key("sem"), rw = key("rw"), one = key("one");
    ASSERT_TRUE(permit(sem, 1, "3").is_integer(1));
    ASSERT_TRUE(reader(rw, 1).is_integer(1));
    ASSERT_TRUE(permit(one, 1, "1").is_integer(1));
    const auto f = fields(sem);

    EXPECT_TRUE(permit(sem, 2, "5").is_error());
    EXPECT_EQ(permit(sem, 2, "5").text,
              "REDLOCK_MISMATCH key holds a semaphore of 3 permits, asked for 5");
    EXPECT_EQ(reader(sem, 2).text, "REDLOCK_MISMATCH key holds a semaphore of 3 permits, "
                                   "asked for a read-write lock's readers");
    EXPECT_EQ(permit(rw, 2, "3").text, "REDLOCK_MISMATCH key holds a read-write lock's readers, "
                                       "asked for a semaphore of 3 permits");
    EXPECT_EQ(permit(one, 2, "2").text,
              "REDLOCK_MISMATCH key holds a semaphore of 1 permit, asked for 2");
    EXPECT_EQ(fields(sem), f) << "nothing written on a mismatch";

    const auto names = std::map<std::string, std::string>{
        {"list", "list"}, {"set", "set"},      {"zset", "zset"},
        {"hash", "hash"}, {"badmode", "hash"}, {"stream", "stream"}};
    foreign_keys();
    for (const auto& [name, what] : names) {
        EXPECT_EQ(reader(key(name), 2).text, "REDLOCK_MISMATCH key is a " + what + ", not a lock")
            << name;
        EXPECT_EQ(permit(key(name), 2, "2").text,
                  "REDLOCK_MISMATCH key is a " + what + ", not a lock")
            << name;
    }
    EXPECT_EQ(type(key("hash")), "hash");
    EXPECT_EQ(fields(key("hash")).size(), 1u);
}

TEST_F(scripts_test, fenced_holders_get_the_counter_read_before_writing) {
    const auto k = key("k");
    const auto counter = fencing_counter_key(k);
    EXPECT_TRUE(node.eval(holders_acquire_script, {k, counter}, {token(1), "10000", "shared"})
                    .is_string("0"));
    node.call({"SET", counter, "41"});
    EXPECT_TRUE(node.eval(holders_acquire_script, {k, counter}, {token(2), "10000", "shared"})
                    .is_string("41"));

    const auto s = key("s");
    const auto bad = fencing_counter_key(s);
    node.call({"RPUSH", bad, "x"});
    EXPECT_TRUE(
        error_starting(node.eval(holders_acquire_script, {s, bad}, {token(1), "10000", "2"}),
                       "WRONGTYPE fencing counter " + bad));
    EXPECT_EQ(type(s), "none");
}

TEST_F(scripts_test, holders_acquire_refuses_malformed_arguments_with_a_clear_error) {
    const auto k = key("k");
    for (const auto& kind : {"", "0", "1000001", "exclusive", "02", "-1"}) {
        EXPECT_TRUE(error_starting(node.eval(holders_acquire_script, {k}, {token(1), "1000", kind}),
                                   "ERR holders_acquire.lua: kind"))
            << kind;
    }
    EXPECT_TRUE(error_starting(node.eval(holders_acquire_script, {k}, {token(1), "0", "shared"}),
                               "ERR holders_acquire.lua: ttl"));
    EXPECT_TRUE(error_starting(
        node.eval(holders_acquire_script, {k, key("c"), key("d")}, {token(1), "1000", "shared"}),
        "ERR holders_acquire.lua"));
    EXPECT_TRUE(permit(k, 1, "1000000").is_integer(1)) << "the largest permit count";
}

// ---- writer_waiting.lua ----

TEST_F(scripts_test, writer_waiting_marks_only_readers_and_never_lowers_a_mark) {
    const auto k = key("k");
    EXPECT_TRUE(node.eval(writer_waiting_script, {k}, {"1000"}).is_integer(0)) << "no key";
    EXPECT_EQ(type(k), "none");

    node.call({"SET", k, token(1), "PX", "10000"});
    EXPECT_TRUE(node.eval(writer_waiting_script, {k}, {"1000"}).is_integer(0)) << "a writer";
    node.call({"DEL", k});

    ASSERT_TRUE(permit(k, 1, "2").is_integer(1));
    EXPECT_TRUE(node.eval(writer_waiting_script, {k}, {"1000"}).is_integer(0)) << "permits";
    EXPECT_EQ(fields(k).count("writer_waiting"), 0u);
    node.call({"DEL", k});

    ASSERT_TRUE(reader(k, 1).is_integer(1));
    const auto before = now_ms();
    EXPECT_TRUE(node.eval(writer_waiting_script, {k}, {"30000"}).is_integer(1));
    const auto mark = fields(k).at("writer_waiting");
    EXPECT_GE(std::stoll(mark), before + 30000);
    EXPECT_TRUE(node.eval(writer_waiting_script, {k}, {"100"}).is_integer(1));
    EXPECT_EQ(fields(k).at("writer_waiting"), mark) << "a later mark stays";

    for (const auto& other : foreign_keys()) {
        EXPECT_TRUE(node.eval(writer_waiting_script, {other}, {"1000"}).is_integer(0)) << other;
    }
}

TEST_F(scripts_test, writer_waiting_purges_expired_readers_and_dies_with_the_last) {
    const auto k = key("k");
    ASSERT_TRUE(reader(k, 1, "100").is_integer(1));
    ASSERT_TRUE(reader(k, 2, "400").is_integer(1));
    std::this_thread::sleep_for(200ms);
    EXPECT_TRUE(node.eval(writer_waiting_script, {k}, {"1000"}).is_integer(1));
    EXPECT_EQ(fields(k).count(token(1)), 0u) << "the expired reader went first";
    EXPECT_LE(pttl(k), 200) << "the mark does not keep the key alive";
    std::this_thread::sleep_for(300ms);
    EXPECT_TRUE(node.eval(writer_waiting_script, {k}, {"1000"}).is_integer(0));
    EXPECT_EQ(type(k), "none") << "the key went with its last reader, and the mark with it";
}

// ---- extend.lua ----

TEST_F(scripts_test, extend_of_an_exclusive_lock_as_before) {
    const auto k = key("k"), other = key("other"), missing = key("missing");
    node.call({"SET", k, token(1), "PX", "1000"});
    node.call({"SET", other, token(2), "PX", "1000"});

    EXPECT_TRUE(node.eval(extend_script, {k}, {token(1), "20000"}).is_integer(1));
    EXPECT_GT(pttl(k), 19000);
    EXPECT_TRUE(node.eval(extend_script, {other}, {token(1), "20000", "1"}).is_integer(0));
    EXPECT_LE(pttl(other), 1000) << "another holder's key is left alone";
    EXPECT_TRUE(node.eval(extend_script, {missing}, {token(1), "20000", "0"}).is_integer(0));
    EXPECT_EQ(type(missing), "none");
    EXPECT_TRUE(node.eval(extend_script, {missing}, {token(1), "20000", "1", ""}).is_integer(1));
    EXPECT_TRUE(node.call({"GET", missing}).is_string(token(1)));
    EXPECT_GT(pttl(missing), 19000);
}

TEST_F(scripts_test, extend_of_several_keys_is_all_or_nothing) {
    const auto a = key("a"), b = key("b"), c = key("c");
    node.call({"SET", a, token(1), "PX", "1000"});
    node.call({"SET", b, token(2), "PX", "1000"});
    EXPECT_TRUE(node.eval(extend_script, {a, c, b}, {token(1), "20000", "1"}).is_integer(0));
    EXPECT_LE(pttl(a), 1000) << "nothing changed";
    EXPECT_EQ(type(c), "none") << "nothing re-created";

    node.call({"DEL", b});
    EXPECT_TRUE(node.eval(extend_script, {a, c, b}, {token(1), "20000", "1"}).is_integer(1));
    for (const auto& k : {a, b, c}) {
        EXPECT_TRUE(node.call({"GET", k}).is_string(token(1))) << k;
        EXPECT_GT(pttl(k), 19000) << k;
    }
    EXPECT_TRUE(node.eval(extend_script, {a, c, key("d")}, {token(1), "20000"}).is_integer(0))
        << "a missing key without re-creation";
}

TEST_F(scripts_test, extend_of_a_reader_moves_its_deadline_and_the_key_expiry) {
    const auto k = key("k");
    ASSERT_TRUE(reader(k, 1, "1000").is_integer(1));
    ASSERT_TRUE(reader(k, 2, "2000").is_integer(1));
    const auto before = now_ms();
    EXPECT_TRUE(node.eval(extend_script, {k}, {token(1), "30000", "0", "shared"}).is_integer(1));
    EXPECT_GE(std::stoll(fields(k).at(token(1))), before + 30000);
    EXPECT_GT(pttl(k), 29000);

    EXPECT_TRUE(node.eval(extend_script, {k}, {token(1), "30000", "0", ""}).is_integer(0))
        << "not an exclusive lock";
    EXPECT_TRUE(node.eval(extend_script, {k}, {token(1), "30000", "0", "2"}).is_integer(0))
        << "not a semaphore";
    EXPECT_TRUE(node.eval(extend_script, {k}, {token(3), "30000", "0", "shared"}).is_integer(0))
        << "not a reader here";

    // The writer's mark does not stop a reader that holds, nor its re-creation.
    ASSERT_TRUE(node.eval(writer_waiting_script, {k}, {"60000"}).is_integer(1));
    EXPECT_TRUE(node.eval(extend_script, {k}, {token(2), "30000", "0", "shared"}).is_integer(1));
    EXPECT_TRUE(node.eval(extend_script, {k}, {token(3), "30000", "1", "shared"}).is_integer(1));
    EXPECT_EQ(fields(k).count(token(3)), 1u);

    // Shrinking the only long deadline shrinks the key's expiry with it.
    for (int who : {1, 2, 3}) {
        EXPECT_TRUE(
            node.eval(extend_script, {k}, {token(who), "500", "0", "shared"}).is_integer(1));
    }
    EXPECT_LE(pttl(k), 500);
}

TEST_F(scripts_test, extend_re_creates_a_reader_where_the_key_is_missing_or_readers_hold) {
    const auto k = key("k");
    EXPECT_TRUE(node.eval(extend_script, {k}, {token(1), "10000", "0", "shared"}).is_integer(0));
    EXPECT_EQ(type(k), "none");
    EXPECT_TRUE(node.eval(extend_script, {k}, {token(1), "10000", "1", "shared"}).is_integer(1));
    EXPECT_EQ(fields(k).at("mode"), "shared");
    EXPECT_GT(pttl(k), 9000);

    const auto w = key("w");
    node.call({"SET", w, token(2), "PX", "10000"});
    EXPECT_TRUE(node.eval(extend_script, {w}, {token(1), "10000", "1", "shared"}).is_integer(0))
        << "a writer holds";
}

TEST_F(scripts_test, extend_re_creates_a_permit_only_while_one_is_free) {
    const auto k = key("k");
    ASSERT_TRUE(permit(k, 1, "2", "100").is_integer(1));
    ASSERT_TRUE(permit(k, 2, "2").is_integer(1));
    ASSERT_TRUE(node.eval(extend_script, {k}, {token(1), "10000", "0", "2"}).is_integer(1));

    // Holder 3 lost its permit on this node; both permits are taken.
    EXPECT_TRUE(node.eval(extend_script, {k}, {token(3), "10000", "1", "2"}).is_integer(0));
    EXPECT_EQ(fields(k).count(token(3)), 0u);

    EXPECT_TRUE(node.eval(extend_script, {k}, {token(1), "100", "0", "2"}).is_integer(1));
    std::this_thread::sleep_for(200ms);
    EXPECT_TRUE(node.eval(extend_script, {k}, {token(1), "10000", "0", "2"}).is_integer(0))
        << "expired here, and no re-creation asked";
    EXPECT_TRUE(node.eval(extend_script, {k}, {token(3), "10000", "1", "3"}).is_integer(0))
        << "another permit count";
    EXPECT_TRUE(node.eval(extend_script, {k}, {token(3), "10000", "1", "2"}).is_integer(1));
    const auto f = fields(k);
    EXPECT_EQ(f.size(), 3u) << "holder 1's expired field was purged";
    EXPECT_EQ(f.count(token(3)), 1u);

    const auto fresh = key("fresh");
    EXPECT_TRUE(node.eval(extend_script, {fresh}, {token(4), "10000", "1", "7"}).is_integer(1));
    EXPECT_EQ(fields(fresh).at("mode"), "7");
}

TEST_F(scripts_test, extend_refuses_malformed_arguments_with_a_clear_error) {
    const auto k = key("k");
    node.call({"SET", k, token(1), "PX", "10000"});
    EXPECT_TRUE(
        error_starting(node.eval(extend_script, {k}, {token(1), "0"}), "ERR extend.lua: ttl"));
    EXPECT_TRUE(
        error_starting(node.eval(extend_script, {k}, {token(1), "1e3"}), "ERR extend.lua: ttl"));
    EXPECT_TRUE(error_starting(node.eval(extend_script, {k}, {token(1), "1000", "0", "writer"}),
                               "ERR extend.lua: kind"));
    EXPECT_TRUE(error_starting(node.eval(extend_script, {}, {token(1), "1000"}), "ERR extend.lua"));
    EXPECT_GT(pttl(k), 9000);
}

// ---- fence_raise.lua ----

TEST_F(scripts_test, fence_raise_of_one_key_as_before) {
    const auto k = key("k");
    const auto counter = fencing_counter_key(k);
    node.call({"SET", k, token(1), "PX", "10000"});
    EXPECT_TRUE(node.eval(fence_raise_script, {k, counter}, {token(1), "9"}).is_integer(1));
    EXPECT_TRUE(node.call({"GET", counter}).is_string("9"));
    EXPECT_TRUE(node.eval(fence_raise_script, {k, counter}, {token(1), "9"}).is_integer(0));
    EXPECT_TRUE(node.eval(fence_raise_script, {k, counter}, {token(1), "10"}).is_integer(1))
        << "by value, not lexically";
    EXPECT_TRUE(node.eval(fence_raise_script, {k, counter}, {token(2), "11"}).is_integer(0))
        << "not ours";
    EXPECT_TRUE(node.call({"GET", counter}).is_string("10"));
    EXPECT_EQ(pttl(counter), -1);
}

TEST_F(scripts_test, fence_raise_of_several_keys_is_all_or_nothing) {
    const auto a = key("a"), b = key("b");
    const auto ca = fencing_counter_key(a), cb = fencing_counter_key(b);
    node.eval(acquire_script, {a, b}, {token(1), "10000", "2"});
    node.call({"SET", ca, "3"});
    node.call({"SET", cb, "9"});
    EXPECT_TRUE(node.eval(fence_raise_script, {a, b, ca, cb}, {token(1), "5"}).is_integer(0));
    EXPECT_TRUE(node.call({"GET", ca}).is_string("3")) << "nothing written";
    EXPECT_TRUE(node.eval(fence_raise_script, {a, b, ca, cb}, {token(1), "10"}).is_integer(1));
    EXPECT_TRUE(node.call({"GET", ca}).is_string("10"));
    EXPECT_TRUE(node.call({"GET", cb}).is_string("10"));

    node.call({"DEL", b});
    EXPECT_TRUE(node.eval(fence_raise_script, {a, b, ca, cb}, {token(1), "11"}).is_integer(0));
    EXPECT_TRUE(node.call({"GET", ca}).is_string("10"));
}

TEST_F(scripts_test, fence_raise_counts_an_unexpired_reader_or_permit_as_holding) {
    const auto k = key("k");
    const auto counter = fencing_counter_key(k);
    ASSERT_TRUE(permit(k, 1, "2", "150").is_integer(1));
    ASSERT_TRUE(permit(k, 2, "2").is_integer(1));
    EXPECT_TRUE(node.eval(fence_raise_script, {k, counter}, {token(1), "4"}).is_integer(1));
    EXPECT_TRUE(node.eval(fence_raise_script, {k, counter}, {token(3), "5"}).is_integer(0));
    std::this_thread::sleep_for(250ms);
    EXPECT_TRUE(node.eval(fence_raise_script, {k, counter}, {token(1), "5"}).is_integer(0))
        << "holder 1 expired here";
    EXPECT_TRUE(node.eval(fence_raise_script, {k, counter}, {token(2), "5"}).is_integer(1));
    EXPECT_TRUE(node.call({"GET", counter}).is_string("5"));
}

TEST_F(scripts_test, fence_raise_with_a_counter_of_the_wrong_type_fails_without_writing) {
    const auto a = key("a"), b = key("b");
    const auto ca = fencing_counter_key(a), cb = fencing_counter_key(b);
    node.eval(acquire_script, {a, b}, {token(1), "10000", "2"});
    node.call({"HSET", cb, "f", "1"});
    EXPECT_TRUE(error_starting(node.eval(fence_raise_script, {a, b, ca, cb}, {token(1), "5"}),
                               "WRONGTYPE fencing counter " + cb));
    EXPECT_EQ(type(ca), "none");
    EXPECT_TRUE(error_starting(node.eval(fence_raise_script, {a, b, ca}, {token(1), "5"}),
                               "ERR fence_raise.lua"));
    EXPECT_TRUE(error_starting(node.eval(fence_raise_script, {a, ca}, {token(1), "05"}),
                               "ERR fence_raise.lua: t"));
}

// ---- force_release.lua ----

TEST_F(scripts_test, force_release_deletes_locks_of_every_kind_and_nothing_else) {
    script_node listener(1);
    const auto s = key("s"), r = key("r"), p = key("p");
    for (const auto& k : {s, r, p, key("plain"), key("list")}) {
        listener.subscribe("redlock:released:" + k);
    }
    node.call({"SET", s, token(1), "PX", "10000"});
    ASSERT_TRUE(reader(r, 1).is_integer(1));
    ASSERT_TRUE(permit(p, 1, "3").is_integer(1));
    const auto counter = fencing_counter_key(s);
    node.call({"SET", counter, "12"});
    auto others = foreign_keys();

    auto keys = others;
    keys.insert(keys.end(), {s, r, p, counter});
    EXPECT_TRUE(node.eval(force_release_script, keys, {}).is_integer(3));
    for (const auto& k : {s, r, p}) {
        EXPECT_EQ(type(k), "none") << k;
    }
    EXPECT_TRUE(node.call({"GET", counter}).is_string("12")) << "counters stay";
    for (const auto& k : others) {
        EXPECT_NE(type(k), "none") << k;
    }
    EXPECT_EQ(listener.messages(), (std::vector<std::string>{"redlock:released:" + s + " ",
                                                             "redlock:released:" + r + " ",
                                                             "redlock:released:" + p + " "}));
    EXPECT_TRUE(node.eval(force_release_script, {s}, {}).is_integer(0));
}

// ---- the least-privilege ACL user of docs/security.md ----

TEST_F(scripts_test, plain_locks_need_no_more_commands_than_before) {
    // Redis checks every command a script runs against the caller's rules: the plain and
    // fenced exclusive paths use only GET, SET, PEXPIRE, DEL (and a PUBLISH it may refuse).
    const std::string user = "redlock-scripts-test";
    node.call({"ACL", "SETUSER", user, "reset", "on", ">scripts-test-pw", "~scripts:*",
               "~{scripts:*}:fence", "resetchannels", "-@all", "+set", "+get", "+pexpire", "+del",
               "+eval", "+evalsha"});
    // Deleted however the test ends (which also disconnects the locker).
    struct deleted_at_exit {
        script_node& node;
        std::string user;
        ~deleted_at_exit() {
            node.call({"ACL", "DELUSER", user});
            node.call({"ACL", "LOG", "RESET"});
        }
    } guard{node, user};
    script_node locker(1);
    const auto auth = locker.call({"AUTH", user, "scripts-test-pw"});
    ASSERT_EQ(auth.text, "OK");

    const auto a = key("a"), b = key("b");
    const auto ca = fencing_counter_key(a), cb = fencing_counter_key(b);
    EXPECT_TRUE(locker.eval(acquire_script, {a}, {token(1), "10000", "1"}).is_integer(1));
    EXPECT_TRUE(locker.eval(extend_script, {a}, {token(1), "20000"}).is_integer(1));
    EXPECT_TRUE(locker.eval(extend_script, {b}, {token(1), "20000", "1"}).is_integer(1));
    EXPECT_TRUE(locker.eval(release_script, {a, b}, {token(1)}).is_integer(1))
        << "the refused PUBLISH does not fail the release";
    EXPECT_EQ(type(a), "none");
    EXPECT_TRUE(
        locker.eval(acquire_script, {a, b, ca, cb}, {token(2), "10000", "2"}).is_string("0"));
    EXPECT_TRUE(locker.eval(fence_raise_script, {a, b, ca, cb}, {token(2), "1"}).is_integer(1));
    EXPECT_TRUE(locker.eval(release_script, {a}, {token(2)}).is_integer(1));
}

// ---- every script, keys of unexpected types ----

TEST_F(scripts_test, no_script_fails_on_a_key_of_an_unexpected_type) {
    const auto others = foreign_keys();
    for (const auto& k : others) {
        const auto before = node.call({"DUMP", k});
        const auto c = fencing_counter_key(k);
        const std::vector<std::pair<std::string, resp_value>> replies{
            {"release", node.eval(release_script, {k}, {token(1)})},
            {"release of 2", node.eval(release_script, {key("free"), k}, {token(1)})},
            {"extend", node.eval(extend_script, {k}, {token(1), "1000", "1"})},
            {"extend shared", node.eval(extend_script, {k}, {token(1), "1000", "1", "shared"})},
            {"extend permits", node.eval(extend_script, {k}, {token(1), "1000", "1", "3"})},
            {"acquire", node.eval(acquire_script, {k}, {token(1), "1000", "1"})},
            {"fenced acquire", node.eval(acquire_script, {k, c}, {token(1), "1000", "1"})},
            {"fence_raise", node.eval(fence_raise_script, {k, c}, {token(1), "5"})},
            {"writer_waiting", node.eval(writer_waiting_script, {k}, {"1000"})}};
        // The only documented errors: a key that is not a lock refuses holders by name, and
        // an acquire by name a string without expiry (no lock: it never frees; a string
        // with one is an exclusive holder's, as far as a script can tell).
        const bool forever = type(k) == "string" && pttl(k) == -1;
        for (const auto& [what, reply] : replies) {
            if (forever && what.find("acquire") != std::string::npos) {
                EXPECT_TRUE(error_starting(reply, "REDLOCK_MISMATCH ")) << what << " on " << k;
                continue;
            }
            EXPECT_FALSE(reply.is_error()) << what << " on " << k << ": " << reply.show();
        }
        EXPECT_TRUE(node.eval(release_script, {k}, {token(1)}).is_integer(0)) << k;
        EXPECT_TRUE(error_starting(reader(k, 1), "REDLOCK_MISMATCH ")) << k;
        EXPECT_EQ(node.call({"DUMP", k}).text, before.text) << k << " changed";
    }
    EXPECT_EQ(type(key("free")), "none");
}

} // namespace
} // namespace redlock::test
