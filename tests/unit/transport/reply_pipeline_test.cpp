#include "transport/reply_pipeline.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using redlock::detail::node_reply;
using redlock::detail::reply_pipeline;
using redlock::detail::sent_command;

struct recorded {
    std::uint64_t tag;
    int type;
    std::string message;
};

class recorder final : public redlock::detail::reply_target {
public:
    void on_reply(std::uint64_t, const node_reply&) override {}
};

struct fixture {
    reply_pipeline pipeline{1024, {"pw-secret"}};
    std::shared_ptr<recorder> target = std::make_shared<recorder>();
    std::vector<recorded> delivered;

    void expect(std::uint64_t tag) { pipeline.expect({target, tag, {}}); }
    std::string consume(std::string_view bytes) {
        return pipeline.consume(bytes, [this](sent_command&& sent, const node_reply& reply) {
            EXPECT_EQ(sent.target, target);
            delivered.push_back({sent.tag, reply.reply->type, std::string(reply.message)});
            return true;
        });
    }
};

TEST(reply_pipeline, replies_go_to_commands_in_send_order) {
    fixture f;
    f.expect(1);
    f.expect(2);
    f.expect(3);
    EXPECT_EQ(f.consume("+OK\r\n$-"), "");
    EXPECT_EQ(f.consume("1\r\n:1\r\n"), "");
    ASSERT_EQ(f.delivered.size(), 3U);
    EXPECT_EQ(f.delivered[0].tag, 1U);
    EXPECT_EQ(f.delivered[1].type, REDIS_REPLY_NIL);
    EXPECT_EQ(f.delivered[2].tag, 3U);
    EXPECT_TRUE(f.pipeline.idle());
}

TEST(reply_pipeline, a_reply_to_no_command_breaks_the_stream) {
    fixture f;
    f.expect(1);
    const auto why = f.consume("+OK\r\n+OK\r\n");
    EXPECT_NE(why.find("reply to no command"), std::string::npos) << why;
    EXPECT_EQ(f.delivered.size(), 1U) << "the first reply still went to its command";
    f.expect(2);
    EXPECT_EQ(f.consume(":1\r\n"), why) << "broken for good";
    EXPECT_EQ(f.pipeline.take_waiting().size(), 1U) << "what waits stays for the caller to fail";
}

TEST(reply_pipeline, error_text_reaches_its_command_printable) {
    fixture f;
    f.expect(1);
    EXPECT_EQ(f.consume("-ERR \x1b[31mred\x07\r\n"), "");
    ASSERT_EQ(f.delivered.size(), 1U);
    EXPECT_EQ(f.delivered[0].message, "ERR ?[31mred?");
}

TEST(reply_pipeline, error_text_reaches_its_command_without_the_secrets) {
    fixture f;
    f.expect(1);
    EXPECT_EQ(f.consume("-WRONGPASS the password pw-secret is wrong\r\n"), "");
    ASSERT_EQ(f.delivered.size(), 1U);
    EXPECT_EQ(f.delivered[0].message, "WRONGPASS the password *** is wrong");
}

TEST(reply_pipeline, delivery_can_stop_the_stream) {
    fixture f;
    f.expect(1);
    f.expect(2);
    int calls = 0;
    const auto why = f.pipeline.consume("+OK\r\n+OK\r\n", [&](sent_command&&, const node_reply&) {
        ++calls;
        return false;
    });
    EXPECT_EQ(why, "");
    EXPECT_EQ(calls, 1) << "nothing is delivered after the deliverer said stop";
}

TEST(reply_pipeline, tells_the_oldest_command) {
    fixture f;
    const auto t0 = std::chrono::steady_clock::time_point(std::chrono::seconds(5));
    f.pipeline.expect({f.target, 1, t0});
    f.pipeline.expect({f.target, 2, t0 + std::chrono::seconds(1)});
    EXPECT_EQ(f.pipeline.oldest().sent_at, t0);
    EXPECT_EQ(f.consume(":1\r\n"), "");
    EXPECT_EQ(f.pipeline.oldest().tag, 2U);
    EXPECT_EQ(f.pipeline.waiting(), 1U);
}

} // namespace
