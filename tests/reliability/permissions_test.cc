// Permissions: a new database is private to its owner (directory 0700,
// files 0600) whatever the umask, and a path that leads into someone else's
// directory (a symlink) or someone else's database is refused.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "tally/admin.h"
#include "tally/checkpoint.h"
#include "tally/db.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kOtherUid = 65534;  // "nobody" on Debian

unsigned ModeOf(const fs::path& p) {
  struct stat st;
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

// Restores the process umask when the test ends.
class Umask {
 public:
  explicit Umask(mode_t mask) : old_(::umask(mask)) {}
  ~Umask() { ::umask(old_); }

 private:
  const mode_t old_;
};

class Permissions : public ::testing::TestWithParam<mode_t> {};

TEST_P(Permissions, NewDatabaseIsPrivateWhateverTheUmask) {
  Umask mask(GetParam());
  test::TempDir dir;
  const std::string path = dir.Sub("db");
  {
    auto db = test::OpenOrDie(path);
    ASSERT_NE(db, nullptr);
    ASSERT_OK(db->CreateCounter("c", {4}));
    ASSERT_OK(db->IncrementOnce("c", "e1", 1));
    ASSERT_OK(tally::Compact(*db));  // SST files, a new MANIFEST, OPTIONS
    ASSERT_OK(tally::Checkpoint(*db, dir.Sub("copy")));
  }
  EXPECT_EQ(ModeOf(path), 0700u);
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(path)) {
    if (e.is_directory()) {
      EXPECT_EQ(ModeOf(e.path()), 0700u) << e.path();
    } else {
      EXPECT_EQ(ModeOf(e.path()), 0600u) << e.path();
      ++files;
    }
  }
  EXPECT_GE(files, 5);  // CURRENT, MANIFEST, OPTIONS, LOCK, LOG, WAL, SST
  EXPECT_EQ(ModeOf(dir.Sub("copy")), 0700u);
}

INSTANTIATE_TEST_SUITE_P(Umasks, Permissions,
                         ::testing::Values(mode_t{0}, mode_t{022}, mode_t{077}),
                         [](const auto& info) {
                           return "umask" + std::to_string(info.param);
                         });

// Only root can hand a directory to another user.
#define SKIP_UNLESS_ROOT() \
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to chown to uid 65534"

TEST(Ownership, DatabaseOfAnotherUserIsRefused) {
  SKIP_UNLESS_ROOT();
  test::TempDir dir;
  const std::string path = dir.Sub("db");
  { ASSERT_NE(test::OpenOrDie(path), nullptr); }
  ASSERT_EQ(::chown(path.c_str(), kOtherUid, kOtherUid), 0);
  std::unique_ptr<Db> db;
  Status s = Db::Open(Options(), path, &db);
  ASSERT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_EQ(s.message(), "refusing to open " + path +
                             ": it is owned by uid 65534, not by this "
                             "process's uid 0; open it as its owner");
  EXPECT_EQ(db, nullptr);
  Options ro;
  ro.read_only = true;
  EXPECT_TRUE(Db::Open(ro, path, &db).IsInvalidArgument());
}

TEST(Ownership, SymlinkIntoAnotherUsersDirectoryIsRefused) {
  SKIP_UNLESS_ROOT();
  test::TempDir dir;
  const std::string theirs = dir.Sub("theirs");
  ASSERT_EQ(::mkdir(theirs.c_str(), 0755), 0);
  ASSERT_EQ(::chown(theirs.c_str(), kOtherUid, kOtherUid), 0);
  const std::string link = dir.Sub("link");
  fs::create_symlink(theirs, link);
  std::unique_ptr<Db> db;
  Status s = Db::Open(Options(), link, &db);
  ASSERT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_EQ(s.message(), "refusing to open " + link +
                             ": it is a symlink into " + theirs +
                             ", which is owned by uid 65534, not by "
                             "this process's uid 0");
  // Nothing was created there.
  EXPECT_TRUE(fs::is_empty(theirs));
  // A symlink to a missing directory inside theirs is refused too.
  const std::string link2 = dir.Sub("link2");
  fs::create_symlink(theirs + "/db", link2);
  EXPECT_TRUE(Db::Open(Options(), link2, &db).IsInvalidArgument());
  EXPECT_TRUE(fs::is_empty(theirs));
}

TEST(Ownership, SymlinkToOwnDirectoryWorks) {
  test::TempDir dir;
  const std::string real = dir.Sub("real");
  const std::string link = dir.Sub("link");
  { ASSERT_NE(test::OpenOrDie(real), nullptr); }
  fs::create_symlink(real, link);
  auto db = test::OpenOrDie(link);
  ASSERT_NE(db, nullptr);
  ASSERT_OK(db->CreateCounter("c", {1}));
}

}  // namespace
}  // namespace tally
