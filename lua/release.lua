-- Compare-and-delete: remove only what our token holds, so that a holder whose lock
-- expired can never delete the next holder's lock.
-- KEYS[1..n] lock keys (n >= 1), ARGV[1] token, ARGV[2] (optional) the release's
-- announcement: what the PUBLISH says, so that the releasing client, which told its own
-- waiters already, recognises it.
-- Per key: a string equal to the token is deleted; a lock hash (readers or permits) loses
-- the token's field, expired or not, then its expired holders, and goes with its last
-- holder or expires with its latest remaining one; anything else is left alone. Where
-- something of ours went, PUBLISH the announcement (or '') on 'redlock:released:' .. key
-- so that waiters retry at once.
-- Returns 1 when the token held every key (unexpired), 0 otherwise.
-- A plain lock is probed with GET, not TYPE: its release keeps working for an ACL user
-- with only the plain lock's commands (docs/security.md), as does the PUBLISH, which such
-- a user may not send (pcall: waiters then fall back to their backoff).
local token = ARGV[1]
local announcement = ARGV[2] or ''
if #KEYS < 1 or not token then
    return redis.error_reply('ERR release.lua: KEYS = lock keys (at least one), ARGV[1] = token')
end

local now
local function now_ms()
    if not now then
        local t = redis.call('TIME')
        now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    end
    return now
end

-- A holder's deadline, or nil for a value that is not one (then it counts as expired).
local function deadline(value)
    if type(value) == 'string' and #value <= 15 and string.match(value, '^[0-9]+$') then
        return tonumber(value)
    end
    return nil
end

-- 'shared' or a permit count: the hash is a lock of ours.
local function lock_mode(key)
    local mode = redis.pcall('HGET', key, 'mode')
    if mode == 'shared' or (type(mode) == 'string' and string.match(mode, '^[1-9][0-9]*$')
        and #mode <= 7 and tonumber(mode) <= 1000000) then
        return mode
    end
    return nil
end

-- Drops the holders whose deadline has passed (and a passed writer mark), then the key
-- with its last holder, or moves its expiry to the latest remaining deadline: the key
-- lives exactly as long as a holder, so SET NX works again the moment none is left.
local function settle(key)
    local flat = redis.call('HGETALL', key)
    local latest
    for i = 1, #flat, 2 do
        local field = flat[i]
        if field ~= 'mode' then
            local d = deadline(flat[i + 1])
            if not d or d <= now_ms() then
                redis.call('HDEL', key, field)
            elseif field ~= 'writer_waiting' and (not latest or d > latest) then
                latest = d
            end
        end
    end
    if latest then
        redis.call('PEXPIREAT', key, string.format('%.0f', latest))
    else
        redis.call('DEL', key)
    end
end

local all = 1
for _, key in ipairs(KEYS) do
    local removed = false
    local value = redis.pcall('GET', key)
    if type(value) == 'table' then
        if not string.find(value.err, '^WRONGTYPE') then
            return value
        end
        if lock_mode(key) then
            local d = deadline(redis.call('HGET', key, token))
            if redis.call('HDEL', key, token) == 1 then
                removed = true
                if not d or d <= now_ms() then
                    all = 0
                end
                settle(key)
            else
                all = 0
            end
        else
            all = 0
        end
    elseif value == token then
        redis.call('DEL', key)
        removed = true
    else
        all = 0
    end
    if removed then
        redis.pcall('PUBLISH', 'redlock:released:' .. key, announcement)
    end
end
return all
