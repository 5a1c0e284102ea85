-- Compare-and-pexpire: push the expiry out only while the lock still carries
-- our token; a key that expired or belongs to another holder is left alone.
-- KEYS[1] lock key, ARGV[1] token, ARGV[2] new ttl in milliseconds.
-- Returns 1 when extended, 0 otherwise.
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
