-- Raises this node's TTL ceiling (docs/safety.md, "The TTL ceiling"): sent by a client on the
-- same connection right before a command that sets a lock's TTL there, when the client has
-- no confirmation yet that the ceiling covers that ttl. After a restart of another node the
-- clients read the ceiling (ttl_ceiling_read.lua) to learn how long that node's locks may
-- still stand.
-- KEYS[1] the ceiling key (<node_key_prefix>ttl-ceiling), a hash: field = a ttl in
-- milliseconds, value = the time on this node's clock (ms) until which that ttl matters.
-- ARGV[1] the ttl, ARGV[2] keep: how long from now the entry must last (a multiple of the
-- client's fleet_max_ttl, so that every key the client sets under this raise expires first).
-- Returns 1. The entry's time only grows; entries whose time passed are removed; the key
-- expires with its latest entry. Values that are no time are left for the reader to report.
if #KEYS ~= 1 then
    return redis.error_reply('ERR ttl_ceiling_raise.lua: KEYS = ceiling key, ARGV = ttl, keep')
end
local key, ttl, keep = KEYS[1], ARGV[1], ARGV[2]
local function positive(text)
    return type(text) == 'string' and #text <= 15 and string.match(text, '^[1-9][0-9]*$')
end
if not positive(ttl) or not positive(keep) then
    return redis.error_reply('ERR ttl_ceiling_raise.lua: ttl and keep must be positive integers of milliseconds below 10^15')
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local until_ms = now + tonumber(keep)

local function time_of(value)
    if type(value) == 'string' and #value <= 15 and string.match(value, '^[0-9]+$') then
        return tonumber(value)
    end
    return nil
end

local flat = redis.call('HGETALL', key)
local passed, latest, current = {}, until_ms, nil
for i = 1, #flat, 2 do
    local at = time_of(flat[i + 1])
    if at and at <= now then
        table.insert(passed, flat[i])
    elseif at then
        if flat[i] == ttl then
            current = at
        end
        if at > latest then
            latest = at
        end
    end
end
for _, field in ipairs(passed) do
    redis.call('HDEL', key, field)
end
if not current or current < until_ms then
    redis.call('HSET', key, ttl, string.format('%.0f', until_ms))
end
-- PEXPIRE rather than PEXPIREAT: one command fewer in the ACL (docs/security.md).
redis.call('PEXPIRE', key, string.format('%.0f', latest - now))
return 1
