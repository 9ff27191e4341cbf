// The read path: exact sums, shard histograms and marker counts. Every read
// of a counter sees one consistent view (one Get for a single-shard
// counter, one MultiGet up to kMultiGetMaxShards shards, else one
// iterator), so a multi-shard write is seen whole or not at all. A read of
// a bucketed counter scans at most kMaxReadBuckets buckets and refuses
// beyond (docs/design.md, "Time buckets").

#include <rocksdb/iterator.h>

#include <algorithm>

#include "engine/buckets.h"
#include "engine/coding.h"
#include "engine/counter_range.h"
#include "engine/db_impl.h"
#include "engine/marker_expiry.h"
#include "engine/validate.h"
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
  return Status::OutOfRange("counter " + Quote(c.name) +
                            ": the sum of its shards is beyond int64");
}

Status NarrowSum(const CounterInfo& c, const ExactSum& sum, int64_t* out) {
  if (!sum.Fits() || sum.value() < std::numeric_limits<int64_t>::min() ||
      sum.value() > std::numeric_limits<int64_t>::max()) {
    return SumBeyond(c);
  }
  *out = static_cast<int64_t>(sum.value());
  return Status::OK();
}

Status TooManyBuckets(const CounterInfo& c) {
  return Status::InvalidArgument(
      "counter " + Quote(c.name) + ": the read spans more than " +
      std::to_string(kMaxReadBuckets) +
      " time buckets, the most one read scans (kMaxReadBuckets); read "
      "shorter ranges with ReadRange, or keep fewer buckets with a retention");
}

// Up to this many shards an exact read is one MultiGet; beyond, one prefix
// scan. A scan is faster on a cold counter with many shards but must step
// over every hidden version a hot counter has in the memtable, where
// MultiGet stops at each key's newest; hot many-shard counters are
// ReadCached's job. The figures behind the choice: docs/benchmarks.md,
// "Reads: exact and cached, cold and during a write burst".
constexpr uint32_t kMultiGetMaxShards = 64;

// A stored shard value, decoded and checked.
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

}  // namespace

Status DbImpl::ScanBuckets(
    const CounterInfo& c, const rocksdb::ReadOptions& ro, int64_t from_bucket,
    int64_t to_bucket,
    const std::function<void(int64_t, uint32_t, ShardSum)>& visit) {
  const int64_t width = BucketWidthMs(c.bucket);
  const int64_t now = clock_->NowMillis();
  CounterRange range(c.id, ro);
  // Buckets past retention that compaction has not dropped yet are not
  // stepped over: the scan starts at the first retained one.
  char start[kBucketShardKeyBytes];
  EncodeBucketShardKey(
      c.id,
      std::max(from_bucket, FirstRetainedBucket(width, c.retention_ms, now)), 0,
      start);
  size_t buckets = 0;  // distinct buckets visited, at most kMaxReadBuckets
  int64_t last_bucket = kNoBucket;
  std::unique_ptr<rocksdb::Iterator> it = range.NewIterator(db_.get(), shards_);
  for (it->Seek(rocksdb::Slice(start, sizeof start)); it->Valid(); it->Next()) {
    const std::string_view key = it->key().ToStringView();
    uint64_t id;
    int64_t bucket;
    uint32_t shard;
    if (!DecodeBucketShardKey(key, &id, &bucket, &shard) || id != c.id ||
        shard >= c.shards || bucket % width != 0) {
      return Status::Corruption("unexpected shard key " + HexKey(key) +
                                " under bucketed counter " + Quote(c.name));
    }
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
    const CounterInfo& c, const rocksdb::ReadOptions& ro,
    const std::function<void(uint32_t, ShardSum)>& visit) {
  if (c.bucket != BucketWidth::kNone) {
    // Every retained bucket's shards, each added to its shard index.
    return ScanBuckets(
        c, ro, 0, std::numeric_limits<int64_t>::max(),
        [&](int64_t, uint32_t shard, ShardSum v) { visit(shard, v); });
  }
  auto check = [&](std::string_view key, std::string_view value,
                   uint32_t shard) -> Status {
    ShardSum v;
    Status s = CheckShardValue(c, key, value, shard, &v);
    if (s.ok()) visit(shard, v);
    return s;
  };

  if (c.shards == 1) {
    // A plain Get beats an iterator for one key (docs/design.md, read path).
    char key[kShardKeyBytes];
    EncodeShardKey(c.id, 0, key);
    rocksdb::PinnableSlice value;
    rocksdb::Status rs =
        db_->Get(ro, shards_, rocksdb::Slice(key, sizeof key), &value);
    if (rs.IsNotFound()) return Status::OK();
    if (!rs.ok()) return FromRocks(rs, "read shard");
    return check(std::string_view(key, sizeof key), value.ToStringView(), 0);
  }

  if (c.shards <= kMultiGetMaxShards) {
    // One MultiGet (one implicit snapshot, so still one consistent view):
    // each key stops at its newest value, where an iterator must also step
    // over every older version a hot shard has in the memtable.
    std::vector<char> keys(size_t{c.shards} * kShardKeyBytes);
    std::vector<rocksdb::Slice> slices(c.shards);
    for (uint32_t i = 0; i < c.shards; ++i) {
      char* k = keys.data() + size_t{i} * kShardKeyBytes;
      EncodeShardKey(c.id, i, k);
      slices[i] = rocksdb::Slice(k, kShardKeyBytes);
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

  CounterRange range(c.id, ro);
  std::unique_ptr<rocksdb::Iterator> it = range.NewIterator(db_.get(), shards_);
  for (it->Seek(range.begin()); it->Valid(); it->Next()) {
    const std::string_view key = it->key().ToStringView();
    uint64_t id;
    uint32_t shard;
    if (!DecodeShardKey(key, &id, &shard) || id != c.id || shard >= c.shards) {
      return Status::Corruption("unexpected shard key " + HexKey(key) +
                                " under counter " + Quote(c.name));
    }
    Status s = check(key, it->value().ToStringView(), shard);
    if (!s.ok()) return s;
  }
  return FromRocks(it->status(), "scan shards");
}

Status DbImpl::SumShards(const CounterInfo& c, const rocksdb::ReadOptions& ro,
                         int64_t* out) {
  ExactSum sum;
  Status s = ScanShards(c, ro, [&](uint32_t, ShardSum v) { sum.Add(v); });
  if (!s.ok()) return s;
  return NarrowSum(c, sum, out);
}

Result<int64_t> DbImpl::ReadRange(std::string_view counter, int64_t from_ms,
                                  int64_t to_ms, const ReadOptions& options) {
  Status reads = CheckReads(kReadValues, "ReadRange");
  if (!reads.ok()) return reads;
  Status s = ValidateEventTime(from_ms);
  if (s.ok()) s = ValidateEventTime(to_ms);
  if (s.ok() && (from_ms == kEventTimeNow || to_ms == kEventTimeNow)) {
    s = Status::InvalidArgument("a range read needs both ends");
  }
  if (s.ok() && from_ms >= to_ms) {
    s = Status::InvalidArgument("range from " + std::to_string(from_ms) +
                                " ms to " + std::to_string(to_ms) +
                                " ms is empty (from must be before to)");
  }
  if (!s.ok()) return s;
  Catalog::Reader catalog(catalog_.get());
  const CounterInfo* c = catalog.Find(counter);
  if (c == nullptr) return CounterNotFound(counter);
  const int64_t width = BucketWidthMs(c->bucket);
  if (width == 0) {
    return Status::InvalidArgument("counter " + Quote(c->name) +
                                   " has no time buckets; read it whole");
  }
  rocksdb::ReadOptions ro;
  ro.verify_checksums = options.verify_checksums;
  // The buckets overlapping [from, to): from the one holding from_ms to the
  // one holding to_ms - 1.
  ExactSum sum;
  s = ScanBuckets(*c, ro, BucketStart(from_ms, width),
                  BucketStart(to_ms - 1, width) + 1,
                  [&](int64_t, uint32_t, ShardSum v) { sum.Add(v); });
  if (!s.ok()) return s;
  int64_t out = 0;
  s = NarrowSum(*c, sum, &out);
  if (!s.ok()) return s;
  return out;
}

Result<int64_t> DbImpl::ReadExact(std::string_view counter,
                                  const ReadOptions& options) {
  Status reads = CheckReads(kReadValues, "ReadExact");
  if (!reads.ok()) return reads;
  Catalog::Reader catalog(catalog_.get());
  const CounterInfo* c = catalog.Find(counter);
  if (c == nullptr) return CounterNotFound(counter);
  rocksdb::ReadOptions ro;
  ro.verify_checksums = options.verify_checksums;
  int64_t sum = 0;
  Status s = SumShards(*c, ro, &sum);
  if (!s.ok()) return s;
  return sum;
}

Result<std::vector<int64_t>> DbImpl::ShardCounts(std::string_view counter,
                                                 const ReadOptions& options) {
  Status reads = CheckReads(kReadValues, "ShardCounts");
  if (!reads.ok()) return reads;
  Catalog::Reader catalog(catalog_.get());
  const CounterInfo* c = catalog.Find(counter);
  if (c == nullptr) return CounterNotFound(counter);
  std::vector<ExactSum> sums(c->shards);
  rocksdb::ReadOptions ro;
  ro.verify_checksums = options.verify_checksums;
  // A bucketed counter's shard holds one value per bucket: add them up.
  Status s = ScanShards(
      *c, ro, [&](uint32_t shard, ShardSum v) { sums[shard].Add(v); });
  if (!s.ok()) return s;
  std::vector<int64_t> counts(c->shards, 0);
  for (uint32_t i = 0; i < c->shards; ++i) {
    s = NarrowSum(*c, sums[i], &counts[i]);
    if (!s.ok()) return s;
  }
  return counts;
}

Result<uint64_t> DbImpl::CountMarkers(std::string_view counter) {
  Status reads = CheckReads(kReadMarkers, "CountMarkers");
  if (!reads.ok()) return reads;
  Catalog::Reader catalog(catalog_.get());
  const CounterInfo* c = catalog.Find(counter);
  if (c == nullptr) return CounterNotFound(counter);
  CounterRange range(c->id);
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
