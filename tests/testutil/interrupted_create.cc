#include "engine/open_on_env.h"
#include "testutil/interrupted_create.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "tally/db.h"

namespace tally::test {
namespace {

// tally's first column family after `default`; its name is in the MANIFEST
// record that adds it.
constexpr char kFirstTallyFamily[] = "meta";

class StopAtFamilyFile : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  StopAtFamilyFile(std::unique_ptr<rocksdb::FSWritableFile> f,
                   CreationStopFs* fs)
      : FSWritableFileOwnerWrapper(std::move(f)), fs_(fs) {}

  rocksdb::IOStatus Append(const rocksdb::Slice& data,
                           const rocksdb::IOOptions& o,
                           rocksdb::IODebugContext* d) override {
    if (Names(data)) {
      rocksdb::IOStatus s = fs_->Stop();
      if (!s.ok()) return s;
    }
    return target()->Append(data, o, d);
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& data,
                           const rocksdb::IOOptions& o,
                           const rocksdb::DataVerificationInfo& v,
                           rocksdb::IODebugContext* d) override {
    if (Names(data)) return Append(data, o, d);
    return target()->Append(data, o, v, d);
  }

 private:
  static bool Names(const rocksdb::Slice& data) {
    const size_t n = std::strlen(kFirstTallyFamily);
    for (size_t i = 0; i + n <= data.size(); ++i) {
      if (std::memcmp(data.data() + i, kFirstTallyFamily, n) == 0) return true;
    }
    return false;
  }
  CreationStopFs* const fs_;
};

}  // namespace

rocksdb::IOStatus CreationStopFs::Stop() {
  switch (mode_) {
    case Mode::kExit:
      ::_exit(kKilledAtFamilyExit);
    case Mode::kFail:
      return rocksdb::IOStatus::IOError("test: stopped at tally's families");
    case Mode::kHold: {
      std::unique_lock<std::mutex> lock(mu_);
      held_ = true;
      cv_.notify_all();
      cv_.wait(lock, [this] { return released_; });
      return rocksdb::IOStatus::OK();
    }
  }
  return rocksdb::IOStatus::OK();
}

void CreationStopFs::WaitUntilHeld() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return held_; });
}

void CreationStopFs::Release() {
  std::lock_guard<std::mutex> lock(mu_);
  released_ = true;
  cv_.notify_all();
}

rocksdb::IOStatus CreationStopFs::NewWritableFile(
    const std::string& f, const rocksdb::FileOptions& o,
    std::unique_ptr<rocksdb::FSWritableFile>* r, rocksdb::IODebugContext* d) {
  rocksdb::IOStatus s = target()->NewWritableFile(f, o, r, d);
  if (s.ok() && f.find("MANIFEST-") != std::string::npos) {
    *r = std::make_unique<StopAtFamilyFile>(std::move(*r), this);
  }
  return s;
}

void InterruptCreation(const std::string& path, CreationStopFs::Mode mode) {
  ASSERT_NE(mode, CreationStopFs::Mode::kHold);
  auto fs = std::make_shared<CreationStopFs>(mode);
  std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(fs);
  Options options;
  options.rollup_interval_ms = 0;
  if (mode == CreationStopFs::Mode::kFail) {
    std::unique_ptr<Db> db;
    Status s = engine::OpenOnEnv(options, path, env.get(), &db);
    EXPECT_TRUE(s.IsIOError()) << s.ToString();
    return;
  }
  const pid_t child = ::fork();
  ASSERT_GE(child, 0) << "fork: " << std::strerror(errno);
  if (child == 0) {
    std::unique_ptr<Db> db;
    (void)engine::OpenOnEnv(options, path, env.get(), &db);
    ::_exit(1);  // the stop was not reached
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "child status " << status;
  ASSERT_EQ(WEXITSTATUS(status), kKilledAtFamilyExit);
}

}  // namespace tally::test
