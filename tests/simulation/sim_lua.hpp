#ifndef REDLOCK_TESTS_SIMULATION_SIM_LUA_HPP
#define REDLOCK_TESTS_SIMULATION_SIM_LUA_HPP

#include "sim_reply.hpp"

#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

struct lua_State;

namespace redlock::sim {

/// What a script's redis.call and redis.pcall reach: the node that runs the script, which
/// runs one command on its keyspace and clock (or refuses it as Redis refuses it inside a
/// script: unknown, wrong arity, not allowed).
class script_host {
public:
    virtual sim_reply script_command(const std::vector<std::string>& args) = 0;

protected:
    ~script_host() = default;
};

/// Lua 5.1 as Redis 7.0 embeds it, for the simulated nodes: the scripts of lua/ run as they
/// are, byte for byte the text the library sends. What Redis adds is rebuilt here: the
/// `redis` table (call, pcall, error_reply, status_reply), KEYS and ARGV as globals, the
/// read-only globals, the error handler that appends " script: <sha>, on @user_script:<line>."
/// and the conversions between Redis replies and Lua values both ways. Not loaded: cjson,
/// cmsgpack, struct, bit and Redis' math.random (no script of lua/ uses them; a script that
/// does gets Lua's "nonexistent global" error, never a silently different answer).
///
/// One Lua state for the process, shared by every simulated node: a script compiles once
/// (a schedule creates nodes by the thousand), and scripts cannot keep state between calls
/// (globals are read-only), so sharing changes no answer. Each node keeps its own script
/// cache of SHA1s (NOSCRIPT) on top. Single-threaded, like the simulation.
class lua_scripts {
public:
    static lua_scripts& shared();

    lua_scripts(const lua_scripts&) = delete;
    lua_scripts& operator=(const lua_scripts&) = delete;

    /// Compiles `text` as the function of `sha` unless already done; an error reply as
    /// Redis gives for a script that does not compile, or nil-kind on success.
    sim_reply load(const std::string& sha, std::string_view text);
    /// Runs the compiled script `sha` (load() first) with KEYS and ARGV; redis.call goes to
    /// `host`. The script's reply as Redis would send it.
    sim_reply run(const std::string& sha, std::span<const std::string> keys,
                  std::span<const std::string> argv, script_host& host);

private:
    lua_scripts();
    ~lua_scripts();

    lua_State* lua_;
    int error_handler_ = 0;
    std::unordered_map<std::string, int> functions_; // sha -> registry reference
    script_host* host_ = nullptr;                    // while a script runs
    std::vector<std::string> args_;                  // of the redis.call being run

    static int redis_call(lua_State* lua);
    static int redis_pcall(lua_State* lua);
    int command(lua_State* lua, bool raise);
};

/// The SHA1 of a script's text in lower-case hex, the name EVALSHA knows it by.
std::string sha1_hex(std::string_view text);

} // namespace redlock::sim

#endif
