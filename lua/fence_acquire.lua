-- The acquire of a fenced lock, phase 1: SET NX PX as in a plain acquire, and, when
-- granted, this node's fencing counter for the resource. The counter is read before
-- anything is written, so that a counter key of the wrong type leaves no lock behind.
-- KEYS[1] lock key, KEYS[2] fencing counter (no TTL, never deleted by the library),
-- ARGV[1] token, ARGV[2] ttl in milliseconds.
-- Returns the counter as a decimal string when granted, nil when held by another.
local counter = redis.call('GET', KEYS[2]) or '0'
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
    return counter
end
return false
