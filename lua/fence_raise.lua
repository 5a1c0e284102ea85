-- draft (lead)
local n = #KEYS / 2
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 1, n do
    local kt = redis.call('TYPE', KEYS[i]).ok
    if kt == 'string' then
        if redis.call('GET', KEYS[i]) ~= ARGV[1] then return 0 end
    elseif kt == 'hash' then
        local d = redis.call('HGET', KEYS[i], ARGV[1])
        if not d or tonumber(d) <= now then return 0 end
    else
        return 0
    end
end
for i = n + 1, #KEYS do
    local c = redis.call('GET', KEYS[i]) or '0'
    if not (#c < #ARGV[2] or (#c == #ARGV[2] and c < ARGV[2])) then return 0 end
end
for i = n + 1, #KEYS do
    redis.call('SET', KEYS[i], ARGV[2])
end
return 1
