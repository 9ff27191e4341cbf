#include "engine/private_fs.h"

#include <sys/stat.h>

#include <string>

namespace tally::engine {
namespace {

using rocksdb::FileOptions;
using rocksdb::FSRandomRWFile;
using rocksdb::FSWritableFile;
using rocksdb::IODebugContext;
using rocksdb::IOOptions;
using rocksdb::IOStatus;

// chmod after a successful create. Between the two the file has RocksDB's
// mode, but it sits in the database directory, which is 0700 from its
// creation on (CreateDir below), so no other user can reach it meanwhile.
IOStatus Restrict(IOStatus s, const std::string& path, unsigned mode) {
  if (!s.ok()) return s;
  if (::chmod(path.c_str(), mode) != 0) {
    return IOStatus::IOError("chmod " + path, std::to_string(errno));
  }
  return s;
}

class PrivateFileSystem : public rocksdb::FileSystemWrapper {
 public:
  explicit PrivateFileSystem(std::shared_ptr<rocksdb::FileSystem> base)
      : FileSystemWrapper(std::move(base)) {}

  const char* Name() const override { return "TallyPrivateFileSystem"; }

  IOStatus NewWritableFile(const std::string& f, const FileOptions& o,
                           std::unique_ptr<FSWritableFile>* r,
                           IODebugContext* d) override {
    return Restrict(target()->NewWritableFile(f, o, r, d), f, kPrivateFileMode);
  }
  IOStatus ReopenWritableFile(const std::string& f, const FileOptions& o,
                              std::unique_ptr<FSWritableFile>* r,
                              IODebugContext* d) override {
    return Restrict(target()->ReopenWritableFile(f, o, r, d), f,
                    kPrivateFileMode);
  }
  IOStatus ReuseWritableFile(const std::string& f, const std::string& old,
                             const FileOptions& o,
                             std::unique_ptr<FSWritableFile>* r,
                             IODebugContext* d) override {
    return Restrict(target()->ReuseWritableFile(f, old, o, r, d), f,
                    kPrivateFileMode);
  }
  IOStatus NewRandomRWFile(const std::string& f, const FileOptions& o,
                           std::unique_ptr<FSRandomRWFile>* r,
                           IODebugContext* d) override {
    return Restrict(target()->NewRandomRWFile(f, o, r, d), f, kPrivateFileMode);
  }
  IOStatus NewLogger(const std::string& f, const IOOptions& o,
                     std::shared_ptr<rocksdb::Logger>* r,
                     IODebugContext* d) override {
    return Restrict(target()->NewLogger(f, o, r, d), f, kPrivateFileMode);
  }
  IOStatus LockFile(const std::string& f, const IOOptions& o,
                    rocksdb::FileLock** l, IODebugContext* d) override {
    return Restrict(target()->LockFile(f, o, l, d), f, kPrivateFileMode);
  }
  IOStatus CreateDir(const std::string& dir, const IOOptions& o,
                     IODebugContext* d) override {
    return Restrict(target()->CreateDir(dir, o, d), dir, kPrivateDirMode);
  }
  IOStatus CreateDirIfMissing(const std::string& dir, const IOOptions& o,
                              IODebugContext* d) override {
    // Only a directory made here is restricted; an existing one (made by
    // the caller) keeps the mode its owner gave it.
    struct stat st;
    const bool existed = ::stat(dir.c_str(), &st) == 0;
    IOStatus s = target()->CreateDirIfMissing(dir, o, d);
    return existed ? s : Restrict(s, dir, kPrivateDirMode);
  }
};

}  // namespace

std::shared_ptr<rocksdb::Env> NewPrivateEnv(rocksdb::Env* base) {
  auto fs = std::make_shared<PrivateFileSystem>(base->GetFileSystem());
  return std::shared_ptr<rocksdb::Env>(rocksdb::NewCompositeEnv(fs).release());
}

rocksdb::Env* DefaultPrivateEnv() {
  // Leaked on purpose: databases may be closed during static destruction.
  static const auto* const env =
      new std::shared_ptr<rocksdb::Env>(NewPrivateEnv(rocksdb::Env::Default()));
  return env->get();
}

}  // namespace tally::engine
