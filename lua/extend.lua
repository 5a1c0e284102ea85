-- draft (lead)
local token, ttl, recreate, kind = ARGV[1], tonumber(ARGV[2]), ARGV[3] == '1', ARGV[4] or ''
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local plan = {}
for i = 1, #KEYS do
    local key = KEYS[i]
    local kt = redis.call('TYPE', key).ok
    if kind == '' then
        if kt == 'string' and redis.call('GET', key) == token then plan[i] = 'extend'
        elseif kt == 'none' and recreate then plan[i] = 'create'
        else return 0 end
    else
        if kt == 'hash' then
            if redis.call('HGET', key, 'mode') ~= kind then return 0 end
            local d = redis.call('HGET', key, token)
            if d and tonumber(d) > now then plan[i] = 'extend'
            elseif recreate then
                if kind ~= 'shared' then
                    local all = redis.call('HGETALL', key)
                    local holders = 0
                    for j = 1, #all, 2 do
                        local f = all[j]
                        if f ~= 'mode' and f ~= 'writer_waiting' and f ~= token and tonumber(all[j + 1]) > now then holders = holders + 1 end
                    end
                    if holders >= tonumber(kind) then return 0 end
                end
                plan[i] = 'extend'
            else return 0 end
        elseif kt == 'none' and recreate then plan[i] = 'extend'
        else return 0 end
    end
end
for i = 1, #KEYS do
    local key = KEYS[i]
    if kind == '' then
        if plan[i] == 'extend' then redis.call('PEXPIRE', key, ttl) else redis.call('SET', key, token, 'PX', ttl) end
    else
        redis.call('HSET', key, 'mode', kind, token, now + ttl)
        local all = redis.call('HGETALL', key)
        local latest = 0
        for j = 1, #all, 2 do
            local f = all[j]
            if f ~= 'mode' and f ~= 'writer_waiting' then
                local dd = tonumber(all[j + 1])
                if dd <= now then redis.call('HDEL', key, f) elseif dd > latest then latest = dd end
            end
        end
        redis.call('PEXPIREAT', key, latest)
    end
end
return 1
