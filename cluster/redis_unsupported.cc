// What RedisDb does not offer, and why (docs/cluster.md has the table):
// calls that need the database's local files answer NotSupported by
// construction, and so do outboxes (one ordered log would undo the
// spreading).

#include "cluster/redis_db.h"
#include "core/validate.h"

namespace tally::cluster {
namespace {

// Why a cluster has no outbox (docs/cluster.md's table).
constexpr std::string_view kNoOutbox =
    "an outbox is one ordered log of every write of its counters; on a "
    "cluster it would be one key on one master that each such write must "
    "also reach, undoing the spreading over masters; a cluster is the hub "
    "outboxes drain into (docs/cluster.md)";

constexpr std::string_view kNoFiles =
    "a cluster's data lives in its nodes, not in local files; back it up with "
    "its nodes' own persistence (AOF or RDB files, docs/cluster.md)";

}  // namespace

Status RedisDb::Compact(const ProgressFn&) {
  return NeedsFiles("Compact",
                    "there are no local files to compact; Redis frees a "
                    "deleted or expired key itself");
}
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
Status RedisDb::ImportOutbox(const std::vector<OutboxEntry>&) {
  return NeedsFiles("ImportOutbox", kNoOutbox);
}
Result<std::vector<OutboxEntry>> RedisDb::ReadOutbox(uint64_t, size_t) {
  return NeedsFiles("ReadOutbox", kNoOutbox);
}
Status RedisDb::AckOutbox(uint64_t) {
  return NeedsFiles("AckOutbox", kNoOutbox);
}
Result<OutboxStatus> RedisDb::GetOutboxStatus() {
  return NeedsFiles("GetOutboxStatus", kNoOutbox);
}
Status RedisDb::NoOutbox(std::string_view what) const {
  return NeedsFiles(what, kNoOutbox);
}

}  // namespace tally::cluster
