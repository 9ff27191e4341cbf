// RedisDb's roll-ups: ReadCached, TopKeys and RollupNow (docs/cluster.md,
// "Roll-ups"). A roll-up is an exact read of the whole counter (a keyed
// counter's every key, from its key indexes, with its top kMaxTopKeys
// keys) stored as one record beside shard 0's value, so that ReadCached
// and TopKeys are one GET. Without a background thread (many clients
// would each run one), a counter is rolled up by RollupNow, by the first
// cached read of it, and by a cached read that finds its roll-up older
// than Options::rollup_interval_ms (0: never).

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "cluster/guarded_call.h"
#include "cluster/records.h"
#include "cluster/redis_db.h"
#include "cluster/stale_rounds.h"
#include "core/top_keys.h"
#include "core/validate.h"
#include "tally/limits.h"

namespace tally::cluster {
namespace {

// Keys a roll-up reads per round (one pipelined request per node).
constexpr size_t kRollupPage = 1000;

Status Deleted(const CounterInfo& c) {
  return Status::NotFound("counter " + core::Quote(c.name) +
                          " was deleted while it was read");
}

}  // namespace

std::string RedisDb::RollupTagOf(const CounterInfo& c) const {
  return c.keyed ? keys_.GroupTag(c.id, 0, 0) : keys_.NamedTag(c.id, 0);
}

// The whole counter now: its total and (keyed) its top `keep` keys.
Status RedisDb::ScanCounter(const CounterInfo& c, size_t keep,
                            TopKeysResult* out) {
  out->as_of_ms = clock_->NowMillis();
  std::vector<std::string> keys;
  if (c.keyed) {
    Status s = AllKeys(c, &keys);
    if (!s.ok()) return s;
  } else {
    keys.emplace_back();
  }
  core::TopKeeper top(keep);
  __int128 total = 0;
  for (size_t at = 0; at < keys.size(); at += kRollupPage) {
    const std::vector<std::string_view> page(
        keys.begin() + at, keys.begin() + std::min(keys.size(), at + kRollupPage));
    std::vector<int64_t> values;
    bool gone = false;
    Status s = ReadValues(c, page, nullptr, &values, &gone);
    if (!s.ok()) return s;
    if (gone) return Deleted(c);
    for (size_t i = 0; i < page.size(); ++i) {
      const __int128 sum = SumOfShards(&values[i * c.shards], c.shards);
      if (sum < kMinDelta || sum > kMaxDelta) {
        if (!c.keyed) break;  // a named counter's: refused below
        if (out->out_of_range_keys++ == 0) {
          out->first_out_of_range_key = std::string(page[i]);
        }
        continue;
      }
      total += sum;
      if (c.keyed) top.Offer(page[i], static_cast<int64_t>(sum));
    }
  }
  if (total < kMinDelta || total > kMaxDelta ||
      (!c.keyed && out->out_of_range_keys != 0)) {
    return SumBeyond(c.name);
  }
  out->total = static_cast<int64_t>(total);
  out->key_count = c.keyed ? keys.size() : 0;
  out->keys = top.Take();
  return Status::OK();
}

// The stored roll-up of `c`, if any.
Status RedisDb::ReadRollup(const CounterInfo& c,
                           std::optional<std::string>* raw,
                           TopKeysResult* top) {
  const std::string key = KeySpace::Rollup(RollupTagOf(c));
  std::vector<Reply> r;
  Status s = Run({ReadCommand({"GET", key}, key)}, &r, false);
  if (!s.ok()) return s;
  raw->reset();
  if (r[0].kind == Reply::Kind::kNil) return Status::OK();
  if (r[0].kind != Reply::Kind::kString) {
    return Status::IOError("read " + core::Quote(key) + ": " + r[0].str);
  }
  *raw = r[0].str;
  return DecodeRollup(key, r[0].str, top);
}

// Rolls `c` up now: stored unless a roll-up as recent is there already
// (another client's), guarded on what was read.
Status RedisDb::RollUp(const CounterInfo& c) {
  TopKeysResult now;
  Status s = ScanCounter(c, kMaxTopKeys, &now);
  if (!s.ok()) return s;
  const std::string tag = RollupTagOf(c);
  const std::string key = KeySpace::Rollup(tag);
  for (int round = 0; round <= kMaxStaleRounds; ++round) {
    if (round > 0) WaitBeforeRound(round);
    std::optional<std::string> raw;
    TopKeysResult stored;
    s = ReadRollup(c, &raw, &stored);
    if (!s.ok() && !s.IsCorruption()) return s;  // a bad one is replaced
    if (s.ok() && raw && stored.as_of_ms >= now.as_of_ms) break;
    GuardedCall g(tag);
    g.RequireLive(KeySpace::Live(tag));
    g.Guard(key, raw);
    g.Set(key, EncodeRollup(now), 0);
    GuardedCall::Outcome out = GuardedCall::Outcome::kStale;
    s = RunGuarded(g, core::Quote(key), &out);
    if (!s.ok()) return s;
    if (out == GuardedCall::Outcome::kGone) return Deleted(c);
    if (out == GuardedCall::Outcome::kWritten) break;
  }
  MutexLock l(&mu_);
  rolled_up_[c.id] = RollupSeen{now.as_of_ms, applied_of_[c.id]};
  any_rollups_.store(true, std::memory_order_relaxed);
  return Status::OK();
}

Status RedisDb::RollupNow(std::string_view counter) {
  Status s = CheckWritable();
  if (!s.ok()) return s;
  std::vector<CounterInfo> all;
  if (counter.empty()) {
    Result<std::vector<CounterInfo>> listed = ListCounters();
    if (!listed.ok()) return listed.status();
    all = std::move(listed).value();
  } else {
    all.emplace_back();
    s = FindCounter(counter, &all.back());
    if (!s.ok()) return s;
  }
  for (const CounterInfo& c : all) {
    s = RollUp(c);
    // A counter deleted since it was listed has nothing to roll up.
    if (!s.ok() && !(counter.empty() && s.IsNotFound())) return s;
  }
  return Status::OK();
}

// The roll-up a cached read answers from: the stored one, made first when
// there is none (or, with Options::rollup_interval_ms, when it is older).
Status RedisDb::CachedRollup(const CounterInfo& c, TopKeysResult* top) {
  std::optional<std::string> raw;
  Status s = ReadRollup(c, &raw, top);
  if (!s.ok()) return s;
  const int64_t now = clock_->NowMillis();
  const bool stale = raw && options_.rollup_interval_ms != 0 &&
                     now - top->as_of_ms >= options_.rollup_interval_ms;
  if (raw && (!stale || options_.read_only)) return Status::OK();
  if (options_.read_only) return core::NoRollupYet(c);
  s = RollUp(c);
  if (s.ok()) s = ReadRollup(c, &raw, top);
  if (s.ok() && !raw) s = Deleted(c);
  return s;
}

Result<CachedValue> RedisDb::ReadCached(std::string_view counter) {
  CounterInfo c;
  Status s = FindCounter(counter, &c);
  TopKeysResult top;
  if (s.ok()) s = CachedRollup(c, &top);
  if (s.ok() && top.out_of_range_keys != 0) s = core::OutOfRangeKeys(c, top);
  if (!s.ok()) return s;
  CachedValue out;
  out.value = top.total;
  out.as_of_ms = top.as_of_ms;
  out.lag_ms = std::max<int64_t>(0, clock_->NowMillis() - top.as_of_ms);
  MutexLock l(&mu_);
  auto seen = rolled_up_.find(c.id);
  if (seen != rolled_up_.end() && seen->second.as_of_ms == top.as_of_ms) {
    // This process's roll-up: it counted what it applied since.
    out.lag_increments_known = true;
    out.lag_increments = applied_of_[c.id] - seen->second.applied;
  }
  return out;
}

Result<TopKeysResult> RedisDb::TopKeys(std::string_view counter, size_t n,
                                       const TopKeysOptions& options) {
  Status s = core::ValidateTopKeys(n);
  CounterInfo c;
  if (s.ok()) s = FindCounter(counter, &c);
  if (!s.ok()) return s;
  if (!c.keyed) return NotKeyed(c, "TopKeys");
  TopKeysResult out;
  s = options.exact ? ScanCounter(c, n, &out) : CachedRollup(c, &out);
  if (!s.ok()) return s;
  out.exact = options.exact;
  if (out.keys.size() > n) out.keys.resize(n);
  out.lag_ms = options.exact
                   ? 0
                   : std::max<int64_t>(0, clock_->NowMillis() - out.as_of_ms);
  return out;
}

// Counts `n` increments applied to counter `id` by this process, for the
// lag of the roll-ups it made (nothing to do until it made one).
void RedisDb::NoteApplied(uint64_t id, uint64_t n) {
  if (n == 0 || !any_rollups_.load(std::memory_order_relaxed)) return;
  MutexLock l(&mu_);
  applied_of_[id] += n;
}

}  // namespace tally::cluster
