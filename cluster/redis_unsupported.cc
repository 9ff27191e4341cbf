// What RedisDb does not offer, and why (docs/cluster.md has the table):
// calls that need the database's local files answer NotSupported by
// construction; features not built on the cluster yet answer NotSupported
// naming themselves. Also the engine statistics a cluster client keeps.

#include <unistd.h>

#include "cluster/redis_db.h"
#include "core/validate.h"

namespace tally::cluster {
namespace {

constexpr std::string_view kNoFiles =
    "a cluster's data lives in its nodes, not in local files; back it up with "
    "its nodes' own persistence (AOF or RDB files, docs/cluster.md)";

}  // namespace

Status RedisDb::Verify(VerifyReport*, const ProgressFn&) {
  return NotBuilt("Verify");
}
Status RedisDb::Compact(const ProgressFn&) {
  return NeedsFiles("Compact",
                    "there are no local files to compact; Redis frees a "
                    "deleted or expired key itself");
}
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
Result<DbStats> RedisDb::GetDbStats() { return NotBuilt("GetDbStats"); }
// A cluster's shard is one INCRBY'd integer: a read folds nothing, so the
// answer for any counter is 0 (NotFound for a missing one).
Result<uint64_t> RedisDb::PendingOperands(std::string_view counter) {
  CounterInfo c;
  Status s = FindCounter(counter, &c);
  if (!s.ok()) return s;
  return uint64_t{0};
}
Status RedisDb::Checkpoint(const std::string&) {
  return NeedsFiles("Checkpoint", kNoFiles);
}
Result<BackupInfo> RedisDb::CreateBackup(const std::string&,
                                         const ProgressFn&) {
  return NeedsFiles("CreateBackup", kNoFiles);
}
Status RedisDb::ImportCounter(const CounterImport&) {
  return NotBuilt("ImportCounter");
}
Status RedisDb::ImportOutbox(const std::vector<OutboxEntry>&) {
  return NotBuilt("ImportOutbox");
}
Result<std::vector<OutboxEntry>> RedisDb::ReadOutbox(uint64_t, size_t) {
  return NotBuilt("ReadOutbox");
}
Status RedisDb::AckOutbox(uint64_t) { return NotBuilt("AckOutbox"); }
Result<OutboxStatus> RedisDb::GetOutboxStatus() {
  return NotBuilt("GetOutboxStatus");
}
Result<std::string> RedisDb::DatabaseId() { return NotBuilt("DatabaseId"); }

}  // namespace tally::cluster
