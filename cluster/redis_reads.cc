// RedisDb's reads: values (ReadExact, ShardCounts, ReadKeys), a keyed
// counter's keys (ListKeys, DeleteKey) and markers (CountMarkers,
// GetMarker, ListMarkers).
//
// A read gathers its keys with one pipelined request per node (the client
// sends each node's commands together): a counter's shards live on several
// masters, so a read is not one snapshot of the counter. Each shard's
// value is read whole (a shard is one key), and an increment is counted
// in exactly one shard, so a sum is always some interleaving of whole
// increments, never a part of one (docs/cluster.md, "Reads").

#include <algorithm>
#include <charconv>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cluster/records.h"
#include "cluster/redis_db.h"
#include "core/bounds.h"
#include "core/buckets.h"
#include "core/decide.h"
#include "core/validate.h"
#include "tally/limits.h"

namespace tally::cluster {

Command ReadCommand(std::vector<std::string> args, const std::string& key,
                    bool replica_ok) {
  Command c;
  c.args = std::move(args);
  c.slot = ClusterClient::SlotOf(key);
  c.read_only = replica_ok;
  c.idempotent = true;
  return c;
}

Command WriteCommand(std::vector<std::string> args, const std::string& key) {
  Command c;
  c.args = std::move(args);
  c.slot = ClusterClient::SlotOf(key);
  return c;
}

namespace {

// A value key's reply as an int64 (nil: 0).
Status ValueOf(const CounterInfo& c, const Reply& r, int64_t* out) {
  *out = 0;
  if (r.kind == Reply::Kind::kNil) return Status::OK();
  if (r.kind != Reply::Kind::kString) {
    return Status::IOError("read counter " + core::Quote(c.name) + ": " +
                           r.str);
  }
  const char* last = r.str.data() + r.str.size();
  auto [ptr, ec] = std::from_chars(r.str.data(), last, *out);
  if (r.str.empty() || ec != std::errc() || ptr != last) {
    return Status::Corruption("value of counter " + core::Quote(c.name) +
                              " is not an integer: " + core::Quote(r.str));
  }
  return Status::OK();
}

}  // namespace

Status SumBeyond(std::string_view counter) {
  return Status::OutOfRange("counter " + core::Quote(counter) +
                            ": the sum of its shards is beyond int64");
}

Status NotKeyed(const CounterInfo& c, std::string_view call) {
  return Status::InvalidArgument(std::string(call) + ": counter " +
                                 core::Quote(c.name) + " is not keyed");
}

void ForEachUnexpired(
    const Reply& index, int64_t now,
    const std::function<void(const std::string&, int64_t)>& fn) {
  const std::vector<Reply>& e = index.elements;
  for (size_t i = 0; i + 1 < e.size(); i += 2) {
    int64_t expires = 0;
    const std::string& score = e[i + 1].str;
    std::from_chars(score.data(), score.data() + score.size(), expires);
    if (!core::MarkerExpired(expires, now)) fn(e[i].str, expires);
  }
}

__int128 SumOfShards(const int64_t* values, size_t n) {
  __int128 sum = 0;
  for (size_t i = 0; i < n; ++i) sum += values[i];
  return sum;
}

Status RedisDb::ReadValues(const CounterInfo& c,
                           const std::vector<std::string_view>& keys,
                           const TimeRange* range,
                           std::vector<int64_t>* values, bool* gone) {
  if (c.bucket != BucketWidth::kNone) {
    return ReadBuckets(c, keys, range, values, gone);
  }
  std::vector<Command> cmds;
  for (const std::string_view key : keys) {
    for (uint32_t shard = 0; shard < c.shards; ++shard) {
      const std::string tag = keys_.Tag(c, shard, key);
      cmds.push_back(ReadCommand({"GET", KeySpace::Value(tag, key)}, tag));
      // In the same node's pipeline, after the value: a counter deleted
      // since this client cached it has no live key (its values are gone).
      cmds.push_back(ReadCommand({"EXISTS", KeySpace::Live(tag)}, tag));
    }
  }
  std::vector<Reply> replies;
  Status s = Run(cmds, &replies, false);
  if (!s.ok()) return s;
  values->assign(keys.size() * c.shards, 0);
  *gone = false;
  for (size_t i = 0; i < values->size(); ++i) {
    s = ValueOf(c, replies[2 * i], &(*values)[i]);
    if (!s.ok()) return s;
    if (replies[2 * i + 1].kind == Reply::Kind::kInteger &&
        replies[2 * i + 1].integer == 0) {
      *gone = true;
    }
  }
  return Status::OK();
}

// The buckets of `c` a read sums, by the client's clock: those a range
// overlaps (`range`; null: all) and not past retention.
std::pair<int64_t, int64_t> RedisDb::BucketsOf(const CounterInfo& c,
                                               const TimeRange* range) const {
  const int64_t width = BucketWidthMs(c.bucket);
  int64_t from = core::FirstRetainedBucket(width, c.retention_ms,
                                           clock_->NowMillis());
  int64_t to = INT64_MAX;
  if (range != nullptr) {
    from = std::max(from, core::BucketStart(range->first, width));
    to = core::BucketStart(range->second - 1, width) + 1;
  }
  return {from, to};
}

// A bucketed counter's values: each (key, shard)'s bucket starts in the
// read's span from its bucket index, then the buckets' values, summed.
// Two pipelined rounds (one request per node each).
Status RedisDb::ReadBuckets(const CounterInfo& c,
                            const std::vector<std::string_view>& keys,
                            const TimeRange* range,
                            std::vector<int64_t>* values, bool* gone) {
  const auto [from, to] = BucketsOf(c, range);
  std::vector<Command> cmds;
  std::vector<std::string> tags;
  for (const std::string_view key : keys) {
    for (uint32_t shard = 0; shard < c.shards; ++shard) {
      tags.push_back(keys_.Tag(c, shard, key));
      const std::string& tag = tags.back();
      cmds.push_back(ReadCommand({"ZRANGEBYSCORE", KeySpace::BucketIndex(tag, key),
                           std::to_string(from), "(" + std::to_string(to)},
                          tag));
      cmds.push_back(ReadCommand({"EXISTS", KeySpace::Live(tag)}, tag));
    }
  }
  std::vector<Reply> replies;
  Status s = Run(cmds, &replies, false);
  if (!s.ok()) return s;
  *gone = false;
  std::vector<Command> gets;
  std::vector<size_t> owner;  // the (key, shard) of each GET
  std::set<std::pair<size_t, int64_t>> distinct;  // (key, bucket start)
  std::vector<size_t> per_key(keys.size(), 0);
  for (size_t i = 0; i < tags.size(); ++i) {
    const Reply& starts = replies[2 * i];
    if (starts.kind != Reply::Kind::kArray) {
      return Status::IOError("read counter " + core::Quote(c.name) + ": " +
                             starts.str);
    }
    if (replies[2 * i + 1].kind == Reply::Kind::kInteger &&
        replies[2 * i + 1].integer == 0) {
      *gone = true;
    }
    const std::string_view key = keys[i / c.shards];
    for (const Reply& start : starts.elements) {
      int64_t at = 0;
      s = ValueOf(c, start, &at);
      if (!s.ok()) return s;
      if (distinct.emplace(i / c.shards, at).second &&
          ++per_key[i / c.shards] > kMaxReadBuckets) {
        s = core::TooManyBuckets(c);
        return key.empty() ? s : s.WithContext("key " + core::Quote(key));
      }
      gets.push_back(ReadCommand({"GET", KeySpace::BucketValue(tags[i], key, at)},
                          tags[i]));
      owner.push_back(i);
    }
  }
  return SumBuckets(c, gets, owner, tags.size(), values);
}

// Sums the replies of bucket value GETs `gets` per (key, shard) `owner`.
Status RedisDb::SumBuckets(const CounterInfo& c,
                           const std::vector<Command>& gets,
                           const std::vector<size_t>& owner, size_t n,
                           std::vector<int64_t>* values) {
  std::vector<Reply> replies;
  Status s = Run(gets, &replies, false);
  if (!s.ok()) return s;
  std::vector<__int128> sums(n, 0);
  for (size_t j = 0; j < gets.size(); ++j) {
    int64_t v = 0;
    s = ValueOf(c, replies[j], &v);
    if (!s.ok()) return s;
    sums[owner[j]] += v;
  }
  values->assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (sums[i] < INT64_MIN || sums[i] > INT64_MAX) return SumBeyond(c.name);
    (*values)[i] = static_cast<int64_t>(sums[i]);
  }
  return Status::OK();
}

Status RedisDb::ReadCounter(CounterRef ref, bool keyed_read,
                            const std::vector<std::string_view>& keys,
                            CounterInfo* c, std::vector<int64_t>* values,
                            const TimeRange* range) {
  for (int attempt = 0;; ++attempt) {
    Status s = keyed_read ? FindCounter(ref.counter, c) : FindRef(ref, false, c);
    if (!s.ok()) return s;
    if (keyed_read && !c->keyed) return NotKeyed(*c, "ReadKeys");
    bool gone = false;
    if (range != nullptr) s = core::CheckBucketed(*c);
    if (s.ok()) s = ReadValues(*c, keys, range, values, &gone);
    if (!s.ok() || !gone) return s;
    // Deleted (and maybe created again) by another client since this one
    // cached it: once more by the catalog as it is now.
    Forget(c->name, c->id);
    if (attempt == 1) return core::CounterNotFound(ref.counter);
  }
}

Result<std::vector<int64_t>> RedisDb::ShardCounts(CounterRef counter,
                                                  const ReadOptions&) {
  CounterInfo c;
  std::vector<int64_t> out;
  Status s = ReadCounter(counter, false, {counter.key}, &c, &out);
  if (!s.ok()) return s;
  return out;
}

// The sum of the shards of `counter` (in `range` when given).
Result<int64_t> RedisDb::ReadSum(CounterRef counter, const TimeRange* range) {
  CounterInfo c;
  std::vector<int64_t> shards;
  Status s = ReadCounter(counter, false, {counter.key}, &c, &shards, range);
  if (!s.ok()) return s;
  const __int128 sum = SumOfShards(shards.data(), shards.size());
  if (sum < kMinDelta || sum > kMaxDelta) return SumBeyond(counter.counter);
  return static_cast<int64_t>(sum);
}

Result<int64_t> RedisDb::ReadExact(CounterRef counter, const ReadOptions&) {
  return ReadSum(counter, nullptr);
}

Result<int64_t> RedisDb::ReadRange(CounterRef counter, int64_t from_ms,
                                   int64_t to_ms, const ReadOptions&) {
  Status s = core::ValidateRange(from_ms, to_ms);
  if (!s.ok()) return s;
  const TimeRange range(from_ms, to_ms);
  return ReadSum(counter, &range);
}

// A quota's window now and the one before it, as the write path reads
// them (its one shard: a strict counter is never sharded), by the
// client's clock.
Result<QuotaState> RedisDb::ReadQuota(CounterRef counter, const ReadOptions&) {
  CounterInfo c;
  Status s = FindRef(counter, false, &c);
  if (s.ok()) s = core::CheckQuota(c);
  if (!s.ok()) return s;
  const int64_t now = clock_->NowMillis();
  const core::QuotaWindow w = core::QuotaWindowAt(c, now);
  const std::string tag = keys_.Tag(c, 0, counter.key);
  std::vector<Command> cmds = {
      ReadCommand({"GET", KeySpace::BucketValue(tag, counter.key, w.start)}, tag)};
  if (w.previous) {
    cmds.push_back(ReadCommand(
        {"GET", KeySpace::BucketValue(tag, counter.key, w.start - w.width)},
        tag));
  }
  std::vector<Reply> replies;
  s = Run(cmds, &replies, false);
  int64_t used = 0, previous = 0;
  if (s.ok()) s = ValueOf(c, replies[0], &used);
  if (s.ok() && w.previous) s = ValueOf(c, replies[1], &previous);
  if (!s.ok()) return s;
  return core::QuotaStateOf(c, w, now, used, previous);
}

Result<std::vector<int64_t>> RedisDb::ReadKeys(
    std::string_view counter, const std::vector<std::string_view>& keys,
    const ReadOptions&) {
  Status s = core::ValidateReadKeys(keys);
  if (!s.ok()) return s;
  CounterInfo c;
  std::vector<int64_t> values;
  s = ReadCounter(counter, true, keys, &c, &values);
  if (!s.ok()) return s;
  std::vector<int64_t> out(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    const __int128 sum = SumOfShards(&values[i * c.shards], c.shards);
    if (sum < kMinDelta || sum > kMaxDelta) {
      return SumBeyond(c.name).WithContext("key " + core::Quote(keys[i]));
    }
    out[i] = static_cast<int64_t>(sum);
  }
  return out;
}

Status RedisDb::AllKeys(const CounterInfo& c, std::vector<std::string>* keys) {
  std::vector<Command> cmds;
  for (uint32_t shard = 0; shard < c.shards; ++shard) {
    for (uint32_t g = 0; g < kKeyGroups; ++g) {
      const std::string tag = keys_.GroupTag(c.id, shard, g);
      cmds.push_back(
          ReadCommand({"ZRANGE", KeySpace::KeyIndex(tag), "0", "-1"}, tag));
    }
  }
  std::vector<Reply> replies;
  Status s = Run(cmds, &replies, false);
  if (!s.ok()) return s;
  keys->clear();
  for (const Reply& r : replies) {
    if (r.kind != Reply::Kind::kArray) {
      return Status::IOError("list keys of counter " + core::Quote(c.name) +
                             ": " + r.str);
    }
    for (const Reply& k : r.elements) keys->push_back(k.str);
  }
  std::sort(keys->begin(), keys->end());
  keys->erase(std::unique(keys->begin(), keys->end()), keys->end());
  return Status::OK();
}

Result<std::vector<KeyValue>> RedisDb::ListKeys(
    std::string_view counter, const ListKeysOptions& options) {
  Status s = core::ValidateListKeys(options);
  if (!s.ok()) return s;
  CounterInfo c;
  s = FindCounter(counter, &c);
  if (!s.ok()) return s;
  if (!c.keyed) return NotKeyed(c, "ListKeys");
  std::vector<std::string> all;
  s = AllKeys(c, &all);
  if (!s.ok()) return s;
  std::vector<std::string_view> page;
  for (const std::string& k : all) {
    if (page.size() == options.limit) break;
    if (k.compare(0, options.prefix.size(), options.prefix) != 0) continue;
    if (!options.start_after.empty() && k <= options.start_after) continue;
    page.push_back(k);
  }
  std::vector<KeyValue> out;
  if (page.empty()) return out;
  Result<std::vector<int64_t>> values = ReadKeys(counter, page, ReadOptions());
  if (!values.ok()) return values.status();
  for (size_t i = 0; i < page.size(); ++i) {
    out.push_back(KeyValue{std::string(page[i]), values.value()[i]});
  }
  return out;
}

Status RedisDb::DeleteKey(std::string_view counter, std::string_view key) {
  Status s = CheckWritable();
  if (!s.ok()) return s;
  CounterInfo c;
  s = FindRef(CounterRef(counter, key), false, &c);
  if (!s.ok()) return s;
  if (!c.keyed) return NotKeyed(c, "DeleteKey");
  // The key's value, markers, forwards, reservations and index entries in
  // each shard's tag of its group, each tag's part at once
  // (tally_drop_key).
  const std::string prefix = KeySpace::MarkerName(key, "");
  std::vector<Command> cmds;
  for (uint32_t shard = 0; shard < c.shards; ++shard) {
    const std::string tag = keys_.Tag(c, shard, key);
    Command drop;
    drop.slot = ClusterClient::SlotOf(tag);
    drop.idempotent = true;  // dropping twice leaves the same
    drop.args = {"FCALL",
                 "tally_drop_key",
                 "7",
                 KeySpace::MarkerIndex(tag),
                 KeySpace::KeyIndex(tag),
                 KeySpace::Value(tag, key),
                 KeySpace::ForwardIndex(tag),
                 KeySpace::HoldIndex(tag),
                 KeySpace::Holds(tag, key),
                 KeySpace::BucketIndex(tag, key),
                 prefix,
                 std::string(key),
                 tag};
    cmds.push_back(std::move(drop));
  }
  std::vector<Reply> replies;
  s = Run(cmds, &replies, true);
  if (!s.ok()) return s;
  for (const Reply& r : replies) {
    if (!r.ok()) {
      return Status::IOError("delete key " + core::Quote(key) + ": " + r.str);
    }
  }
  return Status::OK();
}

// The marker names of `c` (of one key when given) in each tag, with the
// tags: what CountMarkers and ListMarkers read.
Status RedisDb::MarkerNames(const CounterInfo& c, std::string_view key,
                            std::vector<std::pair<std::string, std::string>>*
                                names) {
  std::vector<std::string> tags;
  for (uint32_t shard = 0; shard < c.shards; ++shard) {
    if (!c.keyed || !key.empty()) {
      tags.push_back(keys_.Tag(c, shard, key));
      continue;
    }
    for (uint32_t g = 0; g < kKeyGroups; ++g) {
      tags.push_back(keys_.GroupTag(c.id, shard, g));
    }
  }
  std::vector<Command> cmds;
  const int64_t now = clock_->NowMillis();
  for (const std::string& tag : tags) {
    // Not expired by the engine's clock: kept forever (0) or expiring at
    // or after now.
    cmds.push_back(ReadCommand(
        {"ZRANGE", KeySpace::MarkerIndex(tag), "0", "-1", "WITHSCORES"}, tag));
  }
  std::vector<Reply> replies;
  Status s = Run(cmds, &replies, false);
  if (!s.ok()) return s;
  const std::string prefix =
      key.empty() ? std::string() : KeySpace::MarkerName(key, "");
  names->clear();
  for (size_t t = 0; t < tags.size(); ++t) {
    const Reply& r = replies[t];
    if (r.kind != Reply::Kind::kArray) {
      return Status::IOError("list markers of counter " + core::Quote(c.name) +
                             ": " + r.str);
    }
    ForEachUnexpired(r, now, [&](const std::string& name, int64_t) {
      if (name.compare(0, prefix.size(), prefix) == 0) {
        names->emplace_back(tags[t], name);
      }
    });
  }
  return Status::OK();
}

Result<uint64_t> RedisDb::CountMarkers(CounterRef counter) {
  CounterInfo c;
  Status s = FindRef(counter, true, &c);
  if (!s.ok()) return s;
  std::vector<std::pair<std::string, std::string>> names;
  s = MarkerNames(c, counter.key, &names);
  if (!s.ok()) return s;
  return static_cast<uint64_t>(names.size());
}

Result<MarkerInfo> RedisDb::GetMarker(CounterRef counter,
                                      std::string_view event_id) {
  Status s = core::ValidateEventId(event_id);
  if (!s.ok()) return s;
  CounterInfo c;
  s = FindRef(counter, false, &c);
  if (!s.ok()) return s;
  // Where the event went: its affinity key is not known here, so every
  // shard's tag is asked (a pinned marker may be in any).
  std::vector<Command> cmds;
  std::vector<std::string> tags;
  const std::string name = KeySpace::MarkerName(counter.key, event_id);
  for (uint32_t shard = 0; shard < c.shards; ++shard) {
    tags.push_back(keys_.Tag(c, shard, counter.key));
    cmds.push_back(ReadCommand({"GET", KeySpace::Marker(tags.back(), name)},
                               tags.back()));
  }
  std::vector<Reply> replies;
  s = Run(cmds, &replies, false);
  if (!s.ok()) return s;
  for (uint32_t shard = 0; shard < c.shards; ++shard) {
    const Reply& r = replies[shard];
    // A forward (in the event id's own shard) names where the marker is,
    // and that shard is asked too.
    if (r.kind != Reply::Kind::kString || IsForward(r.str)) continue;
    MarkerInfo info;
    s = DecodeMarker(KeySpace::Marker(tags[shard], name), r.str, &info);
    if (!s.ok()) return s;
    info.event_id = std::string(event_id);
    info.key = std::string(counter.key);
    if (core::MarkerExpired(info.expires_at_ms, clock_->NowMillis())) {
      return Status::NotFound("event " + core::Quote(event_id) +
                              "'s marker in counter " + core::Quote(c.name) +
                              " expired at " +
                              std::to_string(info.expires_at_ms) + " ms");
    }
    return info;
  }
  return Status::NotFound("event " + core::Quote(event_id) +
                          " was never counted in counter " +
                          core::Quote(c.name));
}

Result<std::vector<MarkerInfo>> RedisDb::ListMarkers(
    CounterRef counter, const ListMarkersOptions& options) {
  Status s = core::ValidateListMarkers(options);
  if (!s.ok()) return s;
  CounterInfo c;
  s = FindRef(counter, false, &c);
  if (!s.ok()) return s;
  std::vector<std::pair<std::string, std::string>> names;
  s = MarkerNames(c, counter.key, &names);
  if (!s.ok()) return s;
  const size_t skip = KeySpace::MarkerName(counter.key, "").size();
  // In event-id byte order, after start_after.
  std::sort(names.begin(), names.end(),
            [](const auto& a, const auto& b) { return a.second < b.second; });
  std::vector<MarkerInfo> out;
  const int64_t now = clock_->NowMillis();
  size_t at = 0;
  while (at < names.size() && out.size() < options.limit) {
    std::vector<Command> cmds;
    std::vector<size_t> which;
    for (; at < names.size() && cmds.size() < options.limit - out.size();
         ++at) {
      const std::string event = names[at].second.substr(skip);
      if (!options.start_after.empty() && event <= options.start_after) {
        continue;
      }
      cmds.push_back(ReadCommand(
          {"GET", KeySpace::Marker(names[at].first, names[at].second)},
          names[at].first));
      which.push_back(at);
    }
    std::vector<Reply> replies;
    s = Run(cmds, &replies, false);
    if (!s.ok()) return s;
    for (size_t j = 0; j < which.size(); ++j) {
      if (replies[j].kind != Reply::Kind::kString) continue;  // dropped
      const auto& [tag, name] = names[which[j]];
      MarkerInfo info;
      s = DecodeMarker(KeySpace::Marker(tag, name), replies[j].str, &info);
      if (!s.ok()) return s;
      if (info.created_at_ms < options.since_ms ||
          core::MarkerExpired(info.expires_at_ms, now)) {
        continue;
      }
      info.event_id = name.substr(skip);
      info.key = std::string(counter.key);
      out.push_back(std::move(info));
    }
  }
  return out;
}

}  // namespace tally::cluster
