#include "transport/reply_reader.hpp"

#include "transport/server_text.hpp"

#include <new>

namespace redlock::detail {

reply_reader::reply_reader(std::size_t max_reply_size)
    : reader_(redisReaderCreate())
    , max_reply_size_(max_reply_size) {
    if (!reader_) {
        throw std::bad_alloc();
    }
    // hiredis builds redisReply objects with its own functions; ours check the bound
    // first and then hand over to them.
    hiredis_functions_ = reader_->fn;
    functions_ = *hiredis_functions_;
    functions_.createString = &reply_reader::create_string;
    functions_.createArray = &reply_reader::create_array;
    reader_->fn = &functions_;
    reader_->privdata = this;
}

reply_reader::~reply_reader() {
    redisReaderFree(reader_);
}

void* reply_reader::create_string(const redisReadTask* task, char* text, std::size_t length) {
    auto* self = static_cast<reply_reader*>(task->privdata);
    if (length > self->max_reply_size_) {
        self->fail("a reply string of " + std::to_string(length) + " bytes, over the limit of " +
                   std::to_string(self->max_reply_size_));
        return nullptr;
    }
    return self->hiredis_functions_->createString(task, text, length);
}

void* reply_reader::create_array(const redisReadTask* task, int elements) {
    auto* self = static_cast<reply_reader*>(task->privdata);
    if (elements > 0) {
        self->elements_announced_ += static_cast<std::uint64_t>(elements);
    }
    if (self->elements_announced_ > self->max_reply_size_ / element_cost) {
        self->fail("arrays announcing " + std::to_string(self->elements_announced_) +
                   " elements, more than a reply of " + std::to_string(self->max_reply_size_) +
                   " bytes may hold");
        return nullptr;
    }
    return self->hiredis_functions_->createArray(task, elements);
}

void reply_reader::fail(std::string why) {
    if (why_.empty()) {
        why_ = std::move(why);
    }
}

void reply_reader::feed(std::string_view bytes) {
    if (!why_.empty() || bytes.empty()) {
        return;
    }
    if (redisReaderFeed(reader_, bytes.data(), bytes.size()) != REDIS_OK) {
        fail("out of memory buffering a reply");
        return;
    }
    fed_ += bytes.size();
    crlf_fed_ = crlf_fed_ || bytes.find("\r\n") != std::string_view::npos ||
                (last_fed_cr_ && bytes.front() == '\n');
    last_fed_cr_ = bytes.back() == '\r';
}

reply_reader::status reply_reader::next(reply_ptr& out) {
    if (!why_.empty()) {
        return status::broken;
    }
    if (!crlf_fed_) {
        // Every RESP item ends with CRLF: nothing can complete, and hiredis would rescan
        // the partial line from its start.
        return within_bound() ? status::need_more : status::broken;
    }
    void* reply = nullptr;
    if (redisReaderGetReply(reader_, &reply) != REDIS_OK) {
        // Our own reason (a bound) comes first: hiredis reports it as out of memory. The
        // rest is hiredis' own words, quoting at most one byte the node sent: no secret.
        fail("protocol error: " + printable_server_text(reader_->errstr, {}));
        return status::broken;
    }
    // What the reader holds unparsed belongs to the replies after the one it returned.
    const std::uint64_t consumed = fed_ - (reader_->len - reader_->pos);
    if (reply) {
        out.reset(static_cast<redisReply*>(reply));
        reply_start_ = consumed;
        elements_announced_ = 0;
        return status::reply;
    }
    crlf_fed_ = false;
    return within_bound() ? status::need_more : status::broken;
}

bool reply_reader::within_bound() {
    if (fed_ - reply_start_ > max_reply_size_) {
        fail("a reply of more than " + std::to_string(max_reply_size_) + " bytes");
        return false;
    }
    return true;
}

} // namespace redlock::detail
