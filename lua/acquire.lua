-- draft (lead): exclusive acquire over n keys, optionally fenced
local n = tonumber(ARGV[3])
for i = 1, n do
    if redis.call('EXISTS', KEYS[i]) == 1 then
        return false
    end
end
local highest = nil
if #KEYS > n then
    highest = '0'
    for i = n + 1, #KEYS do
        local c = redis.call('GET', KEYS[i]) or '0'
        if #c > #highest or (#c == #highest and c > highest) then
            highest = c
        end
    end
end
for i = 1, n do
    redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2])
end
if highest then
    return highest
end
return 1
