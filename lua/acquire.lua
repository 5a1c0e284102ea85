-- The acquire of an exclusive lock over several keys, or fenced, in one step per node: all
-- or nothing, so that a node grants only when it could take every key.
-- KEYS[1..n] lock keys, then for a fenced lock their fencing counters KEYS[n+1..2n]
-- (counter i belongs to lock key i; no TTL, never deleted by the library);
-- ARGV[1] token, ARGV[2] ttl in milliseconds, ARGV[3] n.
-- Returns nil when any lock key exists (of any type: readers and permit holders exclude a
-- writer too), or an error `REDLOCK_MISMATCH ...` when one is a string without expiry. Otherwise sets every key to the token with the ttl and returns integer 1,
-- or, fenced, the largest of the counters as a decimal string ("0" where none exists yet).
-- The counters are read before anything is written: one of the wrong type makes the
-- script fail with nothing left behind. GET and SET are the commands of the
-- least-privilege ACL user of docs/security.md; PTTL, only on refusal, is optional.
local token, ttl, n = ARGV[1], ARGV[2], tonumber(ARGV[3] and string.match(ARGV[3], '^[1-9][0-9]*$'))
if not token or not n or (#KEYS ~= n and #KEYS ~= 2 * n) then
    return redis.error_reply('ERR acquire.lua: KEYS = n lock keys then 0 or n counters, ARGV = token, ttl, n')
end
if not ttl or not string.match(ttl, '^[1-9][0-9]*$') or #ttl > 15 then
    return redis.error_reply('ERR acquire.lua: ttl must be a positive integer of milliseconds below 10^15')
end

for i = 1, n do
    local value = redis.pcall('GET', KEYS[i])
    if type(value) == 'table' and not string.find(value.err, '^WRONGTYPE') then
        return value
    end
    if value ~= false then
        -- A string that never expires is no lock (every Redlock client's lock has a TTL):
        -- a usage error, never a wait without end. PTTL under pcall: a user without +pttl
        -- gets the plain refusal.
        if type(value) == 'string' and redis.pcall('PTTL', KEYS[i]) == -1 then
            return redis.error_reply('REDLOCK_MISMATCH key ' .. KEYS[i] .. ' is a string without expiry, not a lock')
        end
        return false
    end
end

local largest
if #KEYS == 2 * n then
    largest = '0'
    for i = n + 1, 2 * n do
        local counter = redis.pcall('GET', KEYS[i])
        if type(counter) == 'table' then
            if string.find(counter.err, '^WRONGTYPE') then
                return redis.error_reply('WRONGTYPE fencing counter ' .. KEYS[i] .. ' is not a string')
            end
            return counter
        end
        -- Decimal strings without leading zeros compare by length, then lexically: exact
        -- for any 64-bit value, where Lua's doubles are not.
        if counter and (#counter > #largest or (#counter == #largest and counter > largest)) then
            largest = counter
        end
    end
end

for i = 1, n do
    redis.call('SET', KEYS[i], token, 'PX', ttl)
end
return largest or 1
