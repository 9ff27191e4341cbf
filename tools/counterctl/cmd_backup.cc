// backup create|list|verify|restore: backups on RocksDB's BackupEngine
// (tally/backup.h). `create` opens the database read-only, so it runs while
// an app holds it; list, verify and restore work on the backup directory
// alone (--db is still required by the grammar and ignored by them, except
// that restore writes to TARGET, never to --db).

#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "progress.h"
#include "json_output.h"
#include "tally/backup.h"

namespace counterctl {
namespace {

std::optional<uint32_t> ParseBackupId(const std::string& text) {
  std::optional<uint64_t> id = ParseCountFlag("ID", text, 1, UINT32_MAX);
  if (!id) return std::nullopt;
  return static_cast<uint32_t>(*id);
}

std::string FormatSeconds(int64_t s) {
  const std::string ms = FormatUtcMillis(s * 1000);
  // "...:SS.000Z" -> "...:SSZ"
  const size_t dot = ms.rfind('.');
  return dot == std::string::npos ? ms : ms.substr(0, dot) + "Z";
}

int Create(const GlobalArgs& global, const BackupArgs& args) {
  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kRead, &db);
  if (!s.ok()) return Fail(s);
  Progress progress("backup", "bytes", 0);
  tally::Result<tally::BackupInfo> info =
      tally::CreateBackup(*db, args.dir, progress.Callback());
  progress.Finish();
  if (!info.ok()) return Fail(info.status());
  std::cout << "backup " << info->id << " created in " << Printable(args.dir)
            << " (" << info->files << " files, " << info->bytes
            << " bytes)\n";
  return kExitOk;
}

int List(const BackupArgs& args) {
  std::vector<tally::BackupInfo> backups;
  tally::Status s = tally::ListBackups(args.dir, &backups);
  if (!s.ok()) return Fail(s);
  if (args.json) {
    Json list = Json::array();
    for (const tally::BackupInfo& b : backups) {
      Json j{{"id", b.id},
             {"created_at_s", b.created_at_s},
             {"created_at", FormatSeconds(b.created_at_s)},
             {"bytes", b.bytes},
             {"files", b.files}};
      list.push_back(j);
    }
    PrintJson(Json{{"dir", args.dir}, {"backups", list}});
    return kExitOk;
  }
  for (const tally::BackupInfo& b : backups) {
    std::cout << b.id << " created_at=" << FormatSeconds(b.created_at_s)
              << " files=" << b.files << " bytes=" << b.bytes << "\n";
  }
  return kExitOk;
}

int Verify(const BackupArgs& args) {
  std::optional<uint32_t> id = ParseBackupId(args.id);
  if (!id) return kExitUsage;
  tally::Status s = tally::VerifyBackup(args.dir, *id);
  if (s.IsNotFound()) return Fail(s);  // no such backup (or directory)
  if (!s.ok()) {
    PrintError("backup " + std::to_string(*id) + " in " +
               Printable(args.dir) + " failed verification: " +
               s.ToString());
    return kExitError;
  }
  std::cout << "backup " << *id << " ok\n";
  return kExitOk;
}

int Restore(const BackupArgs& args) {
  std::optional<uint32_t> id = ParseBackupId(args.id);
  if (!id) return kExitUsage;
  tally::Status s = tally::RestoreBackup(args.dir, *id, args.target);
  if (!s.ok()) return Fail(s);
  std::cout << "backup " << *id << " restored to " << Printable(args.target)
            << "\n";
  return kExitOk;
}

}  // namespace

int RunBackup(const GlobalArgs& global, const BackupArgs& args) {
  if (args.action == "create") return Create(global, args);
  if (args.action == "list") return List(args);
  if (args.action == "verify") return Verify(args);
  return Restore(args);
}

}  // namespace counterctl
