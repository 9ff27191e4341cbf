// BackendOps: what a Db backend implements beyond class Db, for the free
// functions of tally/admin.h, tally/checkpoint.h, tally/backup.h
// (CreateBackup), tally/import.h and tally/outbox.h. For implementers of
// Db, not for its users: they call those free functions.
//
// Why: class Db holds the data path and the catalog only; operations for
// other audiences (operators, restore tools, the change feed) are free
// functions taking a Db&, as RocksDB's Checkpoint::Create(DB*) and LevelDB's
// DumpFile. They reach the backend through Db's one private hook
// (Db::backend_ops, via internal::BackendAccess), never by casting a Db to
// one implementation, so every backend (this RocksDB engine, a remote one)
// offers them by implementing this interface. Each method has the contract
// of the free function of the same name; a backend that cannot offer one
// (a checkpoint of a database without a local disk) returns NotSupported.
//
// Ownership: the Db owns its BackendOps, which lives as long as the Db.
// Thread safety: as Db, every method from many threads at once.

#ifndef TALLY_BACKEND_H_
#define TALLY_BACKEND_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tally/admin.h"
#include "tally/backup.h"
#include "tally/db.h"
#include "tally/import.h"
#include "tally/outbox.h"
#include "tally/status.h"
#include "tally/types.h"

namespace tally {

class BackendOps {
 public:
  // tally/admin.h
  virtual Status Verify(VerifyReport* report, const ProgressFn& progress) = 0;
  virtual Status Compact(const ProgressFn& progress) = 0;
  virtual EngineStats GetStats() const = 0;
  virtual Result<DbStats> GetDbStats() = 0;
  virtual Result<uint64_t> PendingOperands(std::string_view counter) = 0;
  // tally/checkpoint.h, tally/backup.h
  virtual Status Checkpoint(const std::string& dir) = 0;
  virtual Result<BackupInfo> CreateBackup(const std::string& backup_dir,
                                          const ProgressFn& progress) = 0;
  // tally/import.h
  virtual Status ImportCounter(const CounterImport& counter) = 0;
  virtual Status ImportOutbox(const std::vector<OutboxEntry>& entries) = 0;
  // tally/outbox.h
  virtual Result<std::vector<OutboxEntry>> ReadOutbox(uint64_t after_seq,
                                                      size_t limit) = 0;
  virtual Status AckOutbox(uint64_t through_seq) = 0;
  virtual Result<OutboxStatus> GetOutboxStatus() = 0;
  virtual Result<std::string> DatabaseId() = 0;

 protected:
  BackendOps() = default;
  BackendOps(const BackendOps&) = delete;
  BackendOps& operator=(const BackendOps&) = delete;
  // Not deleted through this interface: the Db owns it.
  virtual ~BackendOps() = default;
};

namespace internal {

// The free functions' way to a Db's BackendOps (a friend of Db); nothing
// else uses it.
class BackendAccess {
 public:
  static BackendOps& Of(Db& db) { return db.backend_ops(); }
};

}  // namespace internal
}  // namespace tally

#endif  // TALLY_BACKEND_H_
