#ifndef REDLOCK_SRC_TRANSPORT_REPLY_READER_HPP
#define REDLOCK_SRC_TRANSPORT_REPLY_READER_HPP

#include <hiredis/hiredis.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace redlock::detail {

/// A reply parsed by hiredis, freed with it.
struct reply_deleter {
    void operator()(redisReply* reply) const noexcept { freeReplyObject(reply); }
};
using reply_ptr = std::unique_ptr<redisReply, reply_deleter>;

/// hiredis' RESP reader with a bound on what one reply may occupy. Whatever bytes a node
/// sends, this either yields replies or reports the stream broken; it never asserts, aborts,
/// holds more than about twice `max_reply_size` (plus one fed chunk) for a reply, or spends
/// more than linear time on it:
/// - a reply whose bytes (an error text, a bulk string, an array with everything in it)
///   pass the bound breaks the stream as soon as they do, before they are complete, so a
///   bulk announced at 4 GB and streamed slowly costs at most the bound;
/// - every element the arrays of a reply announce is charged element_cost bytes (what
///   hiredis allocates for it), so `*2147483647` allocates nothing and a million tiny
///   elements cannot cost thirty times their size on the wire;
/// - nesting deeper than hiredis' seven levels and malformed input are protocol errors;
/// - hiredis is only asked to parse once a CRLF has arrived (nothing can complete before),
///   so a line trickled in byte by byte is not rescanned for every byte.
/// Sans-io: bytes in, replies out.
class reply_reader {
public:
    /// What hiredis allocates per element at least: a redisReply and its slot in the parent.
    static constexpr std::size_t element_cost = 64;

    explicit reply_reader(std::size_t max_reply_size);
    ~reply_reader();
    reply_reader(const reply_reader&) = delete;
    reply_reader& operator=(const reply_reader&) = delete;

    enum class status { reply, need_more, broken };

    /// Appends what the node sent. Call next() until it stops yielding replies before
    /// feeding again.
    void feed(std::string_view bytes);
    /// The next complete reply (status::reply), nothing yet (need_more), or the stream is
    /// unusable from here on (broken, with why() set): the connection must be dropped.
    status next(reply_ptr& out);
    /// Why the stream broke, as printable text.
    const std::string& why() const noexcept { return why_; }

private:
    static void* create_string(const redisReadTask* task, char* text, std::size_t length);
    static void* create_array(const redisReadTask* task, int elements);
    void fail(std::string why);
    /// False, with the stream broken, once the reply being read has passed the bound.
    bool within_bound();

    redisReader* reader_;
    redisReplyObjectFunctions functions_{};
    const redisReplyObjectFunctions* hiredis_functions_;
    std::size_t max_reply_size_;
    // Offsets in the whole stream: bytes fed so far, and where the reply being read began.
    std::uint64_t fed_ = 0;
    std::uint64_t reply_start_ = 0;
    // Elements announced by the arrays of the reply being read.
    std::uint64_t elements_announced_ = 0;
    // A CRLF was fed since hiredis last found nothing to complete; `last_fed_cr_` carries a
    // '\r' that ended the previous chunk.
    bool crlf_fed_ = false;
    bool last_fed_cr_ = false;
    std::string why_;
};

} // namespace redlock::detail

#endif
