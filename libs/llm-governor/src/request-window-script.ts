/** Redis time in ms, read inside each script so every process of the fleet shares one clock. */
export const NOW = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/**
 * KEYS: the lane's request-window key (a sorted set, counters or a hash by shape; further keys
 * of a fixed window are this key with the window's number appended, in the same hash slot), the
 * lane hash (the provider's last word on what remains, a learned fixed window's phase), the
 * lane's lease set (the calls in flight).
 * ARGV: shape (sliding | fixed | bucket), limit per span, span ms, grace ms, reserve ms, requests
 * wanted, how many of the leases in flight are the asker's own waiters (not yet sent).
 *
 * Counts up to `wanted` requests against the provider's limit as it counts it, in one step, so a
 * process hands a burst to all its waiters in one round trip. Returns {2, ms} while the lane is
 * held off (a Retry-After; nothing taken), else {1, ms, granted, go-in ms…}: `granted` requests
 * taken (the first `granted` waiters go), each after its go-in ms (0, or a bucket's refill that
 * far ahead reserved for it: it goes then, without asking again; missing: 0); when fewer than
 * wanted were granted, `ms` is when the count frees the next one (ask again then).
 *
 * Never more than the limit in any span: a sliding log grants what is left of the limit in the
 * last span (+ grace), a fixed window what is left of this window (and, within grace of its end,
 * of the next), a bucket what its level holds plus refill reserved at most `reserve` ahead.
 *
 * The provider's last `x-ratelimit-remaining-requests` (`repRemaining`, said at `repAt`, reset at
 * `repResetAt`) bounds what the fleet sends, whatever it counted itself (another client of the
 * key, a window just switched to): a fixed window has at least limit − remaining used (when the
 * answer was of this window), a bucket at most remaining plus its refill since, a sliding log at
 * least limit − remaining requests in the span before the answer. Each only ever tightens the
 * fleet's own count, so an answer that comes late or out of order cannot let more through.
 * A count started afresh while calls are in flight (a shape or limit just learned) counts those
 * calls too, as not yet seen by the provider: they were counted elsewhere, or not at all (the
 * asker's own waiters hold leases but have sent nothing).
 */
export const TAKE_REQUESTS = `${NOW}
local shape = ARGV[1]
local limit = tonumber(ARGV[2])
local span = tonumber(ARGV[3])
local grace = tonumber(ARGV[4])
local reserve = tonumber(ARGV[5])
local wanted = tonumber(ARGV[6])
local mine = tonumber(ARGV[7])
local key = KEYS[1]
local lane = redis.call('HMGET', KEYS[2], 'repRemaining', 'repAt', 'repResetAt', 'fixedPhase', 'closedUntil')
local closed = tonumber(lane[5] or '0')
if closed > now then return {2, closed - now} end
local repRemaining = tonumber(lane[1] or '-1')
local repAt = tonumber(lane[2] or '0')
local repResetAt = tonumber(lane[3] or '0')
local reported = repRemaining >= 0 and now - repAt < span
-- Calls in flight besides the asker's own waiters: unseen by the provider's last word.
local unseen = math.max(0, redis.call('ZCOUNT', KEYS[3], '(' .. now, '+inf') - mine)
if shape == 'fixed' then
  local phase = tonumber(lane[4] or '0')
  local index = math.floor((now - phase) / span)
  local ends = (index + 1) * span + phase
  local this = key .. ':' .. index
  local counted = redis.call('GET', this)
  local used = tonumber(counted or '0')
  if reported and repResetAt > repAt and math.floor((repResetAt - phase - span / 2) / span) == index then
    local seen = limit - repRemaining
    if not counted then seen = seen + unseen end
    used = math.max(used, seen)
  end
  local granted = math.max(0, math.min(wanted, limit - used))
  local wait = ends - now + 1
  if granted > 0 and ends - now <= grace then
    -- So close to the end, a request may reach the provider in the next window: counted there too.
    local following = key .. ':' .. (index + 1)
    local next = tonumber(redis.call('GET', following) or '0')
    if next + granted > limit then
      granted = math.max(0, limit - next)
      wait = ends + span - now + 1
    end
    if granted > 0 then
      redis.call('INCRBY', following, granted)
      redis.call('PEXPIRE', following, 2 * span + 1000)
    end
  end
  if granted > 0 then redis.call('SET', this, used + granted, 'PX', span + 1000) end
  if granted == wanted then wait = 0 end
  return {1, wait, granted}
end
if shape == 'bucket' then
  local capacity = math.max(1, limit - math.ceil(limit * grace / span))
  local rate = limit / span
  local state = redis.call('HMGET', key, 'level', 'at')
  local level = tonumber(state[1] or capacity)
  local at = tonumber(state[2] or now)
  level = math.min(capacity, level + math.max(0, now - at) * rate)
  if reported then
    local left = repRemaining + (now - repAt) * rate
    if not state[1] then left = left - unseen end
    level = math.min(level, left)
  end
  local out = {1, 0, 0}
  local granted = 0
  while granted < wanted do
    local wait = 0
    if level < 1 then wait = math.ceil((1 - level) / rate) end
    if wait > reserve then
      out[2] = wait - reserve
      break
    end
    level = level - 1
    granted = granted + 1
    out[3 + granted] = wait
  end
  out[3] = granted
  redis.call('HSET', key, 'level', tostring(level), 'at', now)
  redis.call('PEXPIRE', key, 2 * span)
  return out
end
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - span - grace)
if reported then
  local seen = limit - repRemaining
  if redis.call('EXISTS', key) == 0 then seen = seen + unseen end
  local ours = redis.call('ZCOUNT', key, repAt - span - grace, '+inf')
  for i = ours + 1, seen do
    local seq = redis.call('HINCRBY', key .. ':seq', 'n', 1)
    redis.call('ZADD', key, repAt, repAt .. ':' .. seq)
  end
end
local count = redis.call('ZCARD', key)
local granted = math.max(0, math.min(wanted, limit - count))
if granted > 0 then
  local last = redis.call('HINCRBY', key .. ':seq', 'n', granted)
  redis.call('PEXPIRE', key .. ':seq', span + grace + 1000)
  -- In slices: a Lua call takes a bounded number of arguments.
  local first = last - granted + 1
  while first <= last do
    local members = {}
    for seq = first, math.min(last, first + 499) do
      members[#members + 1] = now
      members[#members + 1] = now .. ':' .. seq
    end
    redis.call('ZADD', key, unpack(members))
    first = first + 500
  end
  redis.call('PEXPIRE', key, span + grace + 1000)
end
if granted == wanted then return {1, 0, granted} end
count = count + granted
local oldest = redis.call('ZRANGE', key, count - limit, count - limit, 'WITHSCORES')
return {1, tonumber(oldest[2]) + span + grace - now + 1, granted}`;
