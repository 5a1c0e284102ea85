-- The node's clock, remembered on the node (docs/safety.md, "Node clocks"): the highest TIME
-- this node has shown to any client, and the last backward step of its clock a run saw. A
-- clock that steps back was ahead before, and while ahead it expired keys early; a client
-- that connects after the step back cannot see that from its own TIME samples, but this key
-- tells it.
-- KEYS[1] <quarantine_options::node_key_prefix>clock. ARGV[1] tolerance in microseconds: a
-- fall of the clock below the highest time by no more than this is no step. ARGV[2] keep in
-- milliseconds: how long the key outlives the latest run (the longest any client asked for).
-- The key is a string "high until step_at step_by", microseconds on this node's clock
-- (step_at 0: no step seen), written with GET and SET only, which the least-privilege ACL
-- of docs/security.md allows under ~redlock:*.
-- Returns {TIME's seconds, TIME's microseconds, step_at, step_by} as strings.
local tolerance, keep = ARGV[1], ARGV[2]
if #KEYS ~= 1 or not tolerance or not keep or not string.match(tolerance, '^[0-9]+$')
    or #tolerance > 12 or not string.match(keep, '^[1-9][0-9]*$') or #keep > 12 then
    return redis.error_reply('ERR clock_mark.lua: KEYS = the clock key, ARGV = tolerance in microseconds, keep in milliseconds (integers below 10^12)')
end
tolerance = tonumber(tolerance)
keep = tonumber(keep) * 1000

-- Integers up to 2^53 are exact in Lua's numbers; tostring would write 1.7e+15.
local function text(n)
    return string.format('%.0f', n)
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

-- Anything else under the key (another type, a value not of this form) is started afresh.
local high, till, step_at, step_by
local value = redis.pcall('GET', KEYS[1])
if type(value) == 'string' and #value <= 80 then
    local h, u, a, b = string.match(value, '^([0-9]+) ([0-9]+) ([0-9]+) ([0-9]+)$')
    if h and #h <= 16 and #u <= 16 and #a <= 16 and #b <= 16 then
        high, till, step_at, step_by = tonumber(h), tonumber(u), tonumber(a), tonumber(b)
    end
end

if high and now < high - tolerance then
    -- A step back. Recorded for every client that runs this while its quarantine lasts,
    -- and the high-water mark starts again from now: the clock catching up must not be
    -- seen as the same step again (each run until then would place it later), and a second
    -- step back is measured on the clock's new scale. The expiry is reset too: the old one
    -- was reckoned on the clock's earlier, ahead scale.
    step_at, step_by = now, high - now
    high, till = now, now + keep
elseif high then
    if now > high then
        high = now
    end
    if now + keep > till then
        till = now + keep
    end
else
    high, till, step_at, step_by = now, now + keep, 0, 0
end

-- The key lasts as long as some client runs this within keep of the last run, never longer
-- than keep (plus the tolerance) past it: it cannot outlive its users for ever.
redis.call('SET', KEYS[1], text(high) .. ' ' .. text(till) .. ' ' .. text(step_at) .. ' ' ..
    text(step_by), 'PX', text(math.ceil((till - now) / 1000)))
return {t[1], t[2], text(step_at), text(step_by)}
