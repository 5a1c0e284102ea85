#include "transport/reply_pipeline.hpp"

#include "transport/server_text.hpp"

namespace redlock::detail {

reply_pipeline::reply_pipeline(std::size_t max_reply_size, std::vector<std::string> secrets)
    : reader_(max_reply_size)
    , secrets_(std::move(secrets)) {}

std::string reply_pipeline::consume(std::string_view bytes, const deliver_fn& deliver) {
    if (!broken_.empty()) {
        return broken_;
    }
    reader_.feed(bytes);
    for (;;) {
        reply_ptr reply;
        switch (reader_.next(reply)) {
        case reply_reader::status::need_more:
            return {};
        case reply_reader::status::broken:
            broken_ = reader_.why();
            return broken_;
        case reply_reader::status::reply:
            break;
        }
        if (push_ && push_(*reply)) {
            continue;
        }
        if (sent_.empty()) {
            // Two replies to one command, or bytes injected on the path: whatever comes
            // next cannot be matched to its command any more.
            broken_ = "a reply to no command (answered twice, or bytes injected on the way)";
            return broken_;
        }
        sent_command command = std::move(sent_.front());
        sent_.pop_front();
        std::string message;
        if (reply->type == REDIS_REPLY_ERROR) {
            message = printable_server_text(std::string_view(reply->str, reply->len), secrets_);
        }
        if (!deliver(std::move(command), node_reply{{}, reply.get(), message})) {
            return {};
        }
    }
}

} // namespace redlock::detail
