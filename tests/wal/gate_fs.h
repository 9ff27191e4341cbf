// GateFs: a RocksDB FileSystem (public FileSystemWrapper API) that counts the
// syncs of write-ahead log files and can hold one until the test releases
// it, or fail the next ones. Holding a WAL sync keeps a group commit's
// leader inside its write, so a test can line followers up behind it and
// know exactly which group they form, without sleeping.
//
// Ownership: shares the default FileSystem. Thread safety: every method may
// be called from any thread.

#ifndef TALLY_TESTS_WAL_GATE_FS_H_
#define TALLY_TESTS_WAL_GATE_FS_H_

#include <rocksdb/env.h>
#include <rocksdb/file_system.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

namespace tally::test {

class GateFs : public rocksdb::FileSystemWrapper {
 public:
  GateFs() : FileSystemWrapper(rocksdb::FileSystem::Default()) {}
  const char* Name() const override { return "TallyGateFs"; }

  // The next WAL sync blocks until Release().
  void HoldNextSync() {
    std::lock_guard<std::mutex> lock(mu_);
    hold_ = true;
  }
  // Waits until a WAL sync is being held.
  void WaitUntilHeld() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return held_; });
  }
  // Lets the held sync go on.
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    held_ = false;
    cv_.notify_all();
  }
  // The next `n` WAL syncs (after any held one is released) fail.
  void FailNextSyncs(int n) {
    std::lock_guard<std::mutex> lock(mu_);
    fail_ = n;
  }
  // WAL syncs asked for so far (held, failed and done).
  int syncs() const {
    std::lock_guard<std::mutex> lock(mu_);
    return syncs_;
  }

  rocksdb::IOStatus NewWritableFile(const std::string& f,
                                    const rocksdb::FileOptions& o,
                                    std::unique_ptr<rocksdb::FSWritableFile>* r,
                                    rocksdb::IODebugContext* d) override {
    rocksdb::IOStatus s = target()->NewWritableFile(f, o, r, d);
    if (s.ok() && f.find(".log") != std::string::npos) {
      *r = std::make_unique<File>(std::move(*r), this);
    }
    return s;
  }
  rocksdb::IOStatus ReopenWritableFile(
      const std::string& f, const rocksdb::FileOptions& o,
      std::unique_ptr<rocksdb::FSWritableFile>* r,
      rocksdb::IODebugContext* d) override {
    rocksdb::IOStatus s = target()->ReopenWritableFile(f, o, r, d);
    if (s.ok() && f.find(".log") != std::string::npos) {
      *r = std::make_unique<File>(std::move(*r), this);
    }
    return s;
  }

 private:
  // Called before every WAL sync: counts it, holds it if asked (a held
  // sync then succeeds), else says whether it must fail.
  bool Gate() {
    std::unique_lock<std::mutex> lock(mu_);
    ++syncs_;
    if (hold_) {
      hold_ = false;
      held_ = true;
      cv_.notify_all();
      cv_.wait(lock, [this] { return !held_; });
      return false;
    }
    if (fail_ > 0) {
      --fail_;
      return true;
    }
    return false;
  }

  class File : public rocksdb::FSWritableFileOwnerWrapper {
   public:
    File(std::unique_ptr<rocksdb::FSWritableFile> t, GateFs* fs)
        : FSWritableFileOwnerWrapper(std::move(t)), fs_(fs) {}
    rocksdb::IOStatus Sync(const rocksdb::IOOptions& o,
                           rocksdb::IODebugContext* d) override {
      if (fs_->Gate()) return Injected();
      return target()->Sync(o, d);
    }
    rocksdb::IOStatus Fsync(const rocksdb::IOOptions& o,
                            rocksdb::IODebugContext* d) override {
      if (fs_->Gate()) return Injected();
      return target()->Fsync(o, d);
    }

   private:
    static rocksdb::IOStatus Injected() {
      return rocksdb::IOStatus::IOError("injected WAL fsync failure");
    }
    GateFs* const fs_;
  };

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool hold_ = false;  // the next sync is held
  bool held_ = false;  // a sync is being held now
  int fail_ = 0;       // syncs left to fail
  int syncs_ = 0;
};

}  // namespace tally::test

#endif  // TALLY_TESTS_WAL_GATE_FS_H_
