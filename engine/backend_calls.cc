// The free functions of tally/admin.h, tally/checkpoint.h, tally/backup.h
// (CreateBackup), tally/import.h and tally/outbox.h: each hands the call to
// the Db's BackendOps (tally/backend.h), whichever backend it is. Written
// against the public headers only.

#include "tally/admin.h"
#include "tally/backend.h"
#include "tally/backup.h"
#include "tally/checkpoint.h"
#include "tally/import.h"
#include "tally/outbox.h"

namespace tally {
namespace {

BackendOps& Ops(Db& db) { return internal::BackendAccess::Of(db); }

}  // namespace

Status Verify(Db& db, VerifyReport* report, const ProgressFn& progress) {
  return Ops(db).Verify(report, progress);
}

Status Compact(Db& db, const ProgressFn& progress) {
  return Ops(db).Compact(progress);
}

EngineStats GetStats(Db& db) { return Ops(db).GetStats(); }

Result<DbStats> GetDbStats(Db& db) { return Ops(db).GetDbStats(); }

Result<uint64_t> PendingOperands(Db& db, std::string_view counter) {
  return Ops(db).PendingOperands(counter);
}

Status Checkpoint(Db& db, const std::string& dir) {
  return Ops(db).Checkpoint(dir);
}

Result<BackupInfo> CreateBackup(Db& db, const std::string& backup_dir,
                                const ProgressFn& progress) {
  return Ops(db).CreateBackup(backup_dir, progress);
}

Status ImportCounter(Db& db, const CounterImport& counter) {
  return Ops(db).ImportCounter(counter);
}

Status ImportOutbox(Db& db, const std::vector<OutboxEntry>& entries) {
  return Ops(db).ImportOutbox(entries);
}

Result<std::vector<OutboxEntry>> ReadOutbox(Db& db, uint64_t after_seq,
                                            size_t limit) {
  return Ops(db).ReadOutbox(after_seq, limit);
}

Status AckOutbox(Db& db, uint64_t through_seq) {
  return Ops(db).AckOutbox(through_seq);
}

Result<OutboxStatus> GetOutboxStatus(Db& db) {
  return Ops(db).GetOutboxStatus();
}

Result<std::string> DatabaseId(Db& db) { return Ops(db).DatabaseId(); }

}  // namespace tally
