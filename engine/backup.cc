// Backups on RocksDB's BackupEngine (include/tally/backup.h).

#include "tally/backup.h"

#include <rocksdb/env.h>
#include <rocksdb/utilities/backup_engine.h>

#include <filesystem>
#include <memory>
#include <vector>

#include "engine/db_impl.h"
#include "util/rocks_status.h"

namespace tally {
namespace {

// How often a backup reports progress: every MiB copied (RocksDB's default,
// 4 MiB, leaves a small database's progress at 0 until the end).
constexpr uint64_t kBackupProgressBytes = uint64_t{1} << 20;

Status OpenEngine(const std::string& dir, bool must_exist,
                  std::unique_ptr<rocksdb::BackupEngine>* engine) {
  if (dir.empty()) return Status::InvalidArgument("backup directory is empty");
  std::error_code ec;
  if (must_exist && !std::filesystem::is_directory(dir, ec)) {
    return Status::NotFound("no backup directory at " + dir);
  }
  rocksdb::BackupEngineOptions options(dir);
  options.share_files_with_checksum = true;
  options.callback_trigger_interval_size = kBackupProgressBytes;
  rocksdb::BackupEngine* raw = nullptr;
  Status s = FromRocks(
      rocksdb::BackupEngine::Open(options, rocksdb::Env::Default(), &raw),
      "open backup directory " + dir);
  engine->reset(raw);
  return s;
}

BackupInfo InfoOf(const rocksdb::BackupInfo& b) {
  BackupInfo out;
  out.id = b.backup_id;
  out.created_at_s = b.timestamp;
  out.bytes = b.size;
  out.files = b.number_files;
  return out;
}

// Whether `engine` holds backup `id` (valid or not).
bool BackupExists(rocksdb::BackupEngine* engine, uint32_t id) {
  std::vector<rocksdb::BackupInfo> infos;
  engine->GetBackupInfo(&infos);
  std::vector<rocksdb::BackupID> corrupt;
  engine->GetCorruptedBackups(&corrupt);
  for (const rocksdb::BackupInfo& b : infos) {
    if (b.backup_id == id) return true;
  }
  for (rocksdb::BackupID b : corrupt) {
    if (b == id) return true;
  }
  return false;
}

Status BackupNotFound(const std::string& dir, uint32_t id) {
  return Status::NotFound("there is no backup " + std::to_string(id) +
                          " in " + dir + " (listing it shows the ids)");
}

}  // namespace

Status ListBackups(const std::string& backup_dir,
                   std::vector<BackupInfo>* backups) {
  backups->clear();
  std::unique_ptr<rocksdb::BackupEngine> engine;
  Status s = OpenEngine(backup_dir, /*must_exist=*/true, &engine);
  if (!s.ok()) return s;
  std::vector<rocksdb::BackupInfo> infos;
  engine->GetBackupInfo(&infos);
  if (infos.empty()) return Status::NotFound("no backups in " + backup_dir);
  for (const rocksdb::BackupInfo& b : infos) backups->push_back(InfoOf(b));
  return Status::OK();
}

Status VerifyBackup(const std::string& backup_dir, uint32_t id) {
  std::unique_ptr<rocksdb::BackupEngine> engine;
  Status s = OpenEngine(backup_dir, /*must_exist=*/true, &engine);
  if (!s.ok()) return s;
  rocksdb::Status rs = engine->VerifyBackup(id, /*verify_with_checksum=*/true);
  if (rs.ok()) return Status::OK();
  if (!BackupExists(engine.get(), id)) return BackupNotFound(backup_dir, id);
  s = FromRocks(rs, "verify backup " + std::to_string(id) + " in " +
                        backup_dir);
  // A checksum or size mismatch (Corruption, IOError) or a file gone
  // (NotFound) of a backup that exists: it cannot be trusted.
  if (s.IsIOError() || s.IsNotFound()) return Status::Corruption(s.message());
  return s;
}

Status RestoreBackup(const std::string& backup_dir, uint32_t id,
                     const std::string& db_path) {
  std::error_code ec;
  if (std::filesystem::exists(db_path, ec) &&
      !std::filesystem::is_empty(db_path, ec)) {
    return Status::InvalidArgument("restore target " + db_path +
                                   " is not empty; restore into a new "
                                   "directory");
  }
  std::unique_ptr<rocksdb::BackupEngine> engine;
  Status s = OpenEngine(backup_dir, /*must_exist=*/true, &engine);
  if (!s.ok()) return s;
  if (!BackupExists(engine.get(), id)) return BackupNotFound(backup_dir, id);
  return FromRocks(
      engine->RestoreDBFromBackup(rocksdb::RestoreOptions(), id, db_path,
                                  db_path),
      "restore backup " + std::to_string(id) + " to " + db_path);
}

namespace engine {

Result<BackupInfo> DbImpl::CreateBackup(const std::string& backup_dir,
                                        const ProgressFn& progress) {
  Status reads = CheckReads(kReadAll, "CreateBackup");
  if (!reads.ok()) return reads;
  // A read-only instance backs up the files the writer has now: catch up
  // first so its MANIFEST matches them (see Checkpoint for the hazard).
  Status s = Refresh();
  if (!s.ok()) return s;
  Catalog::Reader view(catalog_.get());  // read-only: Refresh may swap db_
  std::unique_ptr<rocksdb::BackupEngine> engine;
  s = OpenEngine(backup_dir, /*must_exist=*/false, &engine);
  if (!s.ok()) return s;
  rocksdb::BackupID id = 0;
  rocksdb::CreateBackupOptions options;
  options.flush_before_backup = false;  // the WAL is copied instead
  ProgressReport report;
  if (progress) {
    // RocksDB calls back after every kBackupProgressBytes copied
    // (BackupEngineOptions::callback_trigger_interval_size, set in
    // OpenEngine), on its one copying thread.
    report.unit = "bytes";
    report.estimated = true;
    std::vector<rocksdb::LiveFileStorageInfo> files;
    if (db_->GetLiveFilesStorageInfo(rocksdb::LiveFilesStorageInfoOptions(),
                                     &files)
            .ok()) {
      for (const rocksdb::LiveFileStorageInfo& f : files) {
        report.total += f.size;
      }
    }
    progress(report);
    options.progress_callback = [&progress, &report] {
      report.done += kBackupProgressBytes;
      progress(report);
    };
  }
  s = FromRocks(engine->CreateNewBackup(options, db_.get(), &id),
                     "back up " + path_ + " to " + backup_dir);
  if (!s.ok()) return s;
  rocksdb::BackupInfo info;
  s = FromRocks(engine->GetBackupInfo(id, &info),
                     "describe backup " + std::to_string(id));
  if (!s.ok()) return s;
  return InfoOf(info);
}

}  // namespace engine
}  // namespace tally
