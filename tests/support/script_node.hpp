#ifndef REDLOCK_TESTS_SUPPORT_SCRIPT_NODE_HPP
#define REDLOCK_TESTS_SUPPORT_SCRIPT_NODE_HPP

#include "transport/scripts.hpp"

#include <hiredis/hiredis.h>

#include <string>
#include <vector>

namespace redlock::test {

/// A whole reply, arrays included, as plain data: what the script tests compare.
struct resp_value {
    int type = REDIS_REPLY_NIL; ///< REDIS_REPLY_*
    std::string text;           ///< string, status or error
    long long integer = 0;
    std::vector<resp_value> elements;

    bool is_error() const { return type == REDIS_REPLY_ERROR; }
    bool is_nil() const { return type == REDIS_REPLY_NIL; }
    bool is_integer(long long v) const { return type == REDIS_REPLY_INTEGER && integer == v; }
    bool is_string(const std::string& s) const { return type == REDIS_REPLY_STRING && text == s; }
    /// One line, for failure messages and for comparing two servers' replies.
    std::string show() const;
};

resp_value to_value(const redisReply* reply);

/// A synchronous connection to one of the local nodes that runs commands and the library's
/// scripts with whole replies, and can listen on channels (then only for messages).
class script_node {
public:
    explicit script_node(int node);
    ~script_node();
    script_node(const script_node&) = delete;
    script_node& operator=(const script_node&) = delete;

    resp_value call(const std::vector<std::string>& args);
    /// The commands sent at once, their replies in order: one round trip.
    std::vector<resp_value> pipeline(const std::vector<std::vector<std::string>>& commands);
    /// EVAL of `s` (not EVALSHA: every test sees the text as embedded).
    resp_value eval(const detail::script& s, const std::vector<std::string>& keys,
                    const std::vector<std::string>& argv);

    void subscribe(const std::string& channel);
    void psubscribe(const std::string& pattern);
    /// The payloads of the messages that arrived on the subscribed channels so far, in order,
    /// as "channel payload": a PING round trip marks the end, so nothing is waited for.
    std::vector<std::string> messages();

private:
    redisContext* context_ = nullptr;
    int node_;
};

} // namespace redlock::test

#endif
