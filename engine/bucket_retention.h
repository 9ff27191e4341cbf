// Dropping buckets past their counter's retention at compaction: the shards
// column family's compaction filter, and the table of retention rules the
// catalog keeps current for it.
//
// Ownership: the catalog and the filter factory share the RetentionRules
// (shared_ptr); the factory shares the engine clock.
// Thread safety: Replace and Find may be called from any thread; RocksDB
// calls the factory and its filters from its background threads.

#ifndef TALLY_ENGINE_BUCKET_RETENTION_H_
#define TALLY_ENGINE_BUCKET_RETENTION_H_

#include <rocksdb/compaction_filter.h>

#include <cstdint>
#include <memory>
#include <unordered_map>

#include "engine/engine_clock.h"
#include "util/mutex.h"

namespace tally::engine {

class RetentionRules {
 public:
  struct Rule {
    int64_t width_ms = 0;
    int64_t retention_ms = 0;
  };
  using Map = std::unordered_map<uint64_t, Rule>;  // by counter id

  // Installs the rules of every bucketed counter with a retention.
  void Replace(Map rules) TALLY_EXCLUDES(mu_) {
    auto next = std::make_shared<const Map>(std::move(rules));
    MutexLock lock(&mu_);
    rules_ = std::move(next);
  }
  // The rules as of now; a compaction holds one snapshot throughout.
  std::shared_ptr<const Map> Snapshot() const TALLY_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return rules_;
  }

 private:
  mutable Mutex mu_;
  std::shared_ptr<const Map> rules_ TALLY_GUARDED_BY(mu_) =
      std::make_shared<const Map>();
};

// Filters for the shards column family: each compaction reads the engine
// clock's durable mark (EngineClock::Durable, as the marker filter does) and
// the rules once, and drops every value and merge operand of a bucket past
// its counter's retention at that time (core/buckets.h, BucketExpired).
// Keys of counters without a rule, and plain shard keys, are kept.
inline constexpr char kBucketRetentionFactoryName[] =
    "tally.BucketRetentionFilterFactory";  // as the OPTIONS file records it
std::shared_ptr<rocksdb::CompactionFilterFactory>
NewBucketRetentionFilterFactory(std::shared_ptr<const EngineClock> clock,
                                std::shared_ptr<RetentionRules> rules);

}  // namespace tally::engine

#endif  // TALLY_ENGINE_BUCKET_RETENTION_H_
