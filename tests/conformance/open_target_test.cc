// Db::Open chooses its backend from its target: a directory path opens the
// local engine, "redis://" a Redis Cluster (not built yet: NotSupported,
// issue 31), any other "scheme://" is InvalidArgument naming the scheme.
// Not parameterised: this is how a caller reaches a backend at all.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "tally/db.h"
#include "testutil/temp_dir.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

bool Holds(const Status& s, const std::string& part) {
  return s.message().find(part) != std::string::npos;
}

TEST(OpenTarget, ARedisTargetIsNotSupportedYet) {
  for (const std::string target :
       {"redis://cache-1:6379", "REDIS://cache-1:6379/0", "rediss://c:6380",
        "redis://user@cache-1:6379"}) {
    std::unique_ptr<Db> db;
    const Status s = Db::Open(Options(), target, &db);
    EXPECT_TRUE(s.IsNotSupported()) << target << ": " << s.ToString();
    EXPECT_TRUE(Holds(s, target)) << s.ToString();
    EXPECT_TRUE(Holds(s, "Redis Cluster backend is not built yet"))
        << s.ToString();
    EXPECT_TRUE(Holds(s, "issue 31")) << s.ToString();
    EXPECT_EQ(db, nullptr);
  }
  // A password is not repeated.
  std::unique_ptr<Db> db;
  const Status s = Db::Open(Options(), "redis://app:s3cret@cache-1:6379", &db);
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
  EXPECT_FALSE(Holds(s, "s3cret")) << s.ToString();
  EXPECT_TRUE(Holds(s, "redis://app:***@cache-1:6379")) << s.ToString();
}

TEST(OpenTarget, AnUnknownSchemeIsInvalidArgumentNotADirectory) {
  test::TempDir dir;
  ASSERT_TRUE(dir.ok());
  // Relative targets resolve here: where a directory would go.
  struct InDir {
    explicit InDir(const std::string& d)
        : back(std::filesystem::current_path()) {
      std::filesystem::current_path(d);
    }
    ~InDir() { std::filesystem::current_path(back); }
    std::filesystem::path back;
  } in_dir(dir.path());
  for (const std::string scheme : {"memcached", "file", "s3", "x+y-z.1"}) {
    std::unique_ptr<Db> db;
    const Status s = Db::Open(Options(), scheme + "://somewhere/db", &db);
    EXPECT_TRUE(s.IsInvalidArgument()) << scheme << ": " << s.ToString();
    EXPECT_TRUE(Holds(s, "unknown scheme '" + scheme + "'")) << s.ToString();
    EXPECT_EQ(db, nullptr);
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()))
      << "a refused target must create nothing";
}

TEST(OpenTarget, AnythingElseIsALocalPath) {
  test::TempDir dir;
  ASSERT_TRUE(dir.ok());
  // "://" after a '/' names no scheme: a directory path.
  for (const std::string name : {"plain", "a://b"}) {
    const std::string path = dir.path() + "/" + name;
    std::filesystem::create_directories(path);  // an empty directory is used
    std::unique_ptr<Db> db;
    const Status s = Db::Open(Options(), path, &db);
    ASSERT_TRUE(s.ok()) << path << ": " << s.ToString();
    EXPECT_EQ(db->path(), path);
    ASSERT_OK(db->CreateCounter("c", CounterSpec{}));
  }
  std::unique_ptr<Db> db;
  EXPECT_TRUE(Db::Open(Options(), "", &db).IsInvalidArgument());
}

}  // namespace
}  // namespace tally
