// RedisDb's statistics: the engine figures a cluster client keeps (its
// own calls' outcomes since it opened), and GetDbStats, those figures with
// each keyed counter's keys as of its roll-up. The RocksDB figures of
// DbStats (families, block cache, write throttling, background errors)
// have no counterpart on a cluster and stay empty (docs/cluster.md).

#include <unistd.h>

#include <algorithm>
#include <optional>
#include <string>

#include "cluster/redis_db.h"

namespace tally::cluster {

EngineStats RedisDb::GetStats() const {
  EngineStats s;
  s.applied = applied_.load(std::memory_order_relaxed);
  s.duplicates = duplicates_.load(std::memory_order_relaxed);
  s.conflicts = conflicts_.load(std::memory_order_relaxed);
  s.outside_window = outside_window_.load(std::memory_order_relaxed);
  s.refused = refused_.load(std::memory_order_relaxed);
  s.rejected = rejected_.load(std::memory_order_relaxed);
  // This client's own figures, taken now (a cluster's other clients count
  // theirs).
  s.origin.source = StatsSource::kThisProcess;
  s.origin.writer_pid = static_cast<uint64_t>(getpid());
  s.origin.as_of_ms = clock_->NowMillis();
  s.origin.live = true;
  return s;
}

Result<DbStats> RedisDb::GetDbStats() {
  DbStats out;
  out.engine = GetStats();
  Result<std::vector<CounterInfo>> counters = ListCounters();
  if (!counters.ok()) return counters.status();
  const int64_t now = clock_->NowMillis();
  for (const CounterInfo& c : counters.value()) {
    if (!c.keyed) continue;
    KeyedCounterStats k;
    k.name = c.name;
    std::optional<std::string> raw;
    TopKeysResult top;
    Status s = ReadRollup(c, &raw, &top);
    if (!s.ok()) return s;
    if (raw) {
      k.rolled_up = true;
      k.keys = top.key_count;
      k.as_of_ms = top.as_of_ms;
      k.lag_ms = std::max<int64_t>(0, now - top.as_of_ms);
    }
    out.keyed_counters.push_back(std::move(k));
  }
  return out;
}

}  // namespace tally::cluster
