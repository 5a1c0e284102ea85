-- The acquire of a reader of a read-write lock or of a semaphore's permit: one holder more
-- in the key's hash, each holder a field token = deadline on this node's clock
-- (milliseconds since the epoch, from TIME), the field 'mode' telling the kind.
-- KEYS[1] lock key, KEYS[2] its fencing counter (only when fenced);
-- ARGV[1] token, ARGV[2] ttl in milliseconds, ARGV[3] kind: "shared" or the permit count N.
-- Returns nil when refused: the key is a string with an expiry (an exclusive holder, e.g.
-- the writer; one without is a mismatch), a
-- writer's pending mark is still ahead (readers: writers do not starve behind a stream of
-- readers), or (permits) the token's slot is held or N unexpired holders exist. Returns an error `REDLOCK_MISMATCH
-- ...` when the key holds something else: a lock of another kind or permit count (holders
-- must agree on it: a mismatch is an error, never silent), or another type. Granted:
-- integer 1, or, fenced, the counter as a decimal string ("0" where none exists yet),
-- read before anything is written so that one of the wrong type leaves nothing behind.
-- Expired holders are purged, and the hash expires with its latest holder, so that the
-- key disappears with its last holder and a plain SET NX works again at that moment.
local key, token, ttl, kind = KEYS[1], ARGV[1], ARGV[2], ARGV[3]
if (#KEYS ~= 1 and #KEYS ~= 2) or not token then
    return redis.error_reply('ERR holders_acquire.lua: KEYS = lock key[, counter], ARGV = token, ttl, kind')
end
if not ttl or not string.match(ttl, '^[1-9][0-9]*$') or #ttl > 15 then
    return redis.error_reply('ERR holders_acquire.lua: ttl must be a positive integer of milliseconds below 10^15')
end
if kind ~= 'shared' and not (kind and string.match(kind, '^[1-9][0-9]*$') and #kind <= 7
    and tonumber(kind) <= 1000000) then
    return redis.error_reply('ERR holders_acquire.lua: kind must be "shared" or a permit count from 1 to 1000000')
end

-- A semaphore's holder takes one of its N slots, named by the '/SLOT' that ends its token:
-- a node grants a slot that no unexpired holder has there. Two holders of one slot can
-- then never both have a quorum (their majorities share a node), which is what keeps the
-- holders at most N; counting alone would not (on 3 nodes and 2 permits, holders on nodes
-- {1,2}, {2,3} and {1,3} leave 2 on each node: 3 holders).
local slot
if kind ~= 'shared' then
    slot = string.match(token, '/([0-9]+)$')
    if not slot or #slot > 7 or tonumber(slot) >= tonumber(kind) then
        return redis.error_reply('ERR holders_acquire.lua: a permit token ends in /SLOT, SLOT from 0 to N-1')
    end
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- A holder's deadline, or nil for a value that is not one (then it counts as expired).
local function deadline(value)
    if type(value) == 'string' and #value <= 15 and string.match(value, '^[0-9]+$') then
        return tonumber(value)
    end
    return nil
end

local function describe(mode)
    if mode == 'shared' then
        return "a read-write lock's readers"
    elseif mode == '1' then
        return 'a semaphore of 1 permit'
    end
    return 'a semaphore of ' .. mode .. ' permits'
end

local type_of = redis.call('TYPE', key).ok
if type_of == 'string' then
    -- A string that never expires is no lock (see acquire.lua).
    if redis.pcall('PTTL', key) == -1 then
        return redis.error_reply('REDLOCK_MISMATCH key is a string without expiry, not a lock')
    end
    return false
elseif type_of == 'hash' then
    local mode = redis.call('HGET', key, 'mode')
    if mode ~= 'shared' and not (mode and string.match(mode, '^[1-9][0-9]*$') and #mode <= 7
        and tonumber(mode) <= 1000000) then
        return redis.error_reply('REDLOCK_MISMATCH key is a hash, not a lock')
    end
    if mode ~= kind then
        local asked = kind
        if kind == 'shared' or mode == 'shared' then
            asked = describe(kind)
        end
        return redis.error_reply('REDLOCK_MISMATCH key holds ' .. describe(mode) .. ', asked for ' .. asked)
    end
elseif type_of ~= 'none' then
    return redis.error_reply('REDLOCK_MISMATCH key is a ' .. type_of .. ', not a lock')
end

local counter
if KEYS[2] then
    counter = redis.pcall('GET', KEYS[2])
    if type(counter) == 'table' then
        if string.find(counter.err, '^WRONGTYPE') then
            return redis.error_reply('WRONGTYPE fencing counter ' .. KEYS[2] .. ' is not a string')
        end
        return counter
    end
    counter = counter or '0'
end

-- The expired holders go (and a passed writer mark); the others are counted, and the
-- latest deadline kept for the key's expiry.
local holders, latest, mark, taken = 0, now + tonumber(ttl), nil, false
if type_of == 'hash' then
    local flat = redis.call('HGETALL', key)
    for i = 1, #flat, 2 do
        local field = flat[i]
        if field ~= 'mode' then
            local d = deadline(flat[i + 1])
            if not d or d <= now then
                redis.call('HDEL', key, field)
            elseif field == 'writer_waiting' then
                mark = d
            else
                holders = holders + 1
                latest = math.max(latest, d)
                -- As numbers: '01' and '1' are one slot.
                if slot and tonumber(string.match(field, '/([0-9]+)$') or '') == tonumber(slot) then
                    taken = true
                end
            end
        end
    end
end

if mark and holders == 0 then
    -- The mark dies with the last reader: the writer it stood for may take the key now.
    redis.call('HDEL', key, 'writer_waiting')
    mark = nil
end
if (kind == 'shared' and mark) or (kind ~= 'shared' and (taken or holders >= tonumber(kind))) then
    return false
end
redis.call('HSET', key, 'mode', kind, token, string.format('%.0f', now + tonumber(ttl)))
redis.call('PEXPIREAT', key, string.format('%.0f', latest))
return counter or 1
