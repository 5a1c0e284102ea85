-- draft (lead)
local key = KEYS[1]
if redis.call('TYPE', key).ok ~= 'hash' or redis.call('HGET', key, 'mode') ~= 'shared' then
    return 0
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local mark = now + tonumber(ARGV[1])
local old = tonumber(redis.call('HGET', key, 'writer_waiting') or '0')
if old < mark then
    redis.call('HSET', key, 'writer_waiting', mark)
end
return 1
