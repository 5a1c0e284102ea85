-- draft (lead)
local n = 0
for i = 1, #KEYS do
    local kt = redis.call('TYPE', KEYS[i]).ok
    if kt == 'string' or (kt == 'hash' and redis.call('HEXISTS', KEYS[i], 'mode') == 1) then
        redis.call('DEL', KEYS[i])
        redis.call('PUBLISH', 'redlock:released:' .. KEYS[i], '')
        n = n + 1
    end
end
return n
