// PowerCutFs: a RocksDB FileSystem (public FileSystemWrapper API) that
// models power loss. It tracks, for every write-ahead log file it creates,
// how many bytes were appended and how many a successful sync made durable.
// A power cut is then a copy of the database directory in which each
// tracked WAL is truncated to its last synced size (what a disk keeps when
// the page cache is lost); every other file is copied whole (RocksDB syncs
// SST, MANIFEST and CURRENT before it relies on them).
//
// Two ways to cut:
//  - in process: CutBeforeNextSync(src, dst) takes the copy inside the next
//    WAL sync of a file under `src`, before it reaches the disk (e.g. the
//    sync of an AckOutbox, so the cut falls after the hub's commit and
//    before the edge's acknowledgement);
//  - across processes: with a sync log (the constructor's `sync_log`), every
//    WAL creation and successful sync appends "SIZE PATH\n" to that file;
//    after the writer is SIGKILLed, a checker reads it (ReadSyncLog) and
//    copies with CopyAfterPowerCut.
//
// Ownership: shares the default FileSystem. Thread safety: every method may
// be called from any thread.

#ifndef TALLY_TESTS_TESTUTIL_POWER_CUT_FS_H_
#define TALLY_TESTS_TESTUTIL_POWER_CUT_FS_H_

#include <fcntl.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>

namespace tally::test {

// WAL file (absolute, normalised path) -> bytes a sync made durable.
using SyncedSizes = std::map<std::string, uint64_t>;

inline std::string NormalPath(const std::string& path) {
  return std::filesystem::absolute(path).lexically_normal().string();
}

// Copies the regular files of `src` into `dst` (created), each WAL named in
// `synced` truncated to its synced size. Returns false (with *error) on an
// I/O failure.
inline bool CopyAfterPowerCut(const std::string& src, const std::string& dst,
                              const SyncedSizes& synced, std::string* error) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dst, ec);
  if (ec) {
    *error = "create " + dst + ": " + ec.message();
    return false;
  }
  for (const fs::directory_entry& e : fs::directory_iterator(src, ec)) {
    if (!e.is_regular_file()) continue;
    const std::string name = e.path().filename().string();
    const fs::path to = fs::path(dst) / name;
    fs::copy_file(e.path(), to, fs::copy_options::overwrite_existing, ec);
    if (ec) {
      *error = "copy " + e.path().string() + ": " + ec.message();
      return false;
    }
    auto it = synced.find(NormalPath(e.path().string()));
    if (it != synced.end() && fs::file_size(to) > it->second) {
      fs::resize_file(to, it->second, ec);
      if (ec) {
        *error = "truncate " + to.string() + ": " + ec.message();
        return false;
      }
    }
  }
  if (ec) {
    *error = "list " + src + ": " + ec.message();
    return false;
  }
  return true;
}

// The last size logged per WAL in a sync log (see the header comment).
inline SyncedSizes ReadSyncLog(const std::string& path) {
  SyncedSizes out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    // "SIZE PATH": the path last, so it may hold spaces.
    std::istringstream fields(line);
    uint64_t size = 0;
    std::string path;
    if (fields >> size && std::getline(fields >> std::ws, path) &&
        !path.empty()) {
      out[path] = size;  // a torn last line is skipped
    }
  }
  return out;
}

class PowerCutFs : public rocksdb::FileSystemWrapper {
 public:
  // `sync_log`: "" keeps the sizes in memory only.
  explicit PowerCutFs(const std::string& sync_log = "")
      : FileSystemWrapper(rocksdb::FileSystem::Default()) {
    if (!sync_log.empty()) {
      log_fd_ = ::open(sync_log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    }
  }
  ~PowerCutFs() override {
    if (log_fd_ >= 0) ::close(log_fd_);
  }
  const char* Name() const override { return "TallyPowerCutFs"; }

  // The next WAL sync of a file under `src` first copies `src` to `dst` as
  // a power cut at that moment would leave it.
  void CutBeforeNextSync(const std::string& src, const std::string& dst) {
    std::lock_guard<std::mutex> lock(mu_);
    cut_src_ = NormalPath(src);
    cut_dst_ = dst;
    cut_done_ = false;
  }
  // Whether the armed cut happened, and its copy's error ("" when none).
  bool cut_done() const {
    std::lock_guard<std::mutex> lock(mu_);
    return cut_done_;
  }
  std::string cut_error() const {
    std::lock_guard<std::mutex> lock(mu_);
    return cut_error_;
  }
  SyncedSizes Synced() const {
    std::lock_guard<std::mutex> lock(mu_);
    SyncedSizes out;
    for (const auto& [path, wal] : wals_) out[path] = wal->synced;
    return out;
  }

  rocksdb::IOStatus NewWritableFile(const std::string& f,
                                    const rocksdb::FileOptions& o,
                                    std::unique_ptr<rocksdb::FSWritableFile>* r,
                                    rocksdb::IODebugContext* d) override {
    rocksdb::IOStatus s = target()->NewWritableFile(f, o, r, d);
    if (s.ok() && IsWal(f)) {
      auto wal = std::make_shared<Wal>();
      wal->path = NormalPath(f);
      {
        std::lock_guard<std::mutex> lock(mu_);
        wals_[wal->path] = wal;
      }
      Log(wal->path, 0);
      *r = std::make_unique<File>(std::move(*r), this, wal);
    }
    return s;
  }

 private:
  struct Wal {
    std::string path;
    std::atomic<uint64_t> appended{0};
    uint64_t synced = 0;  // guarded by mu_
  };

  static bool IsWal(const std::string& f) {
    return f.size() > 4 && f.compare(f.size() - 4, 4, ".log") == 0;
  }

  void Log(const std::string& path, uint64_t size) {
    if (log_fd_ < 0) return;
    const std::string line = std::to_string(size) + " " + path + "\n";
    // One short write(2) per line; O_APPEND keeps lines whole.
    if (::write(log_fd_, line.data(), line.size()) < 0) std::abort();
  }

  // Before a sync of `wal`: takes an armed cut of its directory.
  void BeforeSync(const Wal& wal) {
    std::lock_guard<std::mutex> lock(mu_);
    if (cut_src_.empty() || cut_done_) return;
    if (std::filesystem::path(wal.path).parent_path().string() != cut_src_) {
      return;
    }
    SyncedSizes synced;
    for (const auto& [path, w] : wals_) synced[path] = w->synced;
    if (!CopyAfterPowerCut(cut_src_, cut_dst_, synced, &cut_error_) &&
        cut_error_.empty()) {
      cut_error_ = "copy failed";
    }
    cut_done_ = true;
  }

  void RecordSynced(Wal* wal, uint64_t size) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (size > wal->synced) wal->synced = size;
    }
    Log(wal->path, size);
  }

  class File : public rocksdb::FSWritableFileOwnerWrapper {
   public:
    File(std::unique_ptr<rocksdb::FSWritableFile> t, PowerCutFs* fs,
         std::shared_ptr<Wal> wal)
        : FSWritableFileOwnerWrapper(std::move(t)),
          fs_(fs),
          wal_(std::move(wal)) {}
    rocksdb::IOStatus Append(const rocksdb::Slice& data,
                             const rocksdb::IOOptions& o,
                             rocksdb::IODebugContext* d) override {
      rocksdb::IOStatus s = target()->Append(data, o, d);
      if (s.ok()) wal_->appended.fetch_add(data.size());
      return s;
    }
    rocksdb::IOStatus Append(const rocksdb::Slice& data,
                             const rocksdb::IOOptions& o,
                             const rocksdb::DataVerificationInfo& v,
                             rocksdb::IODebugContext* d) override {
      rocksdb::IOStatus s = target()->Append(data, o, v, d);
      if (s.ok()) wal_->appended.fetch_add(data.size());
      return s;
    }
    rocksdb::IOStatus Sync(const rocksdb::IOOptions& o,
                           rocksdb::IODebugContext* d) override {
      const uint64_t size = Before();
      return Done(target()->Sync(o, d), size);
    }
    rocksdb::IOStatus Fsync(const rocksdb::IOOptions& o,
                            rocksdb::IODebugContext* d) override {
      const uint64_t size = Before();
      return Done(target()->Fsync(o, d), size);
    }

   private:
    // What a sync starting now makes durable at least: the bytes appended
    // before it (an append racing the sync may or may not be included).
    uint64_t Before() {
      fs_->BeforeSync(*wal_);
      return wal_->appended.load();
    }
    rocksdb::IOStatus Done(rocksdb::IOStatus s, uint64_t size) {
      if (s.ok()) fs_->RecordSynced(wal_.get(), size);
      return s;
    }
    PowerCutFs* const fs_;
    const std::shared_ptr<Wal> wal_;
  };

  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Wal>> wals_;  // by absolute path
  std::string cut_src_, cut_dst_, cut_error_;
  bool cut_done_ = false;
  int log_fd_ = -1;
};

}  // namespace tally::test

#endif  // TALLY_TESTS_TESTUTIL_POWER_CUT_FS_H_
