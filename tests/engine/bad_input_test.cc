// Every bad input of the public API gets a Status naming the bad value and
// writes nothing.
#include <gtest/gtest.h>

#include <limits>

#include "tally/admin.h"
#include "tally/limits.h"
#include "testutil/db_fixture.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

class BadInput : public test::DbTest {
 protected:
  void SetUp() override {
    db_ = Open();
    ASSERT_OK(db_->CreateCounter("c", {4}));
  }
  // Nothing may have been written by a refused call.
  void ExpectUntouched() {
    EXPECT_EQ(test::OkValue(db_->ReadExact("c")), 0);
    EXPECT_EQ(test::OkValue(db_->CountMarkers("c")), 0u);
    EXPECT_EQ(test::OkValue(db_->ListCounters()).size(), 1u);
  }
  static void ExpectNames(const Status& s, const std::string& needle) {
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find(needle), std::string::npos)
        << "message '" << s.message() << "' does not name '" << needle << "'";
  }
  std::unique_ptr<Db> db_;
};

TEST_F(BadInput, CounterNames) {
  EXPECT_TRUE(db_->CreateCounter("", {1}).IsInvalidArgument());
  Status s = db_->CreateCounter(std::string(kMaxNameBytes + 1, 'n'), {1});
  EXPECT_TRUE(s.IsInvalidArgument());
  ExpectNames(s, std::to_string(kMaxNameBytes + 1) + " bytes");
  EXPECT_OK(db_->CreateCounter(std::string(kMaxNameBytes, 'n'), {1}));
  ASSERT_OK(db_->DeleteCounter(std::string(kMaxNameBytes, 'n')));
  s = db_->CreateCounter("bad\xff", {1});
  EXPECT_TRUE(s.IsInvalidArgument());
  ExpectNames(s, "'bad\\xff'");
  ExpectNames(s, "UTF-8");
  EXPECT_TRUE(db_->CreateCounter("tab\there", {1}).IsInvalidArgument());
  EXPECT_TRUE(db_->CreateCounter("\xc0\xaf", {1}).IsInvalidArgument())
      << "overlong encodings are not UTF-8";
  EXPECT_OK(db_->CreateCounter("zähler-✓", {1})) << "real UTF-8 is fine";
  ASSERT_OK(db_->DeleteCounter("zähler-✓"));
  ExpectUntouched();
}

TEST_F(BadInput, ShardCounts) {
  Status s = db_->CreateCounter("x", {0});
  EXPECT_TRUE(s.IsInvalidArgument());
  ExpectNames(s, "shard count 0");
  s = db_->CreateCounter("x", {kMaxShards + 1});
  EXPECT_TRUE(s.IsInvalidArgument());
  ExpectNames(s, std::to_string(kMaxShards + 1));
  s = db_->CreateCounter("x", {1, static_cast<ShardPolicy>(9)});
  EXPECT_TRUE(s.IsInvalidArgument());
  ExpectUntouched();
}

TEST_F(BadInput, UnknownCounter) {
  auto r = db_->Increment("missing", 1);
  EXPECT_TRUE(r.status().IsNotFound());
  ExpectNames(r.status(), "'missing'");
  EXPECT_TRUE(db_->IncrementOnce("missing", "e", 1).status().IsNotFound());
  EXPECT_TRUE(db_->ReadExact("missing").status().IsNotFound());
  EXPECT_TRUE(db_->ShardCounts("missing").status().IsNotFound());
  EXPECT_TRUE(db_->CountMarkers("missing").status().IsNotFound());
  EXPECT_TRUE(db_->DeleteCounter("missing").IsNotFound());
  // A malformed name is InvalidArgument even on lookups.
  EXPECT_TRUE(db_->Increment("", 1).status().IsInvalidArgument());
  ExpectUntouched();
}

TEST_F(BadInput, EventIds) {
  EXPECT_TRUE(db_->IncrementOnce("c", "", 1).status().IsInvalidArgument());
  auto r = db_->IncrementOnce("c", std::string(kMaxEventIdBytes + 1, 'e'), 1);
  EXPECT_TRUE(r.status().IsInvalidArgument());
  ExpectNames(r.status(), "event id");
  r = db_->IncrementOnce("c", "id\xfe", 1);
  EXPECT_TRUE(r.status().IsInvalidArgument());
  ExpectNames(r.status(), "'id\\xfe'");
  EXPECT_TRUE(db_->IncrementOnce("c", std::string("a\0b", 3), 1)
                  .status()
                  .IsInvalidArgument());
  EXPECT_OK(db_->IncrementOnce("c", std::string(kMaxEventIdBytes, 'e'), 0));
  EXPECT_EQ(test::OkValue(db_->CountMarkers("c")), 1u);
}

TEST_F(BadInput, DeltaThatWouldOverflow) {
  const int64_t min = std::numeric_limits<int64_t>::min();
  auto r = db_->Increment("c", min);
  EXPECT_TRUE(r.status().IsInvalidArgument());
  ExpectNames(r.status(), std::to_string(min));
  EXPECT_TRUE(db_->IncrementOnce("c", "e", min).status().IsInvalidArgument());
  Batch b;
  b.Add("c", min);
  std::vector<IncrementResult> res;
  EXPECT_TRUE(db_->Apply(b, &res).IsInvalidArgument());
  ExpectUntouched();
}

TEST_F(BadInput, AffinityKeysAndBatchLimit) {
  IncrementOptions o;
  std::string long_key(kMaxAffinityKeyBytes + 1, 'k');
  o.affinity_key = long_key;
  EXPECT_TRUE(db_->Increment("c", 1, o).status().IsInvalidArgument());
  Batch b;
  for (size_t i = 0; i <= kMaxBatchOps; ++i) b.Add("c", 1);
  std::vector<IncrementResult> res;
  Status s = db_->Apply(b, &res);
  EXPECT_TRUE(s.IsInvalidArgument());
  ExpectNames(s, std::to_string(kMaxBatchOps + 1));
  ExpectUntouched();
  EXPECT_GE(tally::GetStats(*db_).rejected, 2u);
}

}  // namespace
}  // namespace tally
