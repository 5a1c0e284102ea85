-- Forced unlock for operators (`redlock release --force`): deletes the lock state of each
-- key whatever its holders' tokens, and tells the waiters on its release channel.
-- KEYS[1..n] lock keys. Deleted: a string with an expiry (an exclusive holder; every lock
-- string has one) and a lock hash (its field 'mode' is "shared" or a permit count). Left
-- alone: anything else, in particular the fencing counters (strings without an expiry),
-- even when named here, so that tokens keep increasing after a forced unlock.
-- Returns the number of keys deleted.
local deleted = 0
for _, key in ipairs(KEYS) do
    local ours = false
    local type_of = redis.call('TYPE', key).ok
    if type_of == 'string' then
        ours = redis.call('PTTL', key) >= 0
    elseif type_of == 'hash' then
        local mode = redis.call('HGET', key, 'mode')
        ours = mode == 'shared' or (mode and string.match(mode, '^[1-9][0-9]*$') and #mode <= 7
            and tonumber(mode) <= 1000000) or false
    end
    if ours then
        redis.call('DEL', key)
        redis.pcall('PUBLISH', 'redlock:released:' .. key, '')
        deleted = deleted + 1
    end
end
return deleted
