-- draft (lead)
local key, token, ttl, kind = KEYS[1], ARGV[1], tonumber(ARGV[2]), ARGV[3]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local kt = redis.call('TYPE', key).ok
if kt == 'string' then
    return false
end
if kt ~= 'none' and kt ~= 'hash' then
    return redis.error_reply('REDLOCK_MISMATCH key is a ' .. kt .. ', not a lock')
end
local holders, latest, mark = 0, 0, 0
if kt == 'hash' then
    local mode = redis.call('HGET', key, 'mode')
    if mode ~= kind then
        return redis.error_reply('REDLOCK_MISMATCH key holds ' .. tostring(mode) .. ', asked for ' .. kind)
    end
    local all = redis.call('HGETALL', key)
    for i = 1, #all, 2 do
        local f, v = all[i], all[i + 1]
        if f == 'writer_waiting' then
            mark = tonumber(v)
        elseif f ~= 'mode' then
            local d = tonumber(v)
            if d <= now then
                redis.call('HDEL', key, f)
            else
                holders = holders + 1
                if d > latest then latest = d end
            end
        end
    end
end
if kind == 'shared' then
    if mark > now and holders > 0 then
        return false
    end
elseif holders >= tonumber(kind) then
    return false
end
local counter = nil
if KEYS[2] then
    counter = redis.call('GET', KEYS[2]) or '0'
end
redis.call('HSET', key, 'mode', kind, token, now + ttl)
if now + ttl > latest then latest = now + ttl end
redis.call('PEXPIREAT', key, latest)
if counter then return counter end
return 1
