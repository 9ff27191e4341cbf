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

local VERSION = '2'

-- The error a write gets when its counter was deleted (its tag's live key
-- is gone): the client reloads the counter and answers NotFound.
local GONE = 'TALLYGONE the counter was deleted'

-- At most this many expired entries leave a marker index per call: the
-- work of a call stays bounded however long the index sat idle.
local PRUNE_PER_CALL = 64

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
-- Returns one entry per op: 1 when applied, or the stored marker record
-- of a once-op whose event was already counted. An increment that would
-- take its value beyond int64 undoes the ones before it and fails the
-- call with TALLYOVERFLOW <op index>: nothing is written.
local FIELDS = 9

local function write(keys, args)
  if redis.call('EXISTS', keys[1]) == 0 then
    return redis.error_reply(GONE)
  end
  local n = tonumber(args[2])
  local out = {}
  for i = 0, n - 1 do
    local b = 3 + i * FIELDS
    out[i + 1] = 1
    if args[b] == 'o' then
      local found = redis.call('GET', keys[tonumber(args[b + 2])])
      if found then out[i + 1] = found end
    end
  end
  local done = {}
  for i = 0, n - 1 do
    if out[i + 1] == 1 then
      local b = 3 + i * FIELDS
      local key = keys[tonumber(args[b + 1])]
      local r = redis.pcall('INCRBY', key, args[b + 3])
      if type(r) == 'table' and r.err then
        for j = #done, 1, -1 do
          redis.call('DECRBY', done[j][1], done[j][2])
        end
        return redis.error_reply('TALLYOVERFLOW ' .. i)
      end
      done[#done + 1] = {key, args[b + 3]}
    end
  end
  for i = 0, n - 1 do
    if out[i + 1] == 1 then
      local b = 3 + i * FIELDS
      if args[b] == 'o' then
        local marker = keys[tonumber(args[b + 2])]
        if args[b + 5] == '0' then
          redis.call('SET', marker, args[b + 4])
        else
          redis.call('SET', marker, args[b + 4], 'PX', args[b + 5])
        end
        redis.call('ZADD', keys[2], args[b + 7], args[b + 6])
      end
      if args[b + 8] ~= '' then
        redis.call('ZADD', keys[3], 0, args[b + 8])
      end
    end
  end
  -- Expired: kept until a time before the client's now (0: forever).
  local expired = redis.call('ZRANGEBYSCORE', keys[2], 1, '(' .. args[1],
                             'LIMIT', 0, PRUNE_PER_CALL)
  if #expired > 0 then redis.call('ZREM', keys[2], unpack(expired)) end
  return out
end

-- tally_drop_key: one key of a keyed counter in one tag (Db::DeleteKey),
-- atomically, so that no write lands between the listing of its markers
-- and their removal (a count deleted while its marker stays would never
-- count again). KEYS[1] the tag's marker index, KEYS[2] its key index,
-- KEYS[3] the key's value; ARGV[1] the marker-name prefix of the key,
-- ARGV[2] the key, ARGV[3] the tag. O(markers of the tag).
-- Returns how many markers went.
local ZREM_CHUNK = 1000  -- unpack() has a bound on its arguments

local function drop_key(keys, args)
  local prefix = args[1]
  local names = redis.call('ZRANGE', keys[1], 0, -1)
  local gone = {}
  for _, name in ipairs(names) do
    if string.sub(name, 1, #prefix) == prefix then
      redis.call('DEL', args[3] .. ':m:' .. name)
      gone[#gone + 1] = name
    end
  end
  for at = 1, #gone, ZREM_CHUNK do
    redis.call('ZREM', keys[1],
               unpack(gone, at, math.min(#gone, at + ZREM_CHUNK - 1)))
  end
  redis.call('DEL', keys[3])
  redis.call('ZREM', keys[2], args[2])
  return #gone
end

redis.register_function{function_name = 'tally_version',
  callback = function() return VERSION end, flags = {'no-writes'}}
redis.register_function{function_name = 'tally_write', callback = write}
redis.register_function{function_name = 'tally_drop_key', callback = drop_key}
