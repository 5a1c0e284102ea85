#ifndef REDLOCK_SRC_COMMANDS_HPP
#define REDLOCK_SRC_COMMANDS_HPP

#include "transport/node_reply.hpp"
#include "transport/scripts.hpp"

#include "redlock/config.hpp"
#include "redlock/vote.hpp"

#include <boost/container/small_vector.hpp>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

namespace redlock::detail {

/// The argument vector of one Redis command; views into strings the caller keeps alive
/// until the command is handed to the connection (which formats it then).
struct command {
    boost::container::small_vector<std::string_view, 10> args;
    /// The ttl the command may set on a lock key (acquire, extend, renewal), else zero: the
    /// node's TTL ceiling must cover it before the command's vote counts (ceiling_link).
    std::chrono::milliseconds sets_ttl{0};
};

/// EVAL of lua/ttl_ceiling_raise.lua: raise `ceiling_key` to cover `ttl_text` for `keep_text`
/// milliseconds (decimal). EVAL, not EVALSHA: raises are rare, and a NOSCRIPT would refuse
/// the vote behind it.
command ceiling_raise_call(std::string_view ceiling_key, std::string_view ttl_text,
                           std::string_view keep_text);

/// The RESP form of a command, the bytes that go on the wire (formatted by hiredis).
std::string wire_bytes(const std::string_view* args, std::size_t count);
std::string wire_bytes(const command& cmd);

/// SET key token NX PX ttl. `ttl_text` holds the decimal ttl in milliseconds.
command set_nx_px(std::string_view key, std::string_view token, std::string_view ttl_text);

/// The KEYS of a script call: the lock keys, then (for the fencing scripts) their counters.
struct script_keys {
    std::span<const std::string> locks;
    std::span<const std::string> counters = {};
};

/// EVALSHA (or EVAL when `as_eval`) of `s` with those KEYS and ARGV = `argv`.
command script_call(const script& s, bool as_eval, script_keys keys,
                    std::initializer_list<std::string_view> argv);

/// What extend.lua and holders_acquire.lua are told the lock is: "" for an exclusive lock,
/// "shared", or a semaphore's permit count in decimal.
std::string kind_argument(const lock_options& options);

/// What release.lua publishes for one release: 16 hex digits of `random`, unique among the
/// releases of every client of a key for as long as their announcements are in flight.
std::string announcement_text(std::uint64_t random);

/// `n` in decimal, for numkeys and small counts: a view of a string that lives forever.
std::string_view small_decimal(std::size_t n);

/// How a node answered, as a vote; `noscript` asks for the EVAL fallback.
struct classified {
    node_outcome outcome = node_outcome::failed;
    std::error_code error;
    bool noscript = false;
    /// Grants of a fenced acquire only: the node's fencing counter.
    std::uint64_t counter = 0;
};

classified classify_set_reply(const node_reply& reply);
/// PTTL of a key that refused SET NX: the refusal stands ("held by another") unless the key
/// never expires (-1), which no lock of any Redlock client does: that key is a value that is
/// no lock, errc::lock_mismatch, and waiting for it would never end. Any other answer (the
/// key gone meanwhile, an error such as NOPERM from a user without +pttl) keeps the refusal.
classified classify_refusal_ttl(const node_reply& reply);
classified classify_script_reply(const node_reply& reply);
/// acquire.lua, holders_acquire.lua: nil when held by another; a grant is
/// integer 1, or the node's fencing counter as a canonical decimal string. An error reply
/// `REDLOCK_MISMATCH ...` (the key holds another kind of lock, or a string without expiry)
/// is errc::lock_mismatch.
classified classify_acquire_script_reply(const node_reply& reply);

} // namespace redlock::detail

#endif
