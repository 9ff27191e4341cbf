// A keyed counter survives the database's copies: a backup restored and a
// checkpoint opened hold every key with its value, markers and top keys,
// verify clean, and a redelivered once-increment there is a duplicate.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tally/admin.h"
#include "tally/backup.h"
#include "tally/checkpoint.h"
#include "tally/db.h"
#include "testutil/db_fixture.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

using test::Dump;

class KeyedCopies : public test::DbTest {
 protected:
  // "likes", keyed, 3 shards: post-i has i + 1 likes (users u-0..u-i).
  // A named counter beside it.
  void Populate(Db* db) {
    CounterSpec spec{3};
    spec.keyed = true;
    ASSERT_OK(db->CreateCounter("likes", spec));
    ASSERT_OK(db->CreateCounter("orders", {2}));
    for (int post = 0; post < kPosts; ++post) {
      for (int user = 0; user <= post; ++user) {
        ASSERT_OK(db->IncrementOnce({"likes", Post(post)},
                                    "u-" + std::to_string(user), 1));
      }
    }
    ASSERT_OK(db->IncrementOnce("orders", "o-1", 7));
  }

  // What every copy must hold, read the way an app reads it.
  void ExpectHoldsPopulated(Db* copy) {
    std::vector<std::string> posts;
    for (int post = 0; post < kPosts; ++post) posts.push_back(Post(post));
    std::vector<std::string_view> keys(posts.begin(), posts.end());
    auto values = copy->ReadKeys("likes", keys);
    ASSERT_OK(values);
    for (int post = 0; post < kPosts; ++post) {
      EXPECT_EQ((*values)[post], post + 1) << posts[post];
      EXPECT_EQ(test::OkValue(copy->CountMarkers({"likes", posts[post]})),
                static_cast<uint64_t>(post) + 1);
    }
    ListKeysOptions all;
    all.limit = 100;
    EXPECT_EQ(test::OkValue(copy->ListKeys("likes", all)).size(),
              static_cast<size_t>(kPosts));
    auto top = copy->TopKeys("likes", 3, TopKeysOptions{true});
    ASSERT_OK(top);
    ASSERT_EQ(top->keys.size(), 3u);
    EXPECT_EQ(top->keys[0].key, Post(kPosts - 1));
    EXPECT_EQ(top->keys[0].value, kPosts);
    EXPECT_EQ(test::OkValue(copy->ReadExact("orders")), 7);
    VerifyReport r;
    ASSERT_OK(tally::Verify(*copy, &r));
    EXPECT_TRUE(r.ok()) << Dump(r);
    EXPECT_EQ(r.keys_compared, static_cast<uint64_t>(kPosts));
    // Exactly-once carries over, per key.
    EXPECT_EQ(test::OkValue(copy->IncrementOnce({"likes", Post(4)}, "u-2", 1))
                  .outcome,
              Outcome::kDuplicate);
    EXPECT_EQ(test::OkValue(copy->IncrementOnce({"likes", Post(1)}, "u-2", 1))
                  .outcome,
              Outcome::kApplied);
  }

  static std::string Post(int i) { return "post-" + std::to_string(i); }
  static constexpr int kPosts = 12;
};

TEST_F(KeyedCopies, SurvivesBackupAndRestore) {
  auto db = Open();
  Populate(db.get());
  auto backup = tally::CreateBackup(*db, Sub("backups"));
  ASSERT_OK(backup);
  // Written after the backup: not in the restored copy.
  ASSERT_OK(db->IncrementOnce({"likes", Post(0)}, "late", 1));
  ASSERT_OK(VerifyBackup(Sub("backups"), backup->id));
  ASSERT_OK(RestoreBackup(Sub("backups"), backup->id, Sub("restored")));
  auto restored = OpenAt("restored");
  ASSERT_NE(restored, nullptr);
  EXPECT_TRUE(test::OkValue(restored->DescribeCounter("likes")).keyed);
  ExpectHoldsPopulated(restored.get());
}

TEST_F(KeyedCopies, SurvivesCheckpoint) {
  auto db = Open();
  Populate(db.get());
  ASSERT_OK(tally::Checkpoint(*db, Sub("checkpoint")));
  ASSERT_OK(db->IncrementOnce({"likes", Post(0)}, "late", 1));
  db.reset();
  auto copy = OpenAt("checkpoint");
  ASSERT_NE(copy, nullptr);
  EXPECT_TRUE(test::OkValue(copy->DescribeCounter("likes")).keyed);
  ExpectHoldsPopulated(copy.get());
}

}  // namespace
}  // namespace tally
