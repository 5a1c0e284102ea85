#include "sim_lua.hpp"

extern "C" {
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
}

#include <openssl/evp.h>

#include <climits>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace redlock::sim {

namespace {

/// Redis' __redis__err__handler (eval.c): an error becomes a table {err=...} with the
/// source and line of the script's statement (the caller's, when a C function raised it).
constexpr char error_handler_code[] = R"lua(
local dbg = debug
return function(err)
  local i = dbg.getinfo(2, 'nSl')
  if i and i.what == 'C' then
    i = dbg.getinfo(3, 'nSl')
  end
  if type(err) ~= 'table' then
    err = {err = 'ERR ' .. tostring(err)}
  end
  if i then
    err['source'] = i.source
    err['line'] = i.currentline
  end
  return err
end
)lua";

/// luaPushErrorBuff: "-CODE msg" keeps its code, anything else gets ERR; the table {err=...}.
void push_error(lua_State* lua, std::string_view text) {
    std::string code = "ERR";
    std::string msg;
    if (!text.empty() && text[0] == '-') {
        const auto space = text.find(' ');
        if (space == std::string_view::npos) {
            msg = text.substr(1);
        } else {
            code = text.substr(1, space - 1);
            msg = text.substr(space + 1);
        }
    } else {
        msg = text;
    }
    const auto first = msg.find_first_not_of("\r\n");
    const auto last = msg.find_last_not_of("\r\n");
    msg = first == std::string::npos ? std::string() : msg.substr(first, last - first + 1);
    const auto final_msg = code + " " + msg;
    lua_newtable(lua);
    lua_pushstring(lua, "err");
    lua_pushlstring(lua, final_msg.data(), final_msg.size());
    lua_settable(lua, -3);
}

/// A Redis reply as Lua sees it (redisProtocolToLuaType): integer -> number, bulk ->
/// string, nil -> false, status -> {ok=...}, error -> {err=...}, array -> table.
void push_reply(lua_State* lua, const sim_reply& r) {
    lua_checkstack(lua, 4);
    switch (r.kind) {
    case sim_reply::type::integer:
        lua_pushnumber(lua, static_cast<lua_Number>(r.integer));
        break;
    case sim_reply::type::bulk:
        lua_pushlstring(lua, r.text.data(), r.text.size());
        break;
    case sim_reply::type::nil:
        lua_pushboolean(lua, 0);
        break;
    case sim_reply::type::status:
        lua_newtable(lua);
        lua_pushstring(lua, "ok");
        lua_pushlstring(lua, r.text.data(), r.text.size());
        lua_settable(lua, -3);
        break;
    case sim_reply::type::error:
        push_error(lua, "-" + r.text);
        break;
    case sim_reply::type::array:
        lua_createtable(lua, static_cast<int>(r.elements.size()), 0);
        for (std::size_t j = 0; j < r.elements.size(); ++j) {
            push_reply(lua, r.elements[j]);
            lua_rawseti(lua, -2, static_cast<int>(j + 1));
        }
        break;
    }
}

/// (long long) of a double as x86 does it: out of range and NaN give LLONG_MIN (what
/// Redis' cast yields on the machines it runs on, without the undefined behaviour).
long long truncate(lua_Number v) {
    if (std::isnan(v) || v >= 9223372036854775808.0 || v < -9223372036854775808.0) {
        return LLONG_MIN;
    }
    return static_cast<long long>(v);
}

std::string newlines_to_spaces(std::string s) {
    for (auto& c : s) {
        if (c == '\r' || c == '\n') {
            c = ' ';
        }
    }
    return s;
}

/// The value on top of the stack as Redis replies it (luaReplyToRedisReply, RESP2), popped:
/// number -> integer (truncated), true -> 1, false and nil -> nil, {err=s} -> error,
/// {ok=s} -> status, any other table -> an array of its 1..n up to the first nil.
sim_reply pop_reply(lua_State* lua) {
    lua_checkstack(lua, 4);
    sim_reply out;
    switch (lua_type(lua, -1)) {
    case LUA_TSTRING: {
        std::size_t n = 0;
        const char* s = lua_tolstring(lua, -1, &n);
        out = sim_reply::bulk(std::string(s, n));
        break;
    }
    case LUA_TBOOLEAN:
        out = lua_toboolean(lua, -1) ? sim_reply::number(1) : sim_reply::nil();
        break;
    case LUA_TNUMBER:
        out = sim_reply::number(truncate(lua_tonumber(lua, -1)));
        break;
    case LUA_TTABLE: {
        lua_pushstring(lua, "err");
        lua_rawget(lua, -2);
        if (lua_type(lua, -1) == LUA_TSTRING) {
            out = sim_reply::error(newlines_to_spaces(lua_tostring(lua, -1)));
            lua_pop(lua, 2);
            return out;
        }
        lua_pop(lua, 1);
        lua_pushstring(lua, "ok");
        lua_rawget(lua, -2);
        if (lua_type(lua, -1) == LUA_TSTRING) {
            out = sim_reply::status(newlines_to_spaces(lua_tostring(lua, -1)));
            lua_pop(lua, 2);
            return out;
        }
        lua_pop(lua, 1);
        out = sim_reply::array({});
        for (int j = 1;; ++j) {
            lua_rawgeti(lua, -1, j);
            if (lua_isnil(lua, -1)) {
                lua_pop(lua, 1);
                break;
            }
            out.elements.push_back(pop_reply(lua));
        }
        break;
    }
    default:
        break;
    }
    lua_pop(lua, 1);
    return out;
}

int error_reply(lua_State* lua) {
    if (lua_gettop(lua) != 1 || lua_type(lua, -1) != LUA_TSTRING) {
        push_error(lua, "wrong number or type of arguments");
        return 1;
    }
    std::string text = lua_tostring(lua, -1);
    push_error(lua, text.starts_with('-') ? text : "-" + text);
    return 1;
}

int status_reply(lua_State* lua) {
    if (lua_gettop(lua) != 1 || lua_type(lua, -1) != LUA_TSTRING) {
        push_error(lua, "wrong number or type of arguments");
        return 1;
    }
    lua_newtable(lua);
    lua_pushstring(lua, "ok");
    lua_pushvalue(lua, -3);
    lua_settable(lua, -3);
    return 1;
}

/// Redis 7's pcall: an error table raised inside becomes its message.
int redis_lua_pcall(lua_State* lua) {
    const int argc = lua_gettop(lua);
    lua_pushboolean(lua, 1);
    lua_insert(lua, 1);
    if (lua_pcall(lua, argc - 1, LUA_MULTRET, 0)) {
        lua_remove(lua, 1);
        if (lua_istable(lua, -1)) {
            lua_getfield(lua, -1, "err");
            if (lua_isstring(lua, -1)) {
                lua_replace(lua, -2);
            } else {
                lua_pop(lua, 1);
            }
        }
        lua_pushboolean(lua, 0);
        lua_insert(lua, 1);
    }
    return lua_gettop(lua);
}

int readonly_globals(lua_State* lua) {
    return luaL_error(lua, "Attempt to modify a readonly table");
}

int nonexistent_global(lua_State* lua) {
    return luaL_error(lua, "Script attempted to access nonexistent global variable '%s'",
                      lua_tostring(lua, 2));
}

} // namespace

std::string sha1_hex(std::string_view text) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    if (!EVP_Digest(text.data(), text.size(), digest, &size, EVP_sha1(), nullptr)) {
        throw std::runtime_error("SHA1 failed");
    }
    std::string out;
    char hex[3];
    for (unsigned int i = 0; i < size; ++i) {
        std::snprintf(hex, sizeof hex, "%02x", digest[i]);
        out += hex;
    }
    return out;
}

lua_scripts& lua_scripts::shared() {
    static lua_scripts engine;
    return engine;
}

lua_scripts::lua_scripts()
    : lua_(luaL_newstate()) {
    if (!lua_) {
        throw std::runtime_error("cannot create a Lua state");
    }
    // The libraries Redis opens that the scripts can use (cjson, cmsgpack, struct and bit
    // are Redis' additions, left out), without what Redis takes away.
    const std::pair<const char*, lua_CFunction> libraries[] = {{"", luaopen_base},
                                                               {LUA_TABLIBNAME, luaopen_table},
                                                               {LUA_STRLIBNAME, luaopen_string},
                                                               {LUA_MATHLIBNAME, luaopen_math},
                                                               {LUA_DBLIBNAME, luaopen_debug}};
    for (const auto& [name, open] : libraries) {
        lua_pushcfunction(lua_, open);
        lua_pushstring(lua_, name);
        lua_call(lua_, 1, 0);
    }
    if (luaL_loadbuffer(lua_, error_handler_code, sizeof error_handler_code - 1,
                        "@error_handler") ||
        lua_pcall(lua_, 0, 1, 0)) {
        throw std::runtime_error(std::string("error handler: ") + lua_tostring(lua_, -1));
    }
    error_handler_ = luaL_ref(lua_, LUA_REGISTRYINDEX);
    for (const char* removed : {"debug", "print", "dofile", "loadfile"}) {
        lua_pushnil(lua_);
        lua_setglobal(lua_, removed);
    }
    // math.random is Redis' own generator there (a fixed sequence per script); no script of
    // lua/ draws random numbers, so a script that would gets an error rather than numbers
    // Redis would not give.
    lua_getglobal(lua_, "math");
    for (const char* removed : {"random", "randomseed"}) {
        lua_pushnil(lua_);
        lua_setfield(lua_, -2, removed);
    }
    lua_pop(lua_, 1);

    lua_pushcfunction(lua_, redis_lua_pcall);
    lua_setglobal(lua_, "pcall");
    lua_newtable(lua_);
    lua_pushlightuserdata(lua_, this);
    lua_pushcclosure(lua_, redis_call, 1);
    lua_setfield(lua_, -2, "call");
    lua_pushlightuserdata(lua_, this);
    lua_pushcclosure(lua_, redis_pcall, 1);
    lua_setfield(lua_, -2, "pcall");
    lua_pushcfunction(lua_, error_reply);
    lua_setfield(lua_, -2, "error_reply");
    lua_pushcfunction(lua_, status_reply);
    lua_setfield(lua_, -2, "status_reply");
    lua_setglobal(lua_, "redis");

    // Globals are read-only, and reading one that does not exist is an error (Redis 7).
    lua_newtable(lua_);
    lua_pushcfunction(lua_, readonly_globals);
    lua_setfield(lua_, -2, "__newindex");
    lua_pushcfunction(lua_, nonexistent_global);
    lua_setfield(lua_, -2, "__index");
    lua_setmetatable(lua_, LUA_GLOBALSINDEX);
}

lua_scripts::~lua_scripts() {
    lua_close(lua_);
}

sim_reply lua_scripts::load(const std::string& sha, std::string_view text) {
    if (functions_.count(sha)) {
        return sim_reply::nil();
    }
    if (luaL_loadbuffer(lua_, text.data(), text.size(), "@user_script")) {
        std::string why = lua_tostring(lua_, -1);
        lua_pop(lua_, 1);
        return sim_reply::error("ERR Error compiling script (new function): " +
                                newlines_to_spaces(why));
    }
    functions_.emplace(sha, luaL_ref(lua_, LUA_REGISTRYINDEX));
    return sim_reply::nil();
}

sim_reply lua_scripts::run(const std::string& sha, std::span<const std::string> keys,
                           std::span<const std::string> argv, script_host& host) {
    const auto function = functions_.find(sha);
    if (function == functions_.end()) {
        return sim_reply::error("NOSCRIPT No matching script. Please use EVAL.");
    }
    for (const auto& [name, values] : {std::pair{"KEYS", keys}, std::pair{"ARGV", argv}}) {
        lua_pushstring(lua_, name);
        lua_createtable(lua_, static_cast<int>(values.size()), 0);
        for (std::size_t j = 0; j < values.size(); ++j) {
            lua_pushlstring(lua_, values[j].data(), values[j].size());
            lua_rawseti(lua_, -2, static_cast<int>(j + 1));
        }
        lua_rawset(lua_, LUA_GLOBALSINDEX);
    }
    lua_rawgeti(lua_, LUA_REGISTRYINDEX, error_handler_);
    lua_rawgeti(lua_, LUA_REGISTRYINDEX, function->second);
    host_ = &host;
    const int failed = lua_pcall(lua_, 0, 1, -2);
    host_ = nullptr;
    sim_reply out;
    if (!failed) {
        out = pop_reply(lua_);
    } else {
        // luaCallFunction: the error table's err, then where it happened.
        std::string text = "ERR execution failure";
        if (lua_istable(lua_, -1)) {
            lua_getfield(lua_, -1, "err");
            if (lua_isstring(lua_, -1)) {
                text = lua_tostring(lua_, -1);
            }
            lua_getfield(lua_, -2, "source");
            lua_getfield(lua_, -3, "line");
            if (lua_isstring(lua_, -1) && lua_isstring(lua_, -2)) {
                text += " script: " + sha + ", on " + lua_tostring(lua_, -2) + ":" +
                        lua_tostring(lua_, -1) + ".";
            }
            lua_pop(lua_, 3);
        }
        lua_pop(lua_, 1);
        out = sim_reply::error(std::move(text));
    }
    lua_pop(lua_, 1); // the error handler
    return out;
}

int lua_scripts::redis_call(lua_State* lua) {
    auto* self = static_cast<lua_scripts*>(lua_touserdata(lua, lua_upvalueindex(1)));
    // lua_error longjmps: it is called here, where no C++ object is alive.
    if (self->command(lua, true)) {
        return lua_error(lua);
    }
    return 1;
}

int lua_scripts::redis_pcall(lua_State* lua) {
    auto* self = static_cast<lua_scripts*>(lua_touserdata(lua, lua_upvalueindex(1)));
    self->command(lua, false);
    return 1;
}

/// luaRedisGenericCommand: the arguments (numbers as "%.17g"), the command on the host,
/// its reply converted; leaves one value on the stack and says whether to raise it.
int lua_scripts::command(lua_State* lua, bool raise) {
    const int argc = lua_gettop(lua);
    if (argc == 0) {
        push_error(lua, "Please specify at least one argument for this redis lib call");
        return raise;
    }
    // args_ keeps its strings' buffers from call to call: a script's redis.call made a
    // vector and a string per argument each time. No command a script may call runs a
    // script, so nothing reenters here while the host holds args_.
    auto& args = args_;
    args.resize(static_cast<std::size_t>(argc));
    int converted = 0;
    for (int j = 1; j <= argc; ++j, ++converted) {
        auto& arg = args[static_cast<std::size_t>(j - 1)];
        if (lua_type(lua, j) == LUA_TNUMBER) {
            char buf[64];
            const int n = std::snprintf(buf, sizeof buf, "%.17g", lua_tonumber(lua, j));
            arg.assign(buf, static_cast<std::size_t>(n));
            continue;
        }
        std::size_t n = 0;
        const char* s = lua_tolstring(lua, j, &n);
        if (!s) {
            break;
        }
        arg.assign(s, n);
    }
    lua_pop(lua, argc);
    if (converted != argc) {
        push_error(lua, "Lua redis lib command arguments must be strings or integers");
        return raise;
    }
    if (!host_) {
        push_error(lua, "redis.call/pcall can only be called inside a script invocation");
        return raise;
    }
    const auto reply = host_->script_command(args);
    push_reply(lua, reply);
    return raise && reply.is_error();
}

} // namespace redlock::sim
