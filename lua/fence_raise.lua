-- The acquire of a fenced lock, phase 2: raise this node's fencing counter to the
-- candidate token t, but only while this node still holds our lock and only if the
-- counter is lower than t. Counters never decrease; a later holder's phase-1 majority
-- meets this raise on at least one node and so reads at least t.
-- KEYS[1] lock key, KEYS[2] fencing counter, ARGV[1] token, ARGV[2] t (decimal).
-- Returns 1 when raised, 0 when the lock is not ours here or the counter is already >= t.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
    return 0
end
local current = redis.call('GET', KEYS[2]) or '0'
-- Decimal strings without leading zeros compare by length, then lexically: exact for
-- any 64-bit value, where Lua's doubles are not.
if #current < #ARGV[2] or (#current == #ARGV[2] and current < ARGV[2]) then
    redis.call('SET', KEYS[2], ARGV[2])
    return 1
end
return 0
