// Db::Open chooses its backend from its target: a directory path opens the
// local engine, "redis://" a Redis Cluster, any other "scheme://" is
// InvalidArgument naming the scheme.
// Not parameterised: this is how a caller reaches a backend at all.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tally/db.h"
#include "testutil/temp_dir.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

bool Holds(const Status& s, const std::string& part) {
  return s.message().find(part) != std::string::npos;
}

TEST(OpenTarget, ARedisTargetOpensTheClusterBackend) {
  // Nothing listens on port 1: the cluster backend was chosen and says
  // which node it could not reach (tests/cluster/ opens a real cluster).
  for (const std::string target :
       {"redis://127.0.0.1:1", "REDIS://127.0.0.1:1/ns",
        "redis://user@127.0.0.1:1,127.0.0.1:2"}) {
    std::unique_ptr<Db> db;
    const Status s = Db::Open(Options(), target, &db);
    EXPECT_TRUE(s.IsIOError()) << target << ": " << s.ToString();
    EXPECT_TRUE(Holds(s, target)) << s.ToString();
    EXPECT_TRUE(Holds(s, "127.0.0.1:1")) << s.ToString();
    EXPECT_EQ(db, nullptr);
  }
  std::unique_ptr<Db> db;
  // TLS is refused by name.
  Status s = Db::Open(Options(), "rediss://127.0.0.1:1", &db);
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
  EXPECT_TRUE(Holds(s, "TLS")) << s.ToString();
  // A password never goes in a target, and is not repeated.
  s = Db::Open(Options(), "redis://app:s3cret@127.0.0.1:1", &db);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_FALSE(Holds(s, "s3cret")) << s.ToString();
  EXPECT_TRUE(Holds(s, "redis://app:***@127.0.0.1:1")) << s.ToString();
  EXPECT_TRUE(Holds(s, "TALLY_REDIS_PASSWORD_FILE")) << s.ToString();
  // Bad parts are named.
  for (const auto& [target, part] :
       std::vector<std::pair<std::string, std::string>>{
           {"redis://127.0.0.1", "is not HOST:PORT"},
           {"redis://127.0.0.1:0", "is not HOST:PORT"},
           {"redis://127.0.0.1:1/bad{ns}", "namespace"},
           {"redis://127.0.0.1:1?replicas=99", "replicas="},
           {"redis://127.0.0.1:1?colour=red", "unknown parameter"}}) {
    s = Db::Open(Options(), target, &db);
    EXPECT_TRUE(s.IsInvalidArgument()) << target << ": " << s.ToString();
    EXPECT_TRUE(Holds(s, part)) << target << ": " << s.ToString();
  }
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
