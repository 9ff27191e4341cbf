#include "engine/path_check.h"

#include <rocksdb/db.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <vector>

#include "engine/format.h"

namespace tally::engine {
namespace {

namespace fs = std::filesystem;

// The directory that will hold the files: `path` itself, resolved through
// symlinks, or its nearest existing ancestor when it does not exist yet.
Status CheckOwner(const std::string& path) {
  std::error_code ec;
  const bool is_link = fs::is_symlink(fs::symlink_status(path, ec));
  // Follow links by hand: weakly_canonical leaves a dangling one unresolved.
  fs::path resolved = fs::absolute(path, ec);
  for (int hops = 0;
       !ec && hops < 40 && fs::is_symlink(fs::symlink_status(resolved, ec));
       ++hops) {
    const fs::path next = fs::read_symlink(resolved, ec);
    resolved = next.is_absolute() ? next : resolved.parent_path() / next;
  }
  fs::path target = fs::weakly_canonical(resolved, ec);
  const fs::path db_dir = target;
  if (ec) {
    return Status::InvalidArgument("cannot resolve database path " + path +
                                   ": " + ec.message());
  }
  while (!fs::exists(target, ec) && target.has_parent_path() &&
         target != target.parent_path()) {
    target = target.parent_path();
  }
  struct stat st;
  if (::stat(target.c_str(), &st) != 0) {
    return Status::IOError("cannot stat " + target.string() + " (for " + path +
                           "): errno " + std::to_string(errno));
  }
  const uid_t me = ::geteuid();
  const bool is_db_dir = target == db_dir;
  if (st.st_uid == me) return Status::OK();
  // A missing database under a shared parent (/tmp, a home directory's
  // parent) is fine; the database directory itself, and whatever a symlink
  // points at, must be ours.
  if (!is_db_dir && !is_link) return Status::OK();
  const std::string who = "owned by uid " + std::to_string(st.st_uid) +
                          ", not by this process's uid " + std::to_string(me);
  if (is_link) {
    return Status::InvalidArgument("refusing to open " + path +
                                   ": it is a symlink into " + target.string() +
                                   ", which is " + who);
  }
  return Status::InvalidArgument("refusing to open " + path + ": it is " + who +
                                 "; open it as its owner");
}

}  // namespace

Status CheckPath(const Options& options, const std::string& path,
                 PathState* state) {
  *state = PathState::kNew;
  Status owner = CheckOwner(path);
  if (!owner.ok()) return owner;
  const Status not_found = Status::NotFound("no tally database at " + path +
                                            " (create_if_missing is off)");
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) {
    return options.create_if_missing ? Status::OK() : not_found;
  }
  if (!fs::is_directory(st)) {
    return Status::InvalidArgument(path +
                                   " is not a directory, so it is not "
                                   "a tally database");
  }
  if (fs::exists(fs::path(path) / kCreatingMarker, ec)) {
    *state = PathState::kUnfinished;
    if (options.create_if_missing) return Status::OK();
    return Status::NotFound(
        "no tally database at " + path + " yet: its creation is under way "
        "or was interrupted (it holds " + kCreatingMarker + "); a creating "
        "open (create_if_missing) creates it afresh");
  }
  const bool has_current = fs::exists(fs::path(path) / "CURRENT", ec);
  if (!has_current) {
    if (fs::is_empty(path, ec) && !ec) {
      return options.create_if_missing ? Status::OK() : not_found;
    }
    return Status::InvalidArgument(path +
                                   " holds files but is not a tally "
                                   "database (no RocksDB CURRENT file)");
  }
  std::vector<std::string> families;
  rocksdb::Status rs =
      rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), path, &families);
  if (rs.IsCorruption()) {
    return Status::Corruption("database " + path +
                              " is damaged: " + rs.ToString());
  }
  if (!rs.ok()) {
    return Status::InvalidArgument(
        path + " is not a readable tally database: " + rs.ToString());
  }
  const std::set<std::string> have(families.begin(), families.end());
  for (const char* need : {kMetaFamily, kShardsFamily, kEventsFamily}) {
    if (have.count(need) == 0) {
      return Status::InvalidArgument(path +
                                     " is a RocksDB database but not a "
                                     "tally database (no column family '" +
                                     std::string(need) + "')");
    }
  }
  *state = PathState::kDatabase;
  return Status::OK();
}

}  // namespace tally::engine
