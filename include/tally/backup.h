// Backups of tally databases, on RocksDB's BackupEngine: incremental (files
// shared between backups are stored once), checksummed, restorable to a
// new directory. CreateBackup takes one from an open database; the other
// functions here work on a backup directory alone. Local by nature: the
// backup directory is on the file system of the calling process (a backend
// without a local disk returns NotSupported from CreateBackup).
//
// Thread safety: one backup directory must not be written by two callers at
// once (RocksDB's rule); reading it (list, verify, restore) is safe
// alongside.

#ifndef TALLY_BACKUP_H_
#define TALLY_BACKUP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tally/admin.h"
#include "tally/db.h"
#include "tally/export.h"
#include "tally/status.h"

namespace tally {

struct BackupInfo {
  uint32_t id = 0;
  int64_t created_at_s = 0;  // Unix epoch seconds
  uint64_t bytes = 0;        // payload bytes of its files
  uint32_t files = 0;
};

// Adds a backup of the open database `db` to `backup_dir` (created if
// missing) and returns its description. Writers and read-only instances
// alike; may run while other threads use the Db.
// `progress`: bytes copied, of the live files' bytes (an estimate: an
// incremental backup copies only what the earlier ones lack, and ends
// below it).
TALLY_EXPORT Result<BackupInfo> CreateBackup(
    Db& db, const std::string& backup_dir,
    const ProgressFn& progress = nullptr);

// The backups in `backup_dir`, oldest first. NotFound when there is none.
TALLY_EXPORT Status ListBackups(const std::string& backup_dir,
                                std::vector<BackupInfo>* backups);

// Checks that every file of backup `id` exists with the size and checksum
// recorded when it was taken. Corruption names what differs; NotFound
// when `backup_dir` holds no backup `id` (or is no backup directory).
TALLY_EXPORT Status VerifyBackup(const std::string& backup_dir, uint32_t id);

// Restores backup `id` into `db_path`, which must not hold a database (an
// empty or missing directory). The result opens with Db::Open. NotFound
// when `backup_dir` holds no backup `id`.
TALLY_EXPORT Status RestoreBackup(const std::string& backup_dir, uint32_t id,
                                  const std::string& db_path);

}  // namespace tally

#endif  // TALLY_BACKUP_H_
