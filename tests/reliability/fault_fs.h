// FaultFs: a RocksDB FileSystem (public FileSystemWrapper API) whose writable
// files fail on command: appends with an I/O error or "no space left", syncs
// with an I/O error. The faults switch on and off at run time, from any
// thread, so a test can break the disk under a live database and heal it
// before reopening.
//
// InjectAfter lets `passes` matching operations through first: failing every
// WAL append from the Nth on models a process killed after its first N
// appends reached the OS (nothing later is written).
//
// Ownership: shares the wrapped FileSystem. Thread safety: the switches are
// atomics; everything else is the wrapped FileSystem's.

#ifndef TALLY_TESTS_RELIABILITY_FAULT_FS_H_
#define TALLY_TESTS_RELIABILITY_FAULT_FS_H_

#include <rocksdb/env.h>
#include <rocksdb/file_system.h>

#include <atomic>
#include <memory>
#include <string>

namespace tally::test {

enum class Fault { kNone, kWriteError, kNoSpace, kSyncError };

class FaultFs : public rocksdb::FileSystemWrapper {
 public:
  FaultFs() : FileSystemWrapper(rocksdb::FileSystem::Default()) {}
  const char* Name() const override { return "TallyFaultFs"; }

  // Which files fail: only names containing `fragment` ("" = all).
  void Inject(Fault fault, std::string fragment = "") {
    fragment_ = std::move(fragment);
    fault_.store(fault);
  }
  // Like Inject, after `passes` matching operations have succeeded.
  void InjectAfter(Fault fault, int passes, std::string fragment = "") {
    passes_.store(passes);
    Inject(fault, std::move(fragment));
  }
  void Heal() { fault_.store(Fault::kNone); }
  int injected() const { return injected_.load(); }

  rocksdb::IOStatus NewWritableFile(const std::string& f,
                                    const rocksdb::FileOptions& o,
                                    std::unique_ptr<rocksdb::FSWritableFile>* r,
                                    rocksdb::IODebugContext* d) override {
    rocksdb::IOStatus s = target()->NewWritableFile(f, o, r, d);
    if (s.ok()) *r = std::make_unique<File>(std::move(*r), this, f);
    return s;
  }

 private:
  // The status an operation of kind `op` on `file` gets now.
  rocksdb::IOStatus Check(Fault op, const std::string& file) {
    const Fault f = fault_.load();
    if (f == Fault::kNone || f != op ||
        file.find(fragment_) == std::string::npos) {
      return rocksdb::IOStatus::OK();
    }
    if (passes_.fetch_sub(1) > 0) return rocksdb::IOStatus::OK();
    injected_.fetch_add(1);
    if (f == Fault::kNoSpace) {
      return rocksdb::IOStatus::NoSpace("injected: no space left on device",
                                        file);
    }
    return rocksdb::IOStatus::IOError(f == Fault::kSyncError
                                          ? "injected fsync failure"
                                          : "injected write "
                                            "failure",
                                      file);
  }

  class File : public rocksdb::FSWritableFileOwnerWrapper {
   public:
    File(std::unique_ptr<rocksdb::FSWritableFile> t, FaultFs* fs,
         std::string name)
        : FSWritableFileOwnerWrapper(std::move(t)),
          fs_(fs),
          name_(std::move(name)) {}
    rocksdb::IOStatus Append(const rocksdb::Slice& data,
                             const rocksdb::IOOptions& o,
                             rocksdb::IODebugContext* d) override {
      rocksdb::IOStatus s = WriteCheck();
      return s.ok() ? target()->Append(data, o, d) : s;
    }
    rocksdb::IOStatus Append(const rocksdb::Slice& data,
                             const rocksdb::IOOptions& o,
                             const rocksdb::DataVerificationInfo& v,
                             rocksdb::IODebugContext* d) override {
      rocksdb::IOStatus s = WriteCheck();
      return s.ok() ? target()->Append(data, o, v, d) : s;
    }
    rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data,
                                       uint64_t offset,
                                       const rocksdb::IOOptions& o,
                                       rocksdb::IODebugContext* d) override {
      rocksdb::IOStatus s = WriteCheck();
      return s.ok() ? target()->PositionedAppend(data, offset, o, d) : s;
    }
    rocksdb::IOStatus Sync(const rocksdb::IOOptions& o,
                           rocksdb::IODebugContext* d) override {
      rocksdb::IOStatus s = fs_->Check(Fault::kSyncError, name_);
      return s.ok() ? target()->Sync(o, d) : s;
    }
    rocksdb::IOStatus Fsync(const rocksdb::IOOptions& o,
                            rocksdb::IODebugContext* d) override {
      rocksdb::IOStatus s = fs_->Check(Fault::kSyncError, name_);
      return s.ok() ? target()->Fsync(o, d) : s;
    }
    rocksdb::IOStatus RangeSync(uint64_t offset, uint64_t n,
                                const rocksdb::IOOptions& o,
                                rocksdb::IODebugContext* d) override {
      rocksdb::IOStatus s = fs_->Check(Fault::kSyncError, name_);
      return s.ok() ? target()->RangeSync(offset, n, o, d) : s;
    }

   private:
    rocksdb::IOStatus WriteCheck() {
      rocksdb::IOStatus s = fs_->Check(Fault::kWriteError, name_);
      return s.ok() ? fs_->Check(Fault::kNoSpace, name_) : s;
    }
    FaultFs* const fs_;
    const std::string name_;
  };

  std::atomic<Fault> fault_{Fault::kNone};
  std::string fragment_;  // set before fault_ is stored, read after loading it
  std::atomic<int> injected_{0};
  std::atomic<int> passes_{0};  // matching operations still let through
};

}  // namespace tally::test

#endif  // TALLY_TESTS_RELIABILITY_FAULT_FS_H_
