#ifndef REDLOCK_FENCING_HPP
#define REDLOCK_FENCING_HPP

#include <redlock/export.hpp>

#include <string>
#include <string_view>

namespace redlock {

/// The key that holds a node's fencing counter for `lock_key`: `lock_key + ":fence"` when
/// the lock key already has a hash tag, `"{" + lock_key + "}:fence"` when it has no braces
/// at all, so that both keys share a hash slot; `lock_key + ":fence"` otherwise. The
/// library never deletes it and sets no TTL on it: the counter must outlive every lock.
REDLOCK_API std::string fencing_counter_key(std::string_view lock_key);

/// The reference fenced resource, lua/fenced_call.lua, for the Redis that holds the data
/// the lock protects (which need not be one of the lock's nodes):
///
///     EVALSHA <sha1> <1 + n> <fence key> <key>... <fencing token> <command> <args>...
///
/// runs `command` only if the token is at least the highest the fence key has seen, and
/// records it; otherwise it replies the error "FENCED <token> < <highest>". Send reads
/// through it too: a newer holder's read then fences off an older holder's late write.
/// Fall back to EVAL with the text on NOSCRIPT.
struct fenced_call_script {
    std::string_view text; ///< The Lua source, for EVAL and SCRIPT LOAD.
    std::string_view sha1; ///< Its SHA1 digest in hex, for EVALSHA.
};
/// The script of lua/fenced_call.lua, embedded in the library.
REDLOCK_API fenced_call_script fenced_call() noexcept;

} // namespace redlock

#endif
