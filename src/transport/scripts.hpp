#ifndef REDLOCK_SRC_SCRIPTS_HPP
#define REDLOCK_SRC_SCRIPTS_HPP

#include <array>
#include <string_view>

namespace redlock::detail {

/// A Lua script from lua/, embedded at build time with the SHA1 that EVALSHA needs.
struct script {
    std::string_view text;
    std::string_view sha1;
};

extern const script release_script;           ///< lua/release.lua: compare-and-delete, publish
extern const script extend_script;            ///< lua/extend.lua: compare-and-pexpire, any kind
extern const script fence_raise_script;       ///< lua/fence_raise.lua: raise counters while held
extern const script fenced_call_script;       ///< lua/fenced_call.lua: the reference resource
extern const script acquire_script;           ///< lua/acquire.lua: exclusive, keys all or none
extern const script holders_acquire_script;   ///< lua/holders_acquire.lua: reader or permit
extern const script writer_waiting_script;    ///< lua/writer_waiting.lua: pending-writer mark
extern const script force_release_script;     ///< lua/force_release.lua: operators' unlock
extern const script ttl_ceiling_raise_script; ///< lua/ttl_ceiling_raise.lua: the node's TTL ceiling
extern const script ttl_ceiling_read_script;  ///< lua/ttl_ceiling_read.lua: read it
extern const script clock_mark_script;        ///< lua/clock_mark.lua: a node clock remembered

/// What every connection loads into the node's script cache before its first lock command
/// (and before its first clock mark); force_release runs as EVAL, an operator's one-off.
inline constexpr std::array<const script*, 7> preloaded_scripts{
    &release_script,     &extend_script,         &acquire_script,   &holders_acquire_script,
    &fence_raise_script, &writer_waiting_script, &clock_mark_script};

} // namespace redlock::detail

#endif
