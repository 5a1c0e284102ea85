#ifndef REDLOCK_SRC_SCRIPTS_HPP
#define REDLOCK_SRC_SCRIPTS_HPP

#include <string_view>

namespace redlock::detail {

/// A Lua script from lua/, embedded at build time with the SHA1 that EVALSHA needs.
struct script {
    std::string_view text;
    std::string_view sha1;
};

extern const script release_script;       ///< lua/release.lua: compare-and-delete
extern const script extend_script;        ///< lua/extend.lua: compare-and-pexpire
extern const script fence_acquire_script; ///< lua/fence_acquire.lua: SET NX PX + counter
extern const script fence_raise_script;   ///< lua/fence_raise.lua: raise counter while held
extern const script fenced_call_script;   ///< lua/fenced_call.lua: the reference resource

} // namespace redlock::detail

#endif
