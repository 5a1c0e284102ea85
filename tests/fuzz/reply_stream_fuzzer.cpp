// libFuzzer target for everything a node can send: arbitrary bytes, cut into arbitrary
// chunks, against a queue of commands waiting for replies. Beyond "no crash, no abort, no
// leak, no UB": every command gets at most one reply, in order; a broken stream stays
// broken and leaves the rest waiting for the connection to fail them; server text handed
// on is printable; no reply passes the bound.
//   scripts/fuzz.sh [seconds]
#include "transport/reply_pipeline.hpp"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

constexpr std::size_t max_chunk = 512;

void require(bool condition) {
    if (!condition) {
        std::abort();
    }
}

class silent_target final : public redlock::detail::reply_target {
public:
    void on_reply(std::uint64_t, const redlock::detail::node_reply&) override {}
};

/// The bytes a reply occupies at least, nested elements included.
std::size_t smallest_size(const redisReply* reply) {
    std::size_t size = 3 + reply->len;
    for (std::size_t i = 0; i < reply->elements; ++i) {
        size += smallest_size(reply->element[i]);
    }
    return size;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider input(data, size);
    // Small bounds, so that the fuzzer reaches them.
    const std::size_t max_reply = input.ConsumeIntegralInRange<std::size_t>(16, 4096);
    const std::size_t commands = input.ConsumeIntegralInRange<std::size_t>(0, 64);
    redlock::detail::reply_pipeline pipeline(max_reply, {"secret"});
    const auto target = std::make_shared<silent_target>();
    for (std::size_t tag = 0; tag < commands; ++tag) {
        pipeline.expect({target, tag, {}});
    }

    std::uint64_t next_tag = 0;
    std::string broken;
    while (input.remaining_bytes() > 0) {
        const auto chunk = input.ConsumeRandomLengthString(max_chunk);
        const auto why = pipeline.consume(chunk, [&](redlock::detail::sent_command&& sent,
                                                     const redlock::detail::node_reply& reply) {
            require(sent.tag == next_tag++); // in order, each once
            require(sent.target == target);
            require(reply.reply != nullptr && !reply.error);
            // Bounded by the checks after each chunk: the bound, plus one chunk.
            require(smallest_size(reply.reply) <= max_reply + max_chunk);
            for (const char c : reply.message) {
                require(c >= 0x20 && c < 0x7f);
            }
            return true;
        });
        if (!broken.empty()) {
            require(why == broken); // broken for good
        }
        broken = why;
        for (const char c : why) {
            require(c >= 0x20 && c < 0x7f);
        }
    }
    require(next_tag <= commands);
    require(pipeline.waiting() == commands - next_tag);
    require(pipeline.take_waiting().size() == commands - next_tag);
    return 0;
}
