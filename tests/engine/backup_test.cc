// Backups: create (from a writer and from a read-only instance beside it),
// list, verify, restore, and a damaged backup is caught by verify.
#include "tally/admin.h"
#include "tally/backup.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "testutil/db_fixture.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

class Backup : public test::DbTest {};

TEST_F(Backup, CreateListVerifyRestore) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("c", {3}));
  for (int i = 0; i < 50; ++i) ASSERT_OK(db->IncrementOnce("c", std::to_string(i), 2));
  auto first = tally::CreateBackup(*db, Sub("backups"));
  ASSERT_OK(first);
  ASSERT_OK(db->Increment("c", 1));
  auto second = tally::CreateBackup(*db, Sub("backups"));
  ASSERT_OK(second);
  EXPECT_GT(second->id, first->id);

  std::vector<BackupInfo> list;
  ASSERT_OK(ListBackups(Sub("backups"), &list));
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].id, first->id);
  ASSERT_OK(VerifyBackup(Sub("backups"), first->id));

  ASSERT_OK(RestoreBackup(Sub("backups"), first->id, Sub("r1")));
  ASSERT_OK(RestoreBackup(Sub("backups"), second->id, Sub("r2")));
  auto r1 = OpenAt("r1");
  auto r2 = OpenAt("r2");
  ASSERT_NE(r1, nullptr);
  ASSERT_NE(r2, nullptr);
  EXPECT_EQ(test::OkValue(r1->ReadExact("c")), 100);
  EXPECT_EQ(test::OkValue(r2->ReadExact("c")), 101);
  EXPECT_EQ(test::OkValue(r1->CountMarkers("c")), 50u);
  EXPECT_EQ(test::OkValue(r1->IncrementOnce("c", "7", 2)).outcome,
            Outcome::kDuplicate);

  EXPECT_TRUE(
      RestoreBackup(Sub("backups"), first->id, Sub("r1")).IsInvalidArgument())
      << "never restore over a database";
  EXPECT_FALSE(VerifyBackup(Sub("backups"), 99).ok());
  EXPECT_TRUE(ListBackups(Sub("none"), &list).IsNotFound());
}

TEST_F(Backup, FromReadOnlyInstanceBesideWriter) {
  auto writer = Open();
  ASSERT_OK(writer->CreateCounter("c", {2}));
  for (int i = 0; i < 20; ++i) ASSERT_OK(writer->Increment("c", 3));
  Options ro;
  ro.read_only = true;
  auto reader = Open(ro);
  ASSERT_NE(reader, nullptr);
  auto b = tally::CreateBackup(*reader, Sub("backups"));
  ASSERT_OK(b);
  ASSERT_OK(RestoreBackup(Sub("backups"), b->id, Sub("restored")));
  auto restored = OpenAt("restored");
  ASSERT_NE(restored, nullptr);
  EXPECT_EQ(test::OkValue(restored->ReadExact("c")), 60);
}

// Flipping bytes in a backed-up file makes verify fail instead of passing a
// backup that would restore wrong numbers.
TEST_F(Backup, DamagedBackupFailsVerify) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("c", {2}));
  for (int i = 0; i < 200; ++i) ASSERT_OK(db->IncrementOnce("c", std::to_string(i), 1));
  ASSERT_OK(tally::Compact(*db));  // puts the data in SST files
  auto b = tally::CreateBackup(*db, Sub("backups"));
  ASSERT_OK(b);
  int damaged = 0;
  for (const auto& e :
       std::filesystem::recursive_directory_iterator(Sub("backups"))) {
    if (e.is_regular_file() && e.path().extension() == ".sst") {
      std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(100);
      f.write("garbage!", 8);
      ++damaged;
    }
  }
  ASSERT_GT(damaged, 0);
  Status s = VerifyBackup(Sub("backups"), b->id);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
}

}  // namespace
}  // namespace tally
