-- A writer's pending mark on a read-write lock, sent by a writer to the nodes that refused
-- its attempt, before it sleeps: new readers are refused there while the mark is ahead, so
-- that a stream of overlapping readers cannot starve the writer. The readers that hold
-- keep holding; the mark dies with the last of them (the key goes), or when it passes.
-- KEYS[1] lock key, ARGV[1] the mark's ttl in milliseconds.
-- Returns 1 when the key is a readers' hash with at least one unexpired reader: its field
-- writer_waiting becomes now + ttl on this node's clock (never lowered: a later mark of
-- another writer stays). Returns 0, changing nothing, otherwise (no readers there: the
-- writer's next attempt needs no mark).
local key, ttl = KEYS[1], ARGV[1]
if #KEYS ~= 1 then
    return redis.error_reply('ERR writer_waiting.lua: KEYS = lock key, ARGV = mark ttl')
end
if not ttl or not string.match(ttl, '^[1-9][0-9]*$') or #ttl > 15 then
    return redis.error_reply('ERR writer_waiting.lua: ttl must be a positive integer of milliseconds below 10^15')
end
if redis.pcall('HGET', key, 'mode') ~= 'shared' then
    return 0
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

local flat = redis.call('HGETALL', key)
local expired, latest, mark = {}, nil, nil
for i = 1, #flat, 2 do
    local field = flat[i]
    if field ~= 'mode' then
        local d = deadline(flat[i + 1])
        if not d or d <= now then
            table.insert(expired, field)
        elseif field == 'writer_waiting' then
            mark = d
        elseif not latest or d > latest then
            latest = d
        end
    end
end
if not latest then
    return 0
end
-- The hash changes: its expired holders go first, and it expires with its latest reader.
for _, field in ipairs(expired) do
    redis.call('HDEL', key, field)
end
redis.call('PEXPIREAT', key, string.format('%.0f', latest))
local until_ms = now + tonumber(ttl)
if not mark or mark < until_ms then
    redis.call('HSET', key, 'writer_waiting', string.format('%.0f', until_ms))
end
return 1
