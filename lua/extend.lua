-- Compare-and-pexpire: push the expiry out only while the lock still carries
-- our token; a key that expired or belongs to another holder is left alone.
-- KEYS[1] lock key, ARGV[1] token, ARGV[2] new ttl in milliseconds,
-- ARGV[3] "1" to re-create the key where it is missing (never where another
-- token holds it). Returns 1 when extended or re-created, 0 otherwise.
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
if ARGV[3] == '1' and redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
    return 1
end
return 0
