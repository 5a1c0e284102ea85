#include "support/script_node.hpp"

#include "support/topology.hpp"

#include <stdexcept>

namespace redlock::test {

std::string resp_value::show() const {
    switch (type) {
    case REDIS_REPLY_NIL:
        return "(nil)";
    case REDIS_REPLY_INTEGER:
        return "(integer) " + std::to_string(integer);
    case REDIS_REPLY_STATUS:
        return "+" + text;
    case REDIS_REPLY_ERROR:
        return "-" + text;
    case REDIS_REPLY_ARRAY: {
        std::string out = "[";
        for (std::size_t i = 0; i < elements.size(); ++i) {
            out += (i ? ", " : "") + elements[i].show();
        }
        return out + "]";
    }
    default:
        return "\"" + text + "\"";
    }
}

resp_value to_value(const redisReply* reply) {
    resp_value v;
    v.type = reply->type;
    switch (reply->type) {
    case REDIS_REPLY_INTEGER:
        v.integer = reply->integer;
        break;
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:
        v.text.assign(reply->str, reply->len);
        break;
    case REDIS_REPLY_ARRAY:
        for (std::size_t i = 0; i < reply->elements; ++i) {
            v.elements.push_back(to_value(reply->element[i]));
        }
        break;
    default:
        break;
    }
    return v;
}

script_node::script_node(int node)
    : node_(node) {
    timeval timeout{5, 0};
    context_ = redisConnectWithTimeout(topology::host(node).c_str(), topology::port(node), timeout);
    if (!context_ || context_->err) {
        const std::string why = context_ ? context_->errstr : "out of memory";
        redisFree(context_);
        throw std::runtime_error("cannot reach node " + std::to_string(node) + ": " + why);
    }
    redisSetTimeout(context_, timeout);
}

script_node::~script_node() {
    redisFree(context_);
}

resp_value script_node::call(const std::vector<std::string>& args) {
    auto* reply = command_reply(context_, args);
    if (!reply) {
        throw std::runtime_error("node " + std::to_string(node_) +
                                 " lost the connection: " + context_->errstr);
    }
    auto v = to_value(reply);
    freeReplyObject(reply);
    return v;
}

std::vector<resp_value>
script_node::pipeline(const std::vector<std::vector<std::string>>& commands) {
    for (const auto& args : commands) {
        std::vector<const char*> argv;
        std::vector<std::size_t> lengths;
        for (const auto& a : args) {
            argv.push_back(a.data());
            lengths.push_back(a.size());
        }
        redisAppendCommandArgv(context_, static_cast<int>(args.size()), argv.data(),
                               lengths.data());
    }
    std::vector<resp_value> out;
    for (std::size_t i = 0; i < commands.size(); ++i) {
        void* raw = nullptr;
        if (redisGetReply(context_, &raw) != REDIS_OK || !raw) {
            throw std::runtime_error("node " + std::to_string(node_) +
                                     " lost the connection: " + context_->errstr);
        }
        out.push_back(to_value(static_cast<redisReply*>(raw)));
        freeReplyObject(raw);
    }
    return out;
}

resp_value script_node::eval(const detail::script& s, const std::vector<std::string>& keys,
                             const std::vector<std::string>& argv) {
    std::vector<std::string> args{"EVAL", std::string(s.text), std::to_string(keys.size())};
    args.insert(args.end(), keys.begin(), keys.end());
    args.insert(args.end(), argv.begin(), argv.end());
    return call(args);
}

void script_node::subscribe(const std::string& channel) {
    const auto confirmation = call({"SUBSCRIBE", channel});
    if (confirmation.type != REDIS_REPLY_ARRAY) {
        throw std::runtime_error("SUBSCRIBE " + channel + ": " + confirmation.show());
    }
}

void script_node::psubscribe(const std::string& pattern) {
    const auto confirmation = call({"PSUBSCRIBE", pattern});
    if (confirmation.type != REDIS_REPLY_ARRAY) {
        throw std::runtime_error("PSUBSCRIBE " + pattern + ": " + confirmation.show());
    }
}

std::vector<std::string> script_node::messages() {
    // A subscribed connection answers PING with ["pong", ""], queued behind every message
    // published before it arrived.
    redisAppendCommand(context_, "PING");
    std::vector<std::string> out;
    for (;;) {
        void* raw = nullptr;
        if (redisGetReply(context_, &raw) != REDIS_OK || !raw) {
            throw std::runtime_error("node " + std::to_string(node_) +
                                     " lost the subscriber: " + context_->errstr);
        }
        const auto v = to_value(static_cast<redisReply*>(raw));
        freeReplyObject(raw);
        if (v.elements.size() == 3 && v.elements[0].text == "message") {
            out.push_back(v.elements[1].text + " " + v.elements[2].text);
        } else if (v.elements.size() == 4 && v.elements[0].text == "pmessage") {
            out.push_back(v.elements[2].text + " " + v.elements[3].text);
        } else if (!v.elements.empty() && v.elements[0].text == "pong") {
            return out;
        }
    }
}

} // namespace redlock::test
