-- Compare-and-delete: remove the lock only while it still carries our token,
-- so a holder whose lock expired can never delete the next holder's lock.
-- KEYS[1] lock key, ARGV[1] token. Returns 1 when deleted, 0 otherwise.
-- A deletion is announced on redlock:released:<key> so that waiters retry at once; pcall:
-- a user whose ACL refuses PUBLISH still releases (its waiters fall back to backoff).
if redis.call('GET', KEYS[1]) == ARGV[1] then
    redis.call('DEL', KEYS[1])
    redis.pcall('PUBLISH', 'redlock:released:' .. KEYS[1], '')
    return 1
end
return 0
