// Opening and closing a database, and the catalog operations that forward
// to Catalog.

#include <rocksdb/sst_file_reader.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/clean_close.h"
#include "engine/creation.h"
#include "engine/db_impl.h"
#include "engine/format.h"
#include "engine/open_on_env.h"
#include "engine/path_check.h"
#include "engine/rules.h"
#include "util/rocks_status.h"

namespace tally {

Status engine::OpenOnEnv(const Options& options, const std::string& path,
                         rocksdb::Env* base_env, std::unique_ptr<Db>* db) {
  db->reset();
  if (path.empty()) return Status::InvalidArgument("database path is empty");
  Status valid = ValidateOptions(options);
  if (!valid.ok()) return valid;
  auto impl = std::make_unique<DbImpl>(options, path, base_env);
  Status s = impl->Init();
  if (!s.ok()) return s;
  *db = std::move(impl);
  return Status::OK();
}

namespace engine {
namespace {

// The names (not paths) of the files in `path` ending in `extension`,
// sorted; none when the directory cannot be read.
std::vector<std::string> FilesEndingIn(const std::string& path,
                                       const char* extension) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(path, ec)) {
    if (e.path().extension() == extension) {
      names.push_back(e.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

// The table files of `path` that fail their own checksum check, each with
// its error. RocksDB reports a damaged table found while opening against
// the MANIFEST it was reading.
std::string DamagedTables(const std::string& path) {
  std::string out;
  for (const std::string& name : FilesEndingIn(path, ".sst")) {
    const std::string file = path + "/" + name;
    rocksdb::SstFileReader reader{rocksdb::Options()};
    rocksdb::Status rs = reader.Open(file);
    if (rs.ok()) rs = reader.VerifyChecksum();
    if (rs.ok()) continue;
    out += (out.empty() ? "" : "; ") + name + ": " + rs.ToString();
  }
  return out;
}

// RocksDB reports a damaged WAL record as a bare "checksum mismatch" (or
// similar) without the file: name the logs it was replaying.
Status OpenCorruption(const std::string& path, const rocksdb::Status& rs) {
  std::string msg = "database " + path + " is damaged: " + rs.ToString();
  const std::string tables = DamagedTables(path);
  if (!tables.empty()) {
    return Status::Corruption(msg + "; damaged table files: " + tables +
                              "; nothing was opened");
  }
  const bool names_file = msg.find(".sst") != std::string::npos ||
                          msg.find("MANIFEST") != std::string::npos ||
                          msg.find(".log") != std::string::npos;
  if (names_file) return Status::Corruption(msg + "; nothing was opened");
  std::string names;
  for (const std::string& l : FilesEndingIn(path, ".log")) {
    names += (names.empty() ? "" : ", ") + l;
  }
  return Status::Corruption(
      msg + " while replaying the write-ahead log (" + names +
      "); nothing was opened. Opening with Options::salvage_wal keeps the "
      "state before the damage and drops what the log holds after it");
}

bool IsLockError(const rocksdb::Status& rs) {
  return rs.IsIOError() && rs.ToString().find("lock") != std::string::npos;
}

}  // namespace

DbImpl::DbImpl(const Options& options, std::string path,
               rocksdb::Env* base_env)
    : options_(options),
      path_(std::move(path)),
      base_env_(base_env),
      engine_clock_(std::make_shared<EngineClock>(
          options.clock != nullptr ? options.clock : Clock::System())),
      clock_(engine_clock_.get()),
      event_locks_(options.event_lock_stripes),
      claim_locks_(options.event_lock_stripes) {}

Status DbImpl::OpenWriter(const RocksOptions& ro) {
  rocksdb::DB* raw = nullptr;
  rocksdb::Status rs =
      rocksdb::DB::Open(ro.db, path_, ro.families, &handles_, &raw);
  db_.reset(raw);
  if (rs.ok()) return Status::OK();
  if (IsLockError(rs)) {
    return Status::Busy("database " + path_ +
                        " is in use by another process (its LOCK file is "
                        "held); stop that process, go through it, or open "
                        "the database read-only");
  }
  if (rs.IsCorruption()) return OpenCorruption(path_, rs);
  return FromRocks(rs, "open " + path_);
}

void DbImpl::BindFamilies() {
  const FamilyHandles f = HandlesOf(handles_);
  meta_ = f[kMeta];
  shards_ = f[kShards];
  events_ = f[kEvents];
  rollups_ = f[kRollups];  // null where a read-only open went without it
  outbox_ = f[kOutbox];
  holds_ = f[kHolds];  // null where a read-only open went without it
  claims_ = f[kClaims];  // likewise
}

Status DbImpl::Init() {
  // Every time the engine judges by comes from this clock: one outside the
  // event-time range would be persisted as the time mark and break every
  // deadline after it.
  if (const int64_t t = engine_clock_->BaseReading();
      !EngineClock::InEventTimeRange(t)) {
    return Status::InvalidArgument(
        "Options::clock reads " + std::to_string(t) + " ms, outside " +
        std::to_string(kMinEventTimeMs) + ".." +
        std::to_string(kMaxEventTimeMs) + " (1970 to the end of 9999, UTC)");
  }
  Options checked = options_;
  if (options_.read_only) checked.create_if_missing = false;
  PathState state;
  Status s = CheckPath(checked, path_, &state);
  if (!s.ok()) return s;

  RocksOptions ro =
      MakeRocksOptions(checked, base_env_, retention_, engine_clock_);
  env_ = ro.env;
  stats_env_ = ro.db.env;
  // A new database is made under a creation marker and lock (creation.h),
  // removed once its header is durable.
  std::unique_ptr<Creation> creation;
  if (state != PathState::kDatabase) {
    s = Creation::Begin(checked, path_, ro.db.env, &creation);
    if (!s.ok()) return s;
  }
  s = options_.read_only ? OpenReader(std::move(ro)) : OpenWriter(ro);
  if (!s.ok()) return s;
  BindFamilies();
  commit_ = std::make_unique<wal::CommitPipeline>(
      db_.get(), options_.sync, wal::GroupCommitOptionsOf(options_));
  catalog_ = std::make_unique<Catalog>(db_.get(), HandlesOf(handles_),
                                       commit_.get(), clock_, retention_.get());
  s = catalog_->Load(path_, options_.read_only);
  if (s.ok()) s = LoadTimeMark();
  if (!s.ok() || options_.read_only) return s;
  if (creation != nullptr) {
    s = creation->Finish();
    if (!s.ok()) return s;
    creation.reset();
  }
  s = LoadOutbox();
  // The mark is persisted at open, so a crash after a clock step back never
  // resumes below a time this process judged anything by.
  if (s.ok()) s = AdvanceTimeMark();
  if (!s.ok()) return s;
  if (options_.rollup_interval_ms > 0) {
    // A failing pass (a latched write error, an overflowed counter) is
    // retried next interval; ReadCached shows the growing lag meanwhile.
    rollup_task_.Start(std::chrono::milliseconds(options_.rollup_interval_ms),
                       [this] { RollupNow(std::string_view()).IgnoreError(); });
  }
  // A failed tick (a latched write error) leaves the durable mark where it
  // was: compaction filters then drop less, never more.
  time_mark_task_.Start(std::chrono::milliseconds(kTimeMarkIntervalMs),
                        [this] { AdvanceTimeMark().IgnoreError(); });
  StartPublishing();
  return Status::OK();
}

DbImpl::~DbImpl() {
  rollup_task_.Stop();
  time_mark_task_.Stop();
  // Async commits still queued go in (and call back) while the DB is open.
  if (commit_ != nullptr) commit_->Close();
  StopPublishing();  // the last figures, marked closed, while db_ is open
  if (db_ != nullptr) {
    catalog_.reset();
    // With the WAL on, RocksDB's Close() flushes nothing: without this the
    // next open would replay every write since the last flush.
    if (!options_.read_only) FlushForCleanClose(db_.get(), handles_);
    for (rocksdb::ColumnFamilyHandle* h : handles_) {
      if (h == nullptr) continue;  // read-only: a family left out
      db_->DestroyColumnFamilyHandle(h).PermitUncheckedError();
    }
    // Close() flushes nothing we rely on (the WAL already holds every
    // acknowledged write); its error has nowhere to go from a destructor.
    db_->Close().PermitUncheckedError();
    db_.reset();
  }
  CloseSecondary(&spare_);
  if (!secondary_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(secondary_dir_, ec);  // best effort
  }
}

Status DbImpl::CheckWritable() const {
  if (!options_.read_only) return Status::OK();
  return Status::NotSupported("database " + path_ +
                              " was opened read-only; writes go through the "
                              "process that holds it");
}

Status DbImpl::CreateCounter(std::string_view name, const CounterSpec& spec) {
  Status s = CheckWritable();
  return s.ok() ? catalog_->Create(name, spec) : s;
}

Result<CounterInfo> DbImpl::DescribeCounter(std::string_view name) {
  return catalog_->Describe(name);
}

Result<std::vector<CounterInfo>> DbImpl::ListCounters() {
  return catalog_->List();
}

Status DbImpl::DeleteCounter(std::string_view name) {
  Status s = CheckWritable();
  if (!s.ok()) return s;
  return catalog_->Delete(name, [this] { async_.WaitIdle(); });
}

}  // namespace engine
}  // namespace tally
