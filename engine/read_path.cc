// The read path: exact sums, shard histograms and marker counts. Every read
// of a counter sees one consistent view (one Get for a single-shard
// counter, one MultiGet up to kMultiGetMaxShards shards, else one
// iterator), so a multi-shard write is seen whole or not at all. A read of
// a bucketed counter scans at most kMaxReadBuckets buckets and refuses
// beyond (docs/design.md, "Time buckets").

#include <rocksdb/iterator.h>

#include <algorithm>

#include "engine/rules.h"
#include "engine/coding.h"
#include "engine/counter_range.h"
#include "engine/db_impl.h"
#include "engine/marker_expiry.h"
#include "engine/read_checks.h"
#include "schema/records.h"
#include "tally/limits.h"
#include "util/rocks_status.h"

namespace tally::engine {
namespace {

Status BadValue(const CounterInfo& c, std::string_view key, size_t size) {
  return Status::Corruption("shard value at key " + HexKey(key) +
                            " of counter " + Quote(c.name) + " is malformed (" +
                            std::to_string(size) + " bytes, expected 8 or 16)");
}

Status Overflowed(const CounterInfo& c, uint32_t shard) {
  return Status::OutOfRange("counter " + Quote(c.name) + " shard " +
                            std::to_string(shard) +
                            " overflowed; its value is unknown");
}

Status SumBeyond(const CounterInfo& c) {
  // Also for a sum of exactly INT64_MIN, outside the value range.
  return Status::OutOfRange("counter " + Quote(c.name) +
                            ": the sum of its shards is beyond int64");
}

}  // namespace

Status NarrowSum(const CounterInfo& c, const ExactSum& sum, int64_t* out) {
  // The one range of a value, in every path (docs/design.md, "Overflow"):
  // kMinDelta..kMaxDelta, so every value can be negated, exported and
  // imported; INT64_MIN is the overflowed state of a shard, never a value.
  if (!sum.Fits() || sum.value() < kMinDelta || sum.value() > kMaxDelta) {
    return SumBeyond(c);
  }
  *out = static_cast<int64_t>(sum.value());
  return Status::OK();
}

namespace {

// Up to this many shards an exact read is one MultiGet; beyond, one prefix
// scan. A scan is faster on a cold counter with many shards but must step
// over every hidden version a hot counter has in the memtable, where
// MultiGet stops at each key's newest; hot many-shard counters are
// ReadCached's job. The figures behind the choice: docs/benchmarks.md,
// "Reads: exact and cached, cold and during a write burst".
constexpr uint32_t kMultiGetMaxShards = 64;

}  // namespace

Status CheckShardValue(const CounterInfo& c, std::string_view key,
                       std::string_view value, uint32_t shard, ShardSum* v) {
  switch (DecodeShardValue(value, v)) {
    case ShardValue::kMalformed:
      return BadValue(c, key, value.size());
    case ShardValue::kOverflowed:
      return Overflowed(c, shard);
    case ShardValue::kExact:
      break;
  }
  return Status::OK();
}

Status DbImpl::ScanBuckets(
    const CounterInfo& c, std::string_view counter_key,
    const rocksdb::ReadOptions& ro, int64_t from_bucket, int64_t to_bucket,
    const std::function<void(int64_t, uint32_t, ShardSum)>& visit) {
  const int64_t width = BucketWidthMs(c.bucket);
  const int64_t now = clock_->NowMillis();
  const KeyPrefix prefix(c.id, counter_key);
  CounterRange range(prefix, ro);
  // Buckets past retention that compaction has not dropped yet are not
  // stepped over: the scan starts at the first retained one.
  char start[kMaxShardKeyBytes];
  const size_t start_size = EncodeShardKeyOf(
      prefix,
      std::max(from_bucket, FirstRetainedBucket(width, c.retention_ms, now)), 0,
      start);
  size_t buckets = 0;  // distinct buckets visited, at most kMaxReadBuckets
  int64_t last_bucket = kNoBucket;
  std::unique_ptr<rocksdb::Iterator> it = range.NewIterator(db_.get(), shards_);
  for (it->Seek(rocksdb::Slice(start, start_size)); it->Valid(); it->Next()) {
    const std::string_view key = it->key().ToStringView();
    ShardKeyParts parts;
    if (!DecodeAnyShardKey(key, &parts) || parts.counter_id != c.id ||
        parts.key != counter_key || parts.bucket == kNoBucket ||
        parts.shard >= c.shards || parts.bucket % width != 0) {
      return Status::Corruption("unexpected shard key " + HexKey(key) +
                                " under bucketed counter " + Quote(c.name));
    }
    const int64_t bucket = parts.bucket;
    const uint32_t shard = parts.shard;
    if (bucket >= to_bucket) break;
    if (BucketExpired(bucket, width, c.retention_ms, now)) continue;
    if (bucket != last_bucket) {
      if (buckets == kMaxReadBuckets) return TooManyBuckets(c);
      ++buckets;
      last_bucket = bucket;
    }
    ShardSum v;
    Status s = CheckShardValue(c, key, it->value().ToStringView(), shard, &v);
    if (!s.ok()) return s;
    visit(bucket, shard, v);
  }
  return FromRocks(it->status(), "scan buckets");
}

Status DbImpl::ScanShards(
    const CounterInfo& c, std::string_view counter_key,
    const rocksdb::ReadOptions& ro,
    const std::function<void(uint32_t, ShardSum)>& visit) {
  assert(counter_key.empty() != c.keyed);
  if (c.bucket != BucketWidth::kNone) {
    // Every retained bucket's shards, each added to its shard index.
    return ScanBuckets(
        c, counter_key, ro, 0, std::numeric_limits<int64_t>::max(),
        [&](int64_t, uint32_t shard, ShardSum v) { visit(shard, v); });
  }
  const KeyPrefix prefix(c.id, counter_key);
  auto check = [&](std::string_view key, std::string_view value,
                   uint32_t shard) -> Status {
    ShardSum v;
    Status s = CheckShardValue(c, key, value, shard, &v);
    if (s.ok()) visit(shard, v);
    return s;
  };

  if (c.shards == 1) {
    // A plain Get beats an iterator for one key (docs/design.md, read path).
    char key[kMaxShardKeyBytes];
    const size_t size = EncodeShardKeyOf(prefix, kNoBucket, 0, key);
    rocksdb::PinnableSlice value;
    rocksdb::Status rs =
        db_->Get(ro, shards_, rocksdb::Slice(key, size), &value);
    if (rs.IsNotFound()) return Status::OK();
    if (!rs.ok()) return FromRocks(rs, "read shard");
    return check(std::string_view(key, size), value.ToStringView(), 0);
  }

  if (c.shards <= kMultiGetMaxShards) {
    // One MultiGet (one implicit snapshot, so still one consistent view):
    // each key stops at its newest value, where an iterator must also step
    // over every older version a hot shard has in the memtable.
    std::vector<char> keys(size_t{c.shards} * kMaxShardKeyBytes);
    std::vector<rocksdb::Slice> slices(c.shards);
    for (uint32_t i = 0; i < c.shards; ++i) {
      char* k = keys.data() + size_t{i} * kMaxShardKeyBytes;
      slices[i] = rocksdb::Slice(k, EncodeShardKeyOf(prefix, kNoBucket, i, k));
    }
    std::vector<rocksdb::PinnableSlice> values(c.shards);
    std::vector<rocksdb::Status> statuses(c.shards);
    db_->MultiGet(ro, shards_, c.shards, slices.data(), values.data(),
                  statuses.data(), /*sorted_input=*/true);
    for (uint32_t i = 0; i < c.shards; ++i) {
      if (statuses[i].IsNotFound()) continue;
      if (!statuses[i].ok()) return FromRocks(statuses[i], "read shards");
      Status s = check(slices[i].ToStringView(), values[i].ToStringView(), i);
      if (!s.ok()) return s;
    }
    return Status::OK();
  }

  CounterRange range(prefix, ro);
  std::unique_ptr<rocksdb::Iterator> it = range.NewIterator(db_.get(), shards_);
  for (it->Seek(range.begin()); it->Valid(); it->Next()) {
    const std::string_view key = it->key().ToStringView();
    ShardKeyParts parts;
    if (!DecodeAnyShardKey(key, &parts) || parts.counter_id != c.id ||
        parts.key != counter_key || parts.bucket != kNoBucket ||
        parts.shard >= c.shards) {
      return Status::Corruption("unexpected shard key " + HexKey(key) +
                                " under counter " + Quote(c.name));
    }
    Status s = check(key, it->value().ToStringView(), parts.shard);
    if (!s.ok()) return s;
  }
  return FromRocks(it->status(), "scan shards");
}

Status DbImpl::SumShards(const CounterInfo& c, std::string_view counter_key,
                         const rocksdb::ReadOptions& ro, int64_t* out) {
  ExactSum sum;
  Status s = ScanShards(c, counter_key, ro,
                        [&](uint32_t, ShardSum v) { sum.Add(v); });
  if (!s.ok()) return s;
  return NarrowSum(c, sum, out);
}

Result<int64_t> DbImpl::ReadRange(CounterRef counter, int64_t from_ms,
                                  int64_t to_ms, const ReadOptions& options) {
  Status reads = CheckReads(kReadValues, "ReadRange");
  if (!reads.ok()) return reads;
  Status s = core::ValidateRange(from_ms, to_ms);
  if (!s.ok()) return s;
  Catalog::Reader catalog(catalog_.get());
  const Catalog::Entry* c = nullptr;
  s = FindCounterRef(catalog, counter, KeyUse::kOneKey, &c);
  if (!s.ok()) return s;
  s = core::CheckBucketed(*c);
  if (!s.ok()) return s;
  const int64_t width = BucketWidthMs(c->bucket);
  rocksdb::ReadOptions ro;
  ro.verify_checksums = options.verify_checksums;
  // The buckets overlapping [from, to): from the one holding from_ms to the
  // one holding to_ms - 1.
  ExactSum sum;
  s = ScanBuckets(*c, counter.key, ro, BucketStart(from_ms, width),
                  BucketStart(to_ms - 1, width) + 1,
                  [&](int64_t, uint32_t, ShardSum v) { sum.Add(v); });
  if (!s.ok()) return s;
  int64_t out = 0;
  s = NarrowSum(*c, sum, &out);
  if (!s.ok()) return s;
  return out;
}

Result<int64_t> DbImpl::ReadExact(CounterRef counter,
                                  const ReadOptions& options) {
  Status reads = CheckReads(kReadValues, "ReadExact");
  if (!reads.ok()) return reads;
  Catalog::Reader catalog(catalog_.get());
  const Catalog::Entry* c = nullptr;
  Status s = FindCounterRef(catalog, counter, KeyUse::kOneKey, &c);
  if (!s.ok()) return s;
  rocksdb::ReadOptions ro;
  ro.verify_checksums = options.verify_checksums;
  int64_t sum = 0;
  s = SumShards(*c, counter.key, ro, &sum);
  if (!s.ok()) return s;
  return sum;
}

Result<std::vector<int64_t>> DbImpl::ShardCounts(CounterRef counter,
                                                 const ReadOptions& options) {
  Status reads = CheckReads(kReadValues, "ShardCounts");
  if (!reads.ok()) return reads;
  Catalog::Reader catalog(catalog_.get());
  const Catalog::Entry* c = nullptr;
  Status s = FindCounterRef(catalog, counter, KeyUse::kOneKey, &c);
  if (!s.ok()) return s;
  std::vector<ExactSum> sums(c->shards);
  rocksdb::ReadOptions ro;
  ro.verify_checksums = options.verify_checksums;
  // A bucketed counter's shard holds one value per bucket: add them up.
  s = ScanShards(*c, counter.key, ro,
                 [&](uint32_t shard, ShardSum v) { sums[shard].Add(v); });
  if (!s.ok()) return s;
  std::vector<int64_t> counts(c->shards, 0);
  for (uint32_t i = 0; i < c->shards; ++i) {
    s = NarrowSum(*c, sums[i], &counts[i]);
    if (!s.ok()) return s;
  }
  return counts;
}

Result<uint64_t> DbImpl::CountMarkers(CounterRef counter) {
  Status reads = CheckReads(kReadMarkers, "CountMarkers");
  if (!reads.ok()) return reads;
  Catalog::Reader catalog(catalog_.get());
  const Catalog::Entry* c = nullptr;
  Status found = FindCounterRef(catalog, counter, KeyUse::kKeyOrWhole, &c);
  if (!found.ok()) return found;
  CounterRange range(KeyPrefix(c->id, counter.key));
  std::unique_ptr<rocksdb::Iterator> it = range.NewIterator(db_.get(), events_);
  // Without a dedupe window every key counts; with one, expired markers
  // compaction has not dropped yet do not.
  const bool windowed = c->dedupe_window_ms != 0;
  const int64_t now = clock_->NowMillis();
  uint64_t n = 0;
  for (it->Seek(range.begin()); it->Valid(); it->Next()) {
    if (windowed) {
      int64_t expires_at;
      Status s =
          schema::DecodeMarkerExpiry(it->value().ToStringView(), &expires_at);
      if (!s.ok()) {
        return Status::Corruption("marker " + HexKey(it->key().ToStringView()) +
                                  ": " + s.message());
      }
      if (MarkerExpired(expires_at, now)) continue;
    }
    ++n;
  }
  Status s = FromRocks(it->status(), "count markers");
  if (!s.ok()) return s;
  return n;
}

}  // namespace tally::engine
