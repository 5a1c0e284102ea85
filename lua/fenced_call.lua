-- The reference fenced resource: run one command on the resource only for a fencing
-- token at least as high as the highest this resource has seen, and remember the token.
-- Reads go through it as well: a read by a newer holder fences every older holder's
-- later write, which is what keeps a read-modify-write from losing an update.
-- KEYS[1] the resource's fence (highest token seen), KEYS[2..] the keys the command
-- touches, ARGV[1] the fencing token (decimal), ARGV[2..] the command and its arguments.
-- Returns the command's reply, or the error "FENCED <token> < <highest>".
local token = ARGV[1]
if not string.match(token, '^[1-9][0-9]*$') or #token > 20 then
    return redis.error_reply('ERR fencing token must be a positive decimal integer')
end
local highest = redis.call('GET', KEYS[1]) or '0'
if #token < #highest or (#token == #highest and token < highest) then
    return redis.error_reply('FENCED ' .. token .. ' < ' .. highest)
end
if token ~= highest then
    redis.call('SET', KEYS[1], token)
end
return redis.call(unpack(ARGV, 2))
