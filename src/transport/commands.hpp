#ifndef REDLOCK_SRC_COMMANDS_HPP
#define REDLOCK_SRC_COMMANDS_HPP

#include "transport/node_reply.hpp"
#include "transport/scripts.hpp"

#include "redlock/vote.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace redlock::detail {

/// The argument vector of one Redis command; views into strings the caller keeps alive
/// until the command is handed to the connection (hiredis copies it then).
struct command {
    std::array<std::string_view, 10> args{};
    std::size_t count = 0;
};

/// SET key token NX PX ttl. `ttl_text` holds the decimal ttl in milliseconds.
command set_nx_px(std::string_view key, std::string_view token, std::string_view ttl_text);

/// EVALSHA (or EVAL when `as_eval`) of `s` with KEYS[1] = key and
/// ARGV = token[, first[, second]] (empty extras are left out).
command script_call(const script& s, bool as_eval, std::string_view key, std::string_view token,
                    std::string_view first = {}, std::string_view second = {});

/// EVALSHA (or EVAL) of a fencing script: KEYS = key, counter_key; ARGV = token, value
/// (the ttl for fence_acquire, the candidate token for fence_raise).
command fence_script_call(const script& s, bool as_eval, std::string_view key,
                          std::string_view counter_key, std::string_view token,
                          std::string_view value);

/// How a node answered, as a vote; `noscript` asks for the EVAL fallback.
struct classified {
    node_outcome outcome = node_outcome::failed;
    std::error_code error;
    bool noscript = false;
    /// fence_acquire grants only: the node's fencing counter.
    std::uint64_t counter = 0;
};

classified classify_set_reply(const node_reply& reply);
classified classify_script_reply(const node_reply& reply);
/// fence_acquire: the counter as a decimal string when granted, nil when held by another.
classified classify_fence_acquire_reply(const node_reply& reply);

} // namespace redlock::detail

#endif
