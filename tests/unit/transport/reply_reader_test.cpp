#include "transport/reply_reader.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using redlock::detail::reply_ptr;
using redlock::detail::reply_reader;
using status = reply_reader::status;

constexpr std::size_t limit = 1024;

TEST(reply_reader, yields_pipelined_replies_fed_in_pieces) {
    reply_reader reader(limit);
    const std::string stream = "+OK\r\n$-1\r\n:1\r\n*2\r\n$3\r\nabc\r\n:7\r\n-ERR no\r\n";
    std::vector<int> types;
    for (const char c : stream) {
        reader.feed(std::string_view(&c, 1));
        reply_ptr reply;
        while (reader.next(reply) == status::reply) {
            types.push_back(reply->type);
        }
    }
    EXPECT_EQ(types, (std::vector<int>{REDIS_REPLY_STATUS, REDIS_REPLY_NIL, REDIS_REPLY_INTEGER,
                                       REDIS_REPLY_ARRAY, REDIS_REPLY_ERROR}));
}

TEST(reply_reader, garbage_breaks_the_stream_with_a_printable_reason) {
    reply_reader reader(limit);
    reader.feed("?\x1b[2J\xff\r\n");
    reply_ptr reply;
    EXPECT_EQ(reader.next(reply), status::broken);
    EXPECT_NE(reader.why().find("protocol error"), std::string::npos) << reader.why();
    for (const char c : reader.why()) {
        EXPECT_TRUE(c >= 0x20 && c < 0x7f) << reader.why();
    }
    reader.feed("+OK\r\n");
    EXPECT_EQ(reader.next(reply), status::broken) << "a broken stream stays broken";
}

TEST(reply_reader, a_bulk_announced_at_4_gb_breaks_once_the_bound_is_passed) {
    reply_reader reader(limit);
    reader.feed("$4294967296\r\n");
    reply_ptr reply;
    EXPECT_EQ(reader.next(reply), status::need_more);
    const std::string chunk(100, 'x');
    int fed = 0;
    status s = status::need_more;
    while (s == status::need_more && fed < 100) {
        reader.feed(chunk);
        ++fed;
        s = reader.next(reply);
    }
    EXPECT_EQ(s, status::broken);
    EXPECT_LE(fed * chunk.size(), limit + chunk.size()) << "broken as soon as it passed the bound";
    EXPECT_NE(reader.why().find("more than 1024 bytes"), std::string::npos) << reader.why();
}

TEST(reply_reader, a_complete_bulk_over_the_bound_is_refused) {
    reply_reader reader(limit);
    reader.feed("$2000\r\n" + std::string(2000, 'x') + "\r\n");
    reply_ptr reply;
    EXPECT_EQ(reader.next(reply), status::broken);
    EXPECT_NE(reader.why().find("2000 bytes"), std::string::npos) << reader.why();
}

TEST(reply_reader, an_error_text_over_the_bound_is_refused) {
    reply_reader reader(limit);
    reader.feed("-ERR " + std::string(4000, 'e') + "\r\n");
    reply_ptr reply;
    EXPECT_EQ(reader.next(reply), status::broken);
}

TEST(reply_reader, arrays_cannot_announce_more_elements_than_the_bound_holds) {
    reply_reader reader(limit);
    reader.feed("*2147483647\r\n");
    reply_ptr reply;
    EXPECT_EQ(reader.next(reply), status::broken);
    EXPECT_NE(reader.why().find("2147483647 elements"), std::string::npos) << reader.why();

    // Nested arrays add up.
    reply_reader nested(limit);
    nested.feed("*300\r\n*300\r\n");
    EXPECT_EQ(nested.next(reply), status::broken) << nested.why();
}

TEST(reply_reader, an_array_within_the_bound_is_fine) {
    constexpr std::size_t most = limit / reply_reader::element_cost;
    reply_reader reader(limit);
    std::string stream = "*" + std::to_string(most) + "\r\n";
    for (std::size_t i = 0; i < most; ++i) {
        stream += ":1\r\n";
    }
    reader.feed(stream);
    reply_ptr reply;
    ASSERT_EQ(reader.next(reply), status::reply) << reader.why();
    EXPECT_EQ(reply->elements, most);

    // One more element costs what hiredis allocates for it, not its three bytes on the wire.
    reply_reader over(limit);
    over.feed("*" + std::to_string(most + 1) + "\r\n");
    EXPECT_EQ(over.next(reply), status::broken);
}

TEST(reply_reader, a_crlf_split_between_chunks_completes_the_reply) {
    reply_reader reader(limit);
    reply_ptr reply;
    reader.feed("+OK\r");
    EXPECT_EQ(reader.next(reply), status::need_more);
    reader.feed("\n:4");
    ASSERT_EQ(reader.next(reply), status::reply);
    EXPECT_EQ(reply->type, REDIS_REPLY_STATUS);
    EXPECT_EQ(reader.next(reply), status::need_more);
    reader.feed("2");
    EXPECT_EQ(reader.next(reply), status::need_more);
    reader.feed("\r");
    EXPECT_EQ(reader.next(reply), status::need_more);
    reader.feed("\n");
    ASSERT_EQ(reader.next(reply), status::reply);
    EXPECT_EQ(reply->integer, 42);
}

TEST(reply_reader, a_line_trickled_without_crlf_still_meets_the_bound) {
    reply_reader reader(limit);
    reader.feed("+");
    reply_ptr reply;
    status s = status::need_more;
    std::size_t fed = 1;
    while (s == status::need_more && fed < 4 * limit) {
        reader.feed("a");
        ++fed;
        s = reader.next(reply);
    }
    EXPECT_EQ(s, status::broken);
    EXPECT_EQ(fed, limit + 1) << "broken at the first byte past the bound";
}

TEST(reply_reader, deep_nesting_is_a_protocol_error) {
    reply_reader reader(limit);
    std::string stream;
    for (int i = 0; i < 100; ++i) {
        stream += "*1\r\n";
    }
    reader.feed(stream);
    reply_ptr reply;
    EXPECT_EQ(reader.next(reply), status::broken);
    EXPECT_NE(reader.why().find("nested"), std::string::npos) << reader.why();
}

TEST(reply_reader, the_bound_is_per_reply_not_per_stream) {
    reply_reader reader(limit);
    const std::string bulk = "$600\r\n" + std::string(600, 'x') + "\r\n";
    for (int i = 0; i < 20; ++i) {
        reader.feed(bulk);
        reply_ptr reply;
        ASSERT_EQ(reader.next(reply), status::reply) << i << ": " << reader.why();
        EXPECT_EQ(reply->len, 600U);
    }
}

TEST(reply_reader, the_bound_counts_from_where_the_reply_starts) {
    // Two replies in one chunk: the second one's bytes are not charged to the first.
    reply_reader reader(limit);
    const std::string bulk = "$700\r\n" + std::string(700, 'x') + "\r\n";
    reader.feed(bulk + bulk.substr(0, 500));
    reply_ptr reply;
    ASSERT_EQ(reader.next(reply), status::reply);
    EXPECT_EQ(reader.next(reply), status::need_more) << reader.why();
    reader.feed(bulk.substr(500));
    EXPECT_EQ(reader.next(reply), status::reply) << reader.why();
}

} // namespace
