-- Reads this node's TTL ceiling (written by ttl_ceiling_raise.lua): a client that saw
-- another node restart learns from it how long that node's locks may still stand.
-- KEYS[1] the ceiling key. Changes nothing.
-- Returns an array: this node's time in milliseconds, then field, value, field, value ...
-- as stored (the client decides what is live, and reports what is odd).
if #KEYS ~= 1 then
    return redis.error_reply('ERR ttl_ceiling_read.lua: KEYS = ceiling key')
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local reply = {string.format('%.0f', now)}
-- Another type at the key is an error reply (WRONGTYPE): the client reports it.
local flat = redis.call('HGETALL', KEYS[1])
for i = 1, #flat do
    table.insert(reply, flat[i])
end
return reply
