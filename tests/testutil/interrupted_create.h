// Leaving a database directory the way a creation killed midway leaves it:
// after RocksDB made the default column family, before tally's families.
//
// CreationStopFs is a RocksDB FileSystem (public FileSystemWrapper API) that
// stops at the first MANIFEST write adding one of tally's column families
// (the record names the family): it fails that write, or, in a forked
// child, ends the process there with _exit, as a kill would, or holds it
// until the test releases it (a creation under way).
//
// Ownership: shares the default FileSystem. Thread safety: as the default
// FileSystem.

#ifndef TALLY_TESTS_TESTUTIL_INTERRUPTED_CREATE_H_
#define TALLY_TESTS_TESTUTIL_INTERRUPTED_CREATE_H_

#include <rocksdb/env.h>
#include <rocksdb/file_system.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

namespace tally::test {

// The exit status of a child that CreationStopFs ended.
inline constexpr int kKilledAtFamilyExit = 42;

class CreationStopFs : public rocksdb::FileSystemWrapper {
 public:
  enum class Mode { kFail, kExit, kHold };
  explicit CreationStopFs(Mode mode)
      : FileSystemWrapper(rocksdb::FileSystem::Default()), mode_(mode) {}
  const char* Name() const override { return "TallyCreationStopFs"; }

  // kHold: waits until a write is held there; lets it (and later ones) go.
  void WaitUntilHeld();
  void Release();
  // Called at the stop by the MANIFEST file; returns the write's fate.
  rocksdb::IOStatus Stop();

  rocksdb::IOStatus NewWritableFile(const std::string& f,
                                    const rocksdb::FileOptions& o,
                                    std::unique_ptr<rocksdb::FSWritableFile>* r,
                                    rocksdb::IODebugContext* d) override;

 private:
  const Mode mode_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool held_ = false;      // guarded by mu_
  bool released_ = false;  // guarded by mu_
};

// Leaves `path` (missing or empty) as a creation interrupted at its first
// tally family: with kExit in a forked child ended there (a kill), with
// kFail in this process by a Db::Open that fails there. Fails the test if
// the stop was not reached.
void InterruptCreation(const std::string& path, CreationStopFs::Mode mode);

}  // namespace tally::test

#endif  // TALLY_TESTS_TESTUTIL_INTERRUPTED_CREATE_H_
