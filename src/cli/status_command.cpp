// status: what every node holds for KEY, read directly with synchronous hiredis.
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"

#include <redlock/node_address.hpp>

#include <hiredis/hiredis.h>

#include <iomanip>
#include <iostream>
#include <memory>

namespace redlock::cli {

namespace {

struct context_deleter {
    void operator()(redisContext* c) const { redisFree(c); }
};
using context_ptr = std::unique_ptr<redisContext, context_deleter>;
struct reply_deleter {
    void operator()(redisReply* r) const { freeReplyObject(r); }
};
using reply_ptr = std::unique_ptr<redisReply, reply_deleter>;

reply_ptr command(redisContext* c, const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    std::vector<size_t> lengths;
    for (const auto& a : args) {
        argv.push_back(a.data());
        lengths.push_back(a.size());
    }
    return reply_ptr(static_cast<redisReply*>(
        redisCommandArgv(c, static_cast<int>(args.size()), argv.data(), lengths.data())));
}

/// Connects, logs in and selects; on failure returns null with the reason in `why`.
context_ptr connect(const node_address& a, std::chrono::milliseconds timeout, std::string& why) {
    const timeval tv{static_cast<time_t>(timeout.count() / 1000),
                     static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
    context_ptr c(a.kind == node_address::transport::unix_socket
                      ? redisConnectUnixWithTimeout(a.path.c_str(), tv)
                      : redisConnectWithTimeout(a.host.c_str(), a.port, tv));
    if (!c || c->err) {
        why = c ? c->errstr : "out of memory";
        return nullptr;
    }
    redisSetTimeout(c.get(), tv);
    std::vector<std::vector<std::string>> handshake;
    if (!a.password.empty()) {
        handshake.push_back(a.user.empty() ? std::vector<std::string>{"AUTH", a.password}
                                           : std::vector<std::string>{"AUTH", a.user, a.password});
    }
    if (a.db != 0) {
        handshake.push_back({"SELECT", std::to_string(a.db)});
    }
    for (const auto& step : handshake) {
        auto r = command(c.get(), step);
        if (!r || r->type == REDIS_REPLY_ERROR) {
            why = r ? std::string(r->str, r->len) : c->errstr;
            return nullptr;
        }
    }
    return c;
}

} // namespace

int status_command(const options& o) {
    if (o.positional.empty() || o.positional.size() > 2) {
        std::cerr << "redlock status: expected KEY [TOKEN] (see redlock --help)\n";
        return exit_usage;
    }
    const std::string& key = o.positional[0];
    const std::string token = o.positional.size() == 2 ? o.positional[1] : "";
    std::size_t reachable = 0, matching = 0;
    for (const auto& text : o.nodes) {
        node_address address;
        std::string why;
        if (parse_node_address(text, address, why)) {
            std::cerr << "redlock status: node \"" << text << "\": " << why << "\n";
            return exit_usage;
        }
        std::cout << std::left << std::setw(24) << address.display() << " ";
        auto c = connect(address, std::max(o.node_timeout, std::chrono::milliseconds(200)), why);
        if (!c) {
            std::cout << "unreachable (" << why << ")\n";
            continue;
        }
        auto value = command(c.get(), {"GET", key});
        auto pttl = command(c.get(), {"PTTL", key});
        if (!value || !pttl || value->type == REDIS_REPLY_ERROR) {
            std::cout << "error (" << (value ? std::string(value->str, value->len) : c->errstr)
                      << ")\n";
            continue;
        }
        ++reachable;
        if (value->type != REDIS_REPLY_STRING) {
            std::cout << "free\n";
            continue;
        }
        const std::string held(value->str, value->len);
        std::cout << "held  pttl " << pttl->integer << " ms  token " << held;
        if (!token.empty()) {
            const bool ours = held == token;
            matching += ours ? 1 : 0;
            std::cout << (ours ? "  (matches)" : "  (another token)");
        }
        std::cout << "\n";
    }
    const std::size_t quorum = o.nodes.size() / 2 + 1;
    if (reachable < quorum) {
        return exit_unreachable;
    }
    if (!token.empty()) {
        return matching >= quorum ? exit_ok : exit_lock_lost;
    }
    return exit_ok;
}

} // namespace redlock::cli
