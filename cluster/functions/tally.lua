#!lua name=tally
-- The Redis Functions of tally's cluster backend (docs/cluster.md,
-- "Functions"). Loaded on every master (scripts/redis_cluster
-- load-functions, or an operator's FUNCTION LOAD REPLACE); the backend
-- checks tally_version on each master at connect.
--
-- What runs here is the atomic part of a write, never a rule: the client
-- decides every op with core/ (arguments, placement, window, retention)
-- and sends what it decided; a function then commits it on the node that
-- holds its keys, all or nothing, after the one check that needs the
-- stored state: whether the event's marker is already there. Every
-- function is O(ops it is given) and touches keys of one hash tag.
--
-- Lua numbers are doubles: no value, delta or marker field is ever
-- converted to a number here. Deltas go to INCRBY as the client's decimal
-- strings (Redis does the int64 arithmetic and refuses an overflow);
-- markers are opaque strings. Only the op count, key indexes and times
-- (ms, below 2^53) become numbers.

local VERSION = '7'

-- The error a write gets when its counter was deleted (its tag's live key
-- is gone): the client reloads the counter and answers NotFound.
local GONE = 'TALLYGONE the counter was deleted'

-- At most this many expired entries leave a marker index per call: the
-- work of a call stays bounded however long the index sat idle.
local PRUNE_PER_CALL = 64

-- Stores `value` at `key`, dropped after `ttl` ms ('0': kept forever).
local function set_for(key, value, ttl)
  if ttl == '0' then
    redis.call('SET', key, value)
  else
    redis.call('SET', key, value, 'PX', ttl)
  end
end

-- Drops up to PRUNE_PER_CALL names whose expiry (score; 0 for never) is
-- before `now` from the sorted set `index`.
local function prune(index, now)
  local expired = redis.call('ZRANGEBYSCORE', index, 1, '(' .. now,
                             'LIMIT', 0, PRUNE_PER_CALL)
  if #expired > 0 then redis.call('ZREM', index, unpack(expired)) end
end

-- INCRBY of each {key, delta} of `incs`, all or none: when one would take
-- its key beyond int64, the ones before it are undone and the index of the
-- failing one is returned (nil when all were made).
local function incr_all(incs)
  for i, inc in ipairs(incs) do
    local r = redis.pcall('INCRBY', inc[1], inc[2])
    if type(r) == 'table' and r.err then
      for j = i - 1, 1, -1 do
        redis.call('DECRBY', incs[j][1], incs[j][2])
      end
      return i
    end
  end
  return nil
end

-- tally_write's bucket entries from args[at] on (see there).
local BUCKET_FIELDS = 5

local function index_buckets(keys, args, at)
  for i = 0, tonumber(args[at] or '0') - 1 do
    local b = at + 1 + i * BUCKET_FIELDS
    local value, index = keys[tonumber(args[b])], keys[tonumber(args[b + 1])]
    redis.call('ZADD', index, args[b + 2], args[b + 2])
    if args[b + 3] ~= '0' then redis.call('PEXPIRE', value, args[b + 3]) end
    if args[b + 4] ~= '0' then
      redis.call('ZREMRANGEBYSCORE', index, '-inf', '(' .. args[b + 4])
    end
  end
end

-- tally_write: the ops of one hash tag (one counter, shard and key group).
-- KEYS[1] the tag's live key, KEYS[2] its marker index (a sorted set of
-- marker names by expiry, 0 for never), KEYS[3] its key index (a keyed
-- counter's keys; else unused), KEYS[4..] the value and marker keys the
-- ops name by index.
-- ARGV[1] the client's now (ms), ARGV[2] the op count, then per op 9
-- fields: kind ('p' plain, 'o' once), value key index, marker key index
-- (0: none), delta (decimal), marker record, marker TTL in ms ('0': kept
-- forever), marker name in the index with its expiry (score), the keyed
-- counter's key ('' for a named counter).
-- After the ops: a guard count (none: 0), then per guard a value key index and the
-- value (decimal) the client decided the ops of a strict counter on; when
-- a guarded key holds another value now (another client wrote it since),
-- the call fails with TALLYSTALE and writes nothing: the client reads the
-- value again and decides again (core/'s rules stay in the client).
-- After the guards: a bucket count (none: 0 or absent), then per bucket
-- value a bucketed counter's ops wrote 5 fields: the value key's index, its
-- bucket index's (a sorted set of bucket starts), the bucket's start, the
-- value's TTL in ms ('0': kept forever), and the start below which the
-- index's entries are past retention ('0': none): the start is indexed,
-- the TTL set (the value goes when its bucket is past retention) and the
-- expired starts leave the index.
-- Returns one entry per op: 1 when applied, or what a once-op's marker
-- key holds: the marker record of an event already counted, or (in the
-- tag of the event id's own shard) a forward to the shard the event went
-- to (tally_forward), where the client sends the op instead. An increment that would
-- take its value beyond int64 undoes the ones before it and fails the
-- call with TALLYOVERFLOW <op index>: nothing is written.
local FIELDS = 9

local function write(keys, args)
  if redis.call('EXISTS', keys[1]) == 0 then
    return redis.error_reply(GONE)
  end
  local n = tonumber(args[2])
  local g = 3 + n * FIELDS
  for j = 0, tonumber(args[g] or '0') - 1 do
    local now = redis.call('GET', keys[tonumber(args[g + 1 + 2 * j])]) or '0'
    if now ~= args[g + 2 + 2 * j] then
      return redis.error_reply('TALLYSTALE a strict value changed')
    end
  end
  local out = {}
  for i = 0, n - 1 do
    local b = 3 + i * FIELDS
    out[i + 1] = 1
    if args[b] == 'o' then
      local found = redis.call('GET', keys[tonumber(args[b + 2])])
      if found then out[i + 1] = found end
    end
  end
  local incs, op_of = {}, {}
  for i = 0, n - 1 do
    if out[i + 1] == 1 then
      local b = 3 + i * FIELDS
      incs[#incs + 1] = {keys[tonumber(args[b + 1])], args[b + 3]}
      op_of[#incs] = i
    end
  end
  local failed = incr_all(incs)
  if failed then return redis.error_reply('TALLYOVERFLOW ' .. op_of[failed]) end
  for i = 0, n - 1 do
    if out[i + 1] == 1 then
      local b = 3 + i * FIELDS
      if args[b] == 'o' then
        set_for(keys[tonumber(args[b + 2])], args[b + 4], args[b + 5])
        redis.call('ZADD', keys[2], args[b + 7], args[b + 6])
      end
      if args[b + 8] ~= '' then
        redis.call('ZADD', keys[3], 0, args[b + 8])
      end
    end
  end
  index_buckets(keys, args, g + 1 + 2 * tonumber(args[g] or '0'))
  -- Expired: kept until a time before the client's now (0: forever).
  prune(keys[2], args[1])
  return out
end

-- tally_forward: the first step of once-ops placed away from their event
-- id's own shard (an affinity key chose their shard): in the tag of the
-- event id's shard, where every copy of the event looks first, a forward
-- record names the shard the event goes to, so that a copy delivered
-- without the key (or with another) is sent there and counted once. Only
-- where the marker key holds nothing: a stored marker or forward is
-- answered instead, and the client follows it. The second step is the
-- op's tally_write in its own shard's tag.
-- KEYS[1] the tag's live key, KEYS[2] its forward index (forward names by
-- expiry), KEYS[3..] the marker keys the ops name by index.
-- ARGV[1] the client's now (ms), ARGV[2] the op count, then per op 5
-- fields: marker key index, forward record, TTL in ms ('0': kept forever),
-- name in the index, expiry (score).
-- Returns one entry per op: 1 when the forward was written, else what the
-- key holds.
local FORWARD_FIELDS = 5

local function forward(keys, args)
  if redis.call('EXISTS', keys[1]) == 0 then
    return redis.error_reply(GONE)
  end
  local n = tonumber(args[2])
  local out = {}
  for i = 0, n - 1 do
    local b = 3 + i * FORWARD_FIELDS
    local key = keys[tonumber(args[b])]
    local found = redis.call('GET', key)
    if found then
      out[i + 1] = found
    else
      set_for(key, args[b + 1], args[b + 2])
      redis.call('ZADD', keys[2], args[b + 4], args[b + 3])
      out[i + 1] = 1
    end
  end
  prune(keys[2], args[1])
  return out
end

-- tally_drop_key: one key of a keyed counter in one tag (Db::DeleteKey),
-- atomically, so that no write lands between the listing of its markers
-- and their removal (a count deleted while its marker stays would never
-- count again). KEYS[1] the tag's marker index, KEYS[2] its key index,
-- KEYS[3] the key's value, KEYS[4] its forward index, KEYS[5] its
-- reservation index (names "r:RECORD" and "h[:KEY]" under the tag),
-- KEYS[6] the key's open holds, KEYS[7] its bucket index (a bucketed
-- counter's: its bucket values go too); ARGV[1] the marker-name prefix of
-- the key, ARGV[2] the key, ARGV[3] the tag. The key's reservations go
-- with it (their records are named as its markers are, after "r:").
-- O(markers, forwards, reservations and buckets of the tag). Returns how
-- many markers went.
local ZREM_CHUNK = 1000  -- unpack() has a bound on its arguments

-- Deletes the keys `under` .. name of the names in `index` that start
-- with `prefix`, and those names; returns how many.
local function drop_names(index, prefix, under)
  local names = redis.call('ZRANGE', index, 0, -1)
  local gone = {}
  for _, name in ipairs(names) do
    if string.sub(name, 1, #prefix) == prefix then
      redis.call('DEL', under .. name)
      gone[#gone + 1] = name
    end
  end
  for at = 1, #gone, ZREM_CHUNK do
    redis.call('ZREM', index,
               unpack(gone, at, math.min(#gone, at + ZREM_CHUNK - 1)))
  end
  return #gone
end

-- Deletes the bucket values of key `key` of tag `tag` (a bucketed
-- counter's) that bucket index `index` lists, and the index.
local function drop_buckets(index, tag, key)
  local suffix = ''
  if key ~= '' then suffix = ':' .. key end
  for _, start in ipairs(redis.call('ZRANGE', index, 0, -1)) do
    redis.call('DEL', tag .. ':b:' .. start .. suffix)
  end
  redis.call('DEL', index)
end

-- tally_drop_buckets: the bucket values of keys of one tag (DeleteCounter
-- of a bucketed counter). KEYS: the bucket index of each key; ARGV[1] the
-- tag, ARGV[2..] the keys ('' for a named counter's shard), in KEYS'
-- order. O(buckets).
local function drop_tag_buckets(keys, args)
  for i = 1, #keys do drop_buckets(keys[i], args[1], args[i + 1]) end
  return #keys
end

local function drop_key(keys, args)
  local count = drop_names(keys[1], args[1], args[3] .. ':m:')
  drop_names(keys[4], args[1], args[3] .. ':m:')
  drop_names(keys[5], 'r:' .. args[1], args[3] .. ':')
  drop_buckets(keys[7], args[3], args[2])
  redis.call('DEL', keys[3], keys[6])
  redis.call('ZREM', keys[2], args[2])
  redis.call('ZREM', keys[5], 'h:' .. args[2])
  return count
end

-- tally_guarded: a compare-and-set of one hash tag for the records whose
-- rules core/ decides in the client from what it read (claims, a strict
-- key's reservations): the call writes only where every key it guards
-- still holds what the client read, else fails with TALLYSTALE and writes
-- nothing; the client reads and decides again.
-- KEYS: the keys the fields name by index (all of one tag).
-- ARGV[1] the index of a live key that must exist (0: none; a missing one
-- fails the call with TALLYGONE), ARGV[2] the guard count, then per guard
-- a key index and what the key held when read: '=' and its bytes, or '-'
-- for no key. Then the op count and per op its name and fields:
--   s KEY VALUE TTL  SET (TTL in ms, '0': kept forever)
--   d KEY            DEL
--   i KEY DELTA      INCRBY (first, all of them: one that would overflow
--                    undoes the others and fails the call, TALLYOVERFLOW)
--   z KEY SCORE NAME ZADD         r KEY NAME  ZREM
-- Every value, delta and score stays the client's string. Returns 1.
local GUARDED_FIELDS = {s = 3, d = 1, i = 2, z = 3, r = 2}

local function guarded(keys, args)
  local live = tonumber(args[1])
  if live > 0 and redis.call('EXISTS', keys[live]) == 0 then
    return redis.error_reply(GONE)
  end
  local at = 3
  for _ = 1, tonumber(args[2]) do
    local now = redis.call('GET', keys[tonumber(args[at])])
    local was = args[at + 1]
    if (now and was ~= '=' .. now) or (not now and was ~= '-') then
      return redis.error_reply('TALLYSTALE a guarded key changed')
    end
    at = at + 2
  end
  local ops = {}
  for _ = 1, tonumber(args[at]) do
    local name = args[at + 1]
    local n = GUARDED_FIELDS[name]
    if not n then return redis.error_reply('TALLYBADOP ' .. tostring(name)) end
    ops[#ops + 1] = {name, unpack(args, at + 2, at + 1 + n)}
    at = at + 1 + n
  end
  local incs = {}
  for _, op in ipairs(ops) do
    if op[1] == 'i' then incs[#incs + 1] = {keys[tonumber(op[2])], op[3]} end
  end
  local failed = incr_all(incs)
  if failed then
    return redis.error_reply('TALLYOVERFLOW ' .. incs[failed][1])
  end
  for _, op in ipairs(ops) do
    local key = keys[tonumber(op[2])]
    if op[1] == 's' then
      set_for(key, op[3], op[4])
    elseif op[1] == 'd' then
      redis.call('DEL', key)
    elseif op[1] == 'z' then
      redis.call('ZADD', key, op[3], op[4])
    elseif op[1] == 'r' then
      redis.call('ZREM', key, op[3])
    end
  end
  return 1
end

redis.register_function{function_name = 'tally_version',
  callback = function() return VERSION end, flags = {'no-writes'}}
redis.register_function{function_name = 'tally_write', callback = write}
redis.register_function{function_name = 'tally_forward', callback = forward}
redis.register_function{function_name = 'tally_drop_key', callback = drop_key}
redis.register_function{function_name = 'tally_guarded', callback = guarded}
redis.register_function{function_name = 'tally_drop_buckets',
  callback = drop_tag_buckets}
