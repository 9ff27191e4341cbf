// CompleteClaim with counts on the cluster (docs/cluster.md, "Claims"):
// the record is written completing (decided), then the counts are applied
// as once-ops under ids derived from the claim, its token and its attempt,
// then the record is written done. These tests put the database in the
// states a client killed between the steps leaves, through the cluster
// client as such a client would have left them, and check what the public
// API answers from there:
//   - a completing record without its counts, or with some of them: it
//     reads as done; the holder's retry finishes it, each count once, the
//     first result kept; a retry with other counts is refused;
//   - the derived ids are the counters' markers (ListMarkers shows them),
//     and a refused batch's next attempt gets ids of its own.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "cluster/claim_counts.h"
#include "cluster/client/cluster_client.h"
#include "cluster/app_client.h"
#include "cluster/cluster_target.h"
#include "cluster/keys.h"
#include "cluster/records.h"
#include "cluster/target.h"
#include "tally/limits.h"
#include "tally/tally.h"
#include "testutil/testutil.h"

namespace tally::cluster {
namespace {

using test::OkValue;

constexpr int64_t kLease = 60'000;

class ClaimsCrash : public ::testing::Test {
 protected:
  void SetUp() override {
    static int tests = 0;
    target_ = test::ClusterTarget("claimcrash" + std::to_string(++tests) + "-");
    if (target_.empty()) GTEST_SKIP() << "no cluster: TALLY_REDIS_ENV is unset";
    ASSERT_OK(Db::Open(Options(), target_, &db_));
    ASSERT_OK(test::ConnectAppClient(target_, &keys_, &client_));
    ASSERT_OK(db_->CreateCounter("items", CounterSpec{4}));
    ASSERT_OK(db_->CreateCounter("seen", CounterSpec{2}));
  }

  // The counts of the tests: two plain ops (one pinned by an affinity
  // key) and a once-op of the caller's.
  static Batch Counts() {
    Batch b;
    b.Add("items", 2);
    IncrementOptions pinned;
    pinned.affinity_key = "dev-7";
    b.Add("items", 3, pinned);
    b.AddOnce("seen", "order-event-1", 1);
    return b;
  }

  // Leaves claim `key` (held by token 1) completing with `counts` and
  // result `result`, as a client killed right after its first step leaves
  // it: the record only.
  void LeaveCompleting(const std::string& key, const Batch& counts,
                       const std::string& result, StoredClaim* c) {
    const ClaimInfo held = OkValue(db_->GetClaim(key));
    ASSERT_EQ(held.state, ClaimState::kHeld);
    c->rec.state = static_cast<uint8_t>(ClaimState::kDone);
    c->rec.token = held.token;
    c->rec.holder = held.holder;
    c->rec.granted_at_ms = held.granted_at_ms;
    c->rec.lease_until_ms = held.lease_until_ms;
    c->rec.ended_at_ms = held.granted_at_ms + 5;
    c->rec.result = result;
    c->completing = true;
    c->attempt = 0;
    c->counts = CountsDigest(counts);
    const std::string record = KeySpace::Claim(keys_->ClaimTag(key), key);
    Command set;
    set.args = {"SET", record, EncodeClaim(*c)};
    set.slot = ClusterClient::SlotOf(record);
    std::vector<Reply> replies;
    ASSERT_OK(client_->Run({set}, &replies));
    ASSERT_EQ(replies[0].kind, Reply::Kind::kStatus) << replies[0].str;
  }

  std::string target_;
  std::unique_ptr<Db> db_;
  std::unique_ptr<KeySpace> keys_;
  std::unique_ptr<ClusterClient> client_;
};

TEST_F(ClaimsCrash, AKilledCompletionIsFinishedByItsRetryCountingEachOnce) {
  ASSERT_EQ(OkValue(db_->Claim("order:1", "w1", kLease)).claim.token, 1u);
  StoredClaim c;
  ASSERT_NO_FATAL_FAILURE(LeaveCompleting("order:1", Counts(), "row 1", &c));
  // The client died after counting its first op (under its derived id, at
  // the completion's time, as DeriveCounts makes it) and before the rest.
  OnceOptions at;
  at.event_time_ms = c.rec.ended_at_ms;
  ASSERT_OK(
      db_->IncrementOnce("items", DerivedEventId("order:1", 1, 0, 0), 2, at));
  // Meanwhile the claim reads done (its decision is made), the counts
  // partly visible; nobody else can take it, and a release changes nothing.
  const ClaimInfo seen = OkValue(db_->GetClaim("order:1"));
  EXPECT_EQ(seen.state, ClaimState::kDone);
  EXPECT_EQ(seen.result, "row 1");
  EXPECT_EQ(OkValue(db_->ReadExact("items")), 2);
  EXPECT_EQ(OkValue(db_->Claim("order:1", "w2", kLease)).answer,
            ClaimAnswer::kDone);
  EXPECT_EQ(OkValue(db_->ReleaseClaim("order:1", 1)).answer, ClaimAnswer::kDone);
  // A retry with other counts is refused: only the marked batch finishes.
  Batch other;
  other.Add("items", 9);
  const Result<ClaimResult> wrong =
      db_->CompleteClaim("order:1", 1, "row 1", other);
  ASSERT_FALSE(wrong.ok());
  EXPECT_TRUE(wrong.status().IsInvalidArgument()) << wrong.status().ToString();
  EXPECT_EQ(OkValue(db_->ReadExact("items")), 2);

  // The worker's retry finishes it: the op counted before is a duplicate,
  // the others count now, the first result stays.
  const ClaimResult done =
      OkValue(db_->CompleteClaim("order:1", 1, "row 2", Counts()));
  EXPECT_EQ(done.answer, ClaimAnswer::kCompleted);
  EXPECT_TRUE(done.repeated);
  EXPECT_EQ(done.claim.state, ClaimState::kDone);
  EXPECT_EQ(done.claim.result, "row 1");
  EXPECT_EQ(done.claim.ended_at_ms, c.rec.ended_at_ms);
  ASSERT_EQ(done.counted.size(), 3u);
  EXPECT_EQ(done.counted[0].outcome, Outcome::kDuplicate);
  EXPECT_EQ(done.counted[1].outcome, Outcome::kApplied);
  EXPECT_EQ(done.counted[2].outcome, Outcome::kApplied);
  EXPECT_EQ(OkValue(db_->ReadExact("items")), 5);
  EXPECT_EQ(OkValue(db_->ReadExact("seen")), 1);
  // Done for good: a later retry counts nothing.
  const ClaimResult again =
      OkValue(db_->CompleteClaim("order:1", 1, "row 3", Counts()));
  EXPECT_EQ(again.answer, ClaimAnswer::kCompleted);
  EXPECT_TRUE(again.repeated);
  EXPECT_TRUE(again.counted.empty());
  EXPECT_EQ(OkValue(db_->ReadExact("items")), 5);
  EXPECT_EQ(OkValue(db_->ReadExact("seen")), 1);
  ListClaimsOptions o;
  o.filter = ClaimFilter::kDone;
  const std::vector<ClaimInfo> listed = OkValue(db_->ListClaims(o));
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].key, "order:1");
}

TEST_F(ClaimsCrash, AKilledCompletionWithNothingCountedCountsAllOnce) {
  ASSERT_OK(db_->Claim("order:2", "w1", kLease));
  StoredClaim c;
  ASSERT_NO_FATAL_FAILURE(LeaveCompleting("order:2", Counts(), "row", &c));
  EXPECT_EQ(OkValue(db_->ReadExact("items")), 0);
  // A stale token is stale, completing or not.
  ASSERT_EQ(OkValue(db_->GetClaim("order:2")).state, ClaimState::kDone);
  for (int i = 0; i < 2; ++i) {
    const ClaimResult r = OkValue(db_->CompleteClaim("order:2", 1, "", Counts()));
    EXPECT_EQ(r.answer, ClaimAnswer::kCompleted);
    EXPECT_TRUE(r.repeated);
    EXPECT_EQ(r.counted.size(), i == 0 ? 3u : 0u);
  }
  EXPECT_EQ(OkValue(db_->ReadExact("items")), 5);
  EXPECT_EQ(OkValue(db_->ReadExact("seen")), 1);
}

TEST_F(ClaimsCrash, DerivedIdsAreTheCountersMarkersPerAttempt) {
  CounterSpec stock;
  stock.bounds = CounterBounds::AtLeast(0);
  ASSERT_OK(db_->CreateCounter("stock", stock));
  ASSERT_OK(db_->Claim("order:3", "w1", kLease));
  Batch take;
  take.Add("items", 1);
  take.Add("stock", -1);
  // Marked while the stock had a unit (a client killed then), which is
  // gone by the retry: the batch is refused with nothing of it sent, the
  // claim is held again, and its next attempt gets ids of its own.
  StoredClaim c;
  ASSERT_NO_FATAL_FAILURE(LeaveCompleting("order:3", take, "", &c));
  const Result<ClaimResult> refused =
      db_->CompleteClaim("order:3", 1, "", take);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(refused.status().IsOutOfRange()) << refused.status().ToString();
  const ClaimInfo held = OkValue(db_->GetClaim("order:3"));
  EXPECT_EQ(held.state, ClaimState::kHeld);
  EXPECT_EQ(held.token, 1u);
  EXPECT_EQ(held.result, "");
  EXPECT_EQ(OkValue(db_->CountMarkers("items")), 0u);
  ASSERT_OK(db_->Increment("stock", 1));
  const ClaimResult done = OkValue(db_->CompleteClaim("order:3", 1, "ok", take));
  EXPECT_EQ(done.answer, ClaimAnswer::kCompleted);
  EXPECT_FALSE(done.repeated);
  EXPECT_EQ(done.claim.result, "ok");
  // Each plain op left a marker under its derived id, attempt 1.
  const std::vector<MarkerInfo> items =
      OkValue(db_->ListMarkers("items", ListMarkersOptions()));
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].event_id, "claim:order:3#1.1.0");
  const std::vector<MarkerInfo> stocks =
      OkValue(db_->ListMarkers("stock", ListMarkersOptions()));
  ASSERT_EQ(stocks.size(), 1u);
  EXPECT_EQ(stocks[0].event_id, "claim:order:3#1.1.1");
  EXPECT_EQ(OkValue(db_->ReadExact("items")), 1);
  EXPECT_EQ(OkValue(db_->ReadExact("stock")), 0);
}

TEST(ClaimCounts, DerivedIdsFitAnEventIdAndNeverCollide) {
  EXPECT_EQ(DerivedEventId("k", 3, 1, 7), "claim:k#3.1.7");
  const std::string long_key(kMaxClaimKeyBytes, 'k');
  const std::string id = DerivedEventId(long_key, 18446744073709551615u,
                                        18446744073709551615u, 65535);
  EXPECT_LE(id.size(), kMaxEventIdBytes);
  EXPECT_EQ(id.rfind("claim~", 0), 0u);
  EXPECT_NE(DerivedEventId(long_key, 1, 0, 0),
            DerivedEventId(long_key + "", 1, 0, 1));
  // A key holding what looks like a tail is still its own claim.
  EXPECT_NE(DerivedEventId("a#1.0.0", 1, 0, 0), DerivedEventId("a", 1, 0, 0));
}

}  // namespace
}  // namespace tally::cluster
