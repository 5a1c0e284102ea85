-- Compare-and-pexpire: push the expiry out only where our token still holds, or (when
-- asked) re-create our hold where the key is free for it; a key another holder has is left
-- alone. All or nothing over the keys: every key is checked before any is written.
-- KEYS[1..n] lock keys, ARGV[1] token, ARGV[2] new ttl in milliseconds, ARGV[3] "1" to
-- re-create where missing, ARGV[4] the kind: absent or "" (exclusive: a string), "shared"
-- (a reader in a read-write lock's hash) or a permit count N (a holder in a semaphore's
-- hash of mode N).
-- Re-creatable: exclusive, a missing key; shared, a missing key or a readers' hash (a
-- writer's pending mark is ignored: the reader still holds locally); permits, a missing key
-- or a hash of mode N with fewer than N unexpired holders.
-- On success strings get PEXPIRE ttl (re-created ones SET token PX ttl), hash holders the
-- deadline now + ttl on this node's clock, and the hash its expiry at its latest deadline.
-- Returns 1 when every key was extended or re-created, 0 (nothing changed) otherwise.
-- A plain lock is probed with GET, not TYPE, so that the least-privilege ACL user of
-- docs/security.md keeps extending plain locks.
local token, ttl, recreate, kind = ARGV[1], ARGV[2], ARGV[3] == '1', ARGV[4] or ''
if #KEYS < 1 or not token then
    return redis.error_reply('ERR extend.lua: KEYS = lock keys (at least one), ARGV = token, ttl, recreate, kind')
end
if not ttl or not string.match(ttl, '^[1-9][0-9]*$') or #ttl > 15 then
    return redis.error_reply('ERR extend.lua: ttl must be a positive integer of milliseconds below 10^15')
end
if kind ~= '' and kind ~= 'shared' and not (string.match(kind, '^[1-9][0-9]*$') and #kind <= 7
    and tonumber(kind) <= 1000000) then
    return redis.error_reply('ERR extend.lua: kind must be "", "shared" or a permit count from 1 to 1000000')
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

-- Whether a semaphore's holder may be re-created: fewer than N unexpired holders, none of
-- them in the token's slot (the '/SLOT' ending it, see holders_acquire.lua).
local function permit_free(key)
    local slot = string.match(token, '/([0-9]+)$')
    if not slot or #slot > 7 or tonumber(slot) >= tonumber(kind) then
        return false
    end
    local flat = redis.call('HGETALL', key)
    local count = 0
    for i = 1, #flat, 2 do
        local field = flat[i]
        if field ~= 'mode' and field ~= 'writer_waiting' then
            local d = deadline(flat[i + 1])
            if d and d > now_ms() then
                if tonumber(string.match(field, '/([0-9]+)$') or '') == tonumber(slot) then
                    return false
                end
                count = count + 1
            end
        end
    end
    return count < tonumber(kind)
end

-- What each key needs: 'pexpire' (our string), 'set' (a missing key made ours) or 'hold'
-- (our field in a lock hash of this kind, set or refreshed).
local plan = {}
for i, key in ipairs(KEYS) do
    local value = redis.pcall('GET', key)
    if type(value) == 'table' then
        if not string.find(value.err, '^WRONGTYPE') then
            return value
        end
        if kind == '' or redis.pcall('HGET', key, 'mode') ~= kind then
            return 0
        end
        local d = deadline(redis.call('HGET', key, token))
        if d and d > now_ms() then
            plan[i] = 'hold'
        elseif recreate and (kind == 'shared' or permit_free(key)) then
            plan[i] = 'hold'
        else
            return 0
        end
    elseif value == false then
        if not recreate or (kind ~= '' and kind ~= 'shared' and not permit_free(key)) then
            return 0
        end
        plan[i] = 'set'
    elseif value == token and kind == '' then
        plan[i] = 'pexpire'
    else
        return 0
    end
end

for i, key in ipairs(KEYS) do
    if plan[i] == 'pexpire' then
        redis.call('PEXPIRE', key, ttl)
    elseif plan[i] == 'set' and kind == '' then
        redis.call('SET', key, token, 'PX', ttl)
    else
        redis.call('HSET', key, 'mode', kind, token, string.format('%.0f', now_ms() + tonumber(ttl)))
        settle(key)
    end
end
return 1
