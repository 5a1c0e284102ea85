-- draft (lead)
local all_held = 1
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 1, #KEYS do
    local key = KEYS[i]
    local kt = redis.call('TYPE', key).ok
    local removed = false
    if kt == 'string' then
        if redis.call('GET', key) == ARGV[1] then
            redis.call('DEL', key)
            removed = true
        else
            all_held = 0
        end
    elseif kt == 'hash' then
        local d = redis.call('HGET', key, ARGV[1])
        if d and redis.call('HEXISTS', key, 'mode') == 1 then
            if tonumber(d) <= now then all_held = 0 end
            redis.call('HDEL', key, ARGV[1])
            removed = true
            local all = redis.call('HGETALL', key)
            local latest = 0
            for j = 1, #all, 2 do
                local f = all[j]
                if f ~= 'mode' and f ~= 'writer_waiting' then
                    local dd = tonumber(all[j + 1])
                    if dd <= now then redis.call('HDEL', key, f) elseif dd > latest then latest = dd end
                end
            end
            if latest == 0 then redis.call('DEL', key) else redis.call('PEXPIREAT', key, latest) end
        else
            all_held = 0
        end
    else
        all_held = 0
    end
    if removed then
        redis.call('PUBLISH', 'redlock:released:' .. key, '')
    end
end
return all_held
