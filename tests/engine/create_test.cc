// Creating a database: a creation interrupted anywhere (a kill, a failed
// write) leaves a directory the next creating open finishes afresh, never
// one that is "not a tally database"; a creation under way is Busy to a
// second creator and not found to readers.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <thread>

#include "engine/format.h"
#include "engine/open_on_env.h"
#include "tally/admin.h"
#include "testutil/interrupted_create.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

using test::CreationStopFs;

bool HasMarker(const std::string& path) {
  return std::filesystem::exists(path + "/" + engine::kCreatingMarker);
}

// `path` opens (creating) as a working database, and again afterwards.
void ExpectCreatesWorkingDatabase(const std::string& path) {
  {
    std::unique_ptr<Db> db;
    Status s = Db::Open(Options(), path, &db);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_OK(db->CreateCounter("c", {2}));
    ASSERT_OK(db->Increment("c", 5));
    ASSERT_OK(db->IncrementOnce("c", "e1", 1));
  }
  EXPECT_FALSE(HasMarker(path));
  Options again;
  again.create_if_missing = false;
  auto db = test::OpenOrDie(path, again);
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), 6);
  VerifyReport report;
  ASSERT_OK(tally::Verify(*db, &report));
  EXPECT_TRUE(report.ok()) << report.problems.front();
}

// Before the fix every later open said "a RocksDB database but not a tally
// database (no column family 'meta')".
void ExpectNotFoundButNotRefused(const std::string& path) {
  for (bool read_only : {false, true}) {
    Options o;
    o.create_if_missing = false;
    o.read_only = read_only;
    std::unique_ptr<Db> db;
    Status s = Db::Open(o, path, &db);
    EXPECT_TRUE(s.IsNotFound()) << s.ToString();
    EXPECT_EQ(s.message().find("not a tally database"), std::string::npos)
        << s.ToString();
  }
}

TEST(Create, Item12_KillAtTheFirstTallyFamilyIsFinishedByTheNextCreate) {
  test::TempDir dir;
  const std::string path = dir.Sub("db");
  test::InterruptCreation(path, CreationStopFs::Mode::kExit);
  ExpectNotFoundButNotRefused(path);
  ExpectCreatesWorkingDatabase(path);
}

TEST(Create, Item12_FailedCreationInAnEmptyDirectoryIsFinishedLater) {
  test::TempDir dir;
  const std::string path = dir.Sub("db");
  // A directory the user made: it keeps its mode.
  ASSERT_EQ(::mkdir(path.c_str(), 0750), 0);
  ASSERT_EQ(::chmod(path.c_str(), 0750), 0);
  test::InterruptCreation(path, CreationStopFs::Mode::kFail);
  ExpectNotFoundButNotRefused(path);
  ExpectCreatesWorkingDatabase(path);
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
}

// A creation under way: a second creator is Busy, a reader finds nothing;
// once it is done, both open the database.
TEST(Create, Item12_CreationUnderWayIsBusyThenOpens) {
  test::TempDir dir;
  const std::string path = dir.Sub("db");
  auto fs = std::make_shared<CreationStopFs>(CreationStopFs::Mode::kHold);
  std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(fs);
  Options held;
  held.rollup_interval_ms = 0;
  std::unique_ptr<Db> first;
  Status first_status;
  std::thread creator([&] { first_status = engine::OpenOnEnv(held, path, env.get(), &first); });
  fs->WaitUntilHeld();
  std::unique_ptr<Db> second;
  Status s = Db::Open(Options(), path, &second);
  EXPECT_TRUE(s.IsBusy()) << s.ToString();
  EXPECT_NE(s.message().find("being created"), std::string::npos)
      << s.ToString();
  ExpectNotFoundButNotRefused(path);
  fs->Release();
  creator.join();
  ASSERT_TRUE(first_status.ok()) << first_status.ToString();
  ASSERT_OK(first->CreateCounter("c", {1}));
  first.reset();
  EXPECT_FALSE(HasMarker(path));
  auto db = test::OpenOrDie(path);
  EXPECT_OK(db->DescribeCounter("c"));
}

}  // namespace
}  // namespace tally
