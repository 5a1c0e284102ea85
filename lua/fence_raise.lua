-- The acquire of a fenced lock, phase 2: raise this node's fencing counters to the
-- candidate token t, but only while this node still holds our lock on every key and only
-- if every counter is lower than t (all or nothing). Counters never decrease; a later
-- holder's phase-1 majority meets this raise on at least one node and so reads at least t.
-- KEYS[1..n] lock keys, KEYS[n+1..2n] their fencing counters (counter i belongs to lock
-- key i), ARGV[1] token, ARGV[2] t (decimal).
-- Holding: the key is a string equal to the token, or a lock hash (readers, permits) whose
-- field token has a deadline after now on this node's clock.
-- Returns 1 when raised, 0 (nothing written) when a lock is not ours here or a counter is
-- already >= t. A plain lock is probed with GET: the least-privilege ACL user of
-- docs/security.md keeps raising its counters.
local token, t = ARGV[1], ARGV[2]
local n = #KEYS / 2
if n < 1 or n ~= math.floor(n) or not token then
    return redis.error_reply('ERR fence_raise.lua: KEYS = n lock keys then their n counters, ARGV = token, t')
end
if not t or not string.match(t, '^[1-9][0-9]*$') or #t > 20 then
    return redis.error_reply('ERR fence_raise.lua: t must be a positive decimal integer')
end

-- Decimal strings without leading zeros compare by length, then lexically: exact for any
-- 64-bit value, where Lua's doubles are not.
local function below(a, b)
    return #a < #b or (#a == #b and a < b)
end

local function holds(key)
    local value = redis.pcall('GET', key)
    if type(value) ~= 'table' then
        return value == token
    end
    local mode = redis.pcall('HGET', key, 'mode')
    if mode ~= 'shared' and not (type(mode) == 'string' and string.match(mode, '^[1-9][0-9]*$')
        and #mode <= 7 and tonumber(mode) <= 1000000) then
        return false
    end
    local d = redis.call('HGET', key, token)
    if not (d and #d <= 15 and string.match(d, '^[0-9]+$')) then
        return false
    end
    local now = redis.call('TIME')
    return tonumber(d) > tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
end

for i = 1, n do
    if not holds(KEYS[i]) then
        return 0
    end
    local current = redis.pcall('GET', KEYS[n + i])
    if type(current) == 'table' then
        if string.find(current.err, '^WRONGTYPE') then
            return redis.error_reply('WRONGTYPE fencing counter ' .. KEYS[n + i] .. ' is not a string')
        end
        return current
    end
    if not below(current or '0', t) then
        return 0
    end
end
for i = n + 1, 2 * n do
    redis.call('SET', KEYS[i], t)
end
return 1
