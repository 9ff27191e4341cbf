// Conformance: claims (Claim, CompleteClaim, ReleaseClaim, GetClaim,
// ListClaims). One holder at a time with a fencing token that only grows;
// leases that run out by the clock; a stale token changes nothing; a
// completion and its counts are written together, for good.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "conformance/conformance.h"
#include "tally/limits.h"

namespace tally::conformance {
namespace {

constexpr int64_t kLease = 30 * kSecond;

class Claims : public ConformanceTest {
 protected:
  void SetUp() override {
    ConformanceTest::SetUp();
    ASSERT_NE(db_, nullptr);
    ASSERT_OK(db_->CreateCounter("items", CounterSpec{4}));
  }
  static Batch CountOne() {
    Batch b;
    b.Add("items", 1);
    return b;
  }
};

TEST_P(Claims, OneHolderAtATimeThenDoneForEveryone) {
  const ClaimResult a = Got(db_->Claim("item:1", "worker-a", kLease));
  EXPECT_EQ(a.answer, ClaimAnswer::kAcquired);
  EXPECT_FALSE(a.repeated);
  EXPECT_EQ(a.claim.token, 1u);
  EXPECT_EQ(a.claim.state, ClaimState::kHeld);
  EXPECT_EQ(a.claim.holder, "worker-a");
  EXPECT_EQ(a.claim.granted_at_ms, kStart);
  EXPECT_EQ(a.claim.lease_until_ms, kStart + kLease);
  const ClaimResult b = Got(db_->Claim("item:1", "worker-b", kLease));
  EXPECT_EQ(b.answer, ClaimAnswer::kBusy);
  EXPECT_EQ(b.claim.holder, "worker-a");
  EXPECT_EQ(b.claim.lease_until_ms, kStart + kLease);
  // The holder asking again renews its lease, keeping its token.
  clock_.Advance(10 * kSecond);
  const ClaimResult renewed = Got(db_->Claim("item:1", "worker-a", kLease));
  EXPECT_EQ(renewed.answer, ClaimAnswer::kAcquired);
  EXPECT_TRUE(renewed.repeated);
  EXPECT_EQ(renewed.claim.token, 1u);
  EXPECT_EQ(renewed.claim.lease_until_ms, Now() + kLease);

  const ClaimResult done =
      Got(db_->CompleteClaim("item:1", 1, "row 7", CountOne()));
  EXPECT_EQ(done.answer, ClaimAnswer::kCompleted);
  EXPECT_FALSE(done.repeated);
  EXPECT_EQ(done.claim.state, ClaimState::kDone);
  EXPECT_EQ(done.claim.result, "row 7");
  EXPECT_EQ(done.claim.ended_at_ms, Now());
  ASSERT_EQ(done.counted.size(), 1u);
  EXPECT_EQ(done.counted[0].outcome, Outcome::kApplied);
  // A retried completion counts nothing again and keeps the first result.
  const ClaimResult retry =
      Got(db_->CompleteClaim("item:1", 1, "row 8", CountOne()));
  EXPECT_EQ(retry.answer, ClaimAnswer::kCompleted);
  EXPECT_TRUE(retry.repeated);
  EXPECT_EQ(retry.claim.result, "row 7");
  EXPECT_TRUE(retry.counted.empty());
  // Done for every later delivery, long after any lease, and a reopen.
  clock_.Advance(kMaxLeaseMs);
  Reopen();
  ASSERT_NE(db_, nullptr);
  for (const char* who : {"worker-a", "worker-b"}) {
    const ClaimResult later = Got(db_->Claim("item:1", who, kLease));
    EXPECT_EQ(later.answer, ClaimAnswer::kDone);
    EXPECT_EQ(later.claim.token, 1u);
    EXPECT_EQ(later.claim.result, "row 7");
  }
  EXPECT_EQ(Got(db_->ReleaseClaim("item:1", 1)).answer, ClaimAnswer::kDone);
  EXPECT_EQ(Got(db_->GetClaim("item:1")).state, ClaimState::kDone);
  EXPECT_EQ(Got(db_->ReadExact("items")), 1);
}

TEST_P(Claims, AnExpiredLeaseIsGrantedAgainWithAHigherToken) {
  ASSERT_EQ(Got(db_->Claim("item:2", "slow", kLease)).claim.token, 1u);
  clock_.Advance(kLease - 1);
  EXPECT_EQ(Got(db_->Claim("item:2", "fast", kLease)).answer,
            ClaimAnswer::kBusy);
  EXPECT_EQ(Got(db_->GetClaim("item:2")).state, ClaimState::kHeld);
  clock_.Advance(1);  // the lease ends at granted + lease
  EXPECT_EQ(Got(db_->GetClaim("item:2")).state, ClaimState::kExpired);
  const ClaimResult fast = Got(db_->Claim("item:2", "fast", kLease));
  EXPECT_EQ(fast.answer, ClaimAnswer::kAcquired);
  EXPECT_EQ(fast.claim.token, 2u);
  EXPECT_EQ(fast.claim.holder, "fast");
  // The slow holder wakes up: its completion and release change nothing,
  // and its counts are not applied.
  const ClaimResult stale =
      Got(db_->CompleteClaim("item:2", 1, "slow row", CountOne()));
  EXPECT_EQ(stale.answer, ClaimAnswer::kStaleToken);
  EXPECT_EQ(stale.claim.token, 2u);
  EXPECT_EQ(stale.claim.state, ClaimState::kHeld);
  EXPECT_TRUE(stale.counted.empty());
  EXPECT_EQ(Got(db_->ReleaseClaim("item:2", 1)).answer,
            ClaimAnswer::kStaleToken);
  EXPECT_EQ(Got(db_->ReadExact("items")), 0);
  EXPECT_EQ(Got(db_->CompleteClaim("item:2", 2, "fast row", CountOne())).answer,
            ClaimAnswer::kCompleted);
  EXPECT_EQ(Got(db_->CompleteClaim("item:2", 1, "", CountOne())).answer,
            ClaimAnswer::kStaleToken);
  EXPECT_EQ(Got(db_->ReadExact("items")), 1);
  EXPECT_EQ(Got(db_->GetClaim("item:2")).result, "fast row");
}

TEST_P(Claims, TheTokenNotTheClockDecidesACompletion) {
  // A lease that ran out with nobody granted the key since still completes.
  ASSERT_OK(db_->Claim("k", "a", kLease));
  clock_.Advance(2 * kLease);
  const ClaimResult done = Got(db_->CompleteClaim("k", 1, "late"));
  EXPECT_EQ(done.answer, ClaimAnswer::kCompleted);
  EXPECT_EQ(done.claim.state, ClaimState::kDone);
}

TEST_P(Claims, AReleasedClaimGoesToTheNextGrant) {
  ASSERT_OK(db_->Claim("k", "a", kLease));
  const ClaimResult r = Got(db_->ReleaseClaim("k", 1));
  EXPECT_EQ(r.answer, ClaimAnswer::kReleased);
  EXPECT_FALSE(r.repeated);
  EXPECT_EQ(r.claim.state, ClaimState::kReleased);
  EXPECT_EQ(r.claim.ended_at_ms, kStart);
  const ClaimResult again = Got(db_->ReleaseClaim("k", 1));
  EXPECT_EQ(again.answer, ClaimAnswer::kReleased);
  EXPECT_TRUE(again.repeated);
  EXPECT_EQ(Got(db_->CompleteClaim("k", 1, "x", CountOne())).answer,
            ClaimAnswer::kStaleToken);
  // The same holder asking again gets a new grant, not its old one.
  const ClaimResult next = Got(db_->Claim("k", "a", kLease));
  EXPECT_EQ(next.answer, ClaimAnswer::kAcquired);
  EXPECT_FALSE(next.repeated);
  EXPECT_EQ(next.claim.token, 2u);
  EXPECT_EQ(next.claim.ended_at_ms, 0);
  EXPECT_EQ(Got(db_->ReadExact("items")), 0);
}

TEST_P(Claims, RefusedCountsLeaveTheClaimHeld) {
  CounterSpec stock;
  stock.bounds = CounterBounds::AtLeast(0);
  ASSERT_OK(db_->CreateCounter("stock", stock));
  ASSERT_OK(db_->Claim("order:9", "a", kLease));
  Batch take;
  take.Add("items", 1);
  take.Add("stock", -1);
  EXPECT_TRUE(Fails(db_->CompleteClaim("order:9", 1, "shipped", take),
                    Code::kOutOfRange));
  Batch bad;
  bad.Add("nope", 1);
  EXPECT_TRUE(
      Fails(db_->CompleteClaim("order:9", 1, "", bad), Code::kNotFound));
  EXPECT_EQ(Got(db_->GetClaim("order:9")).state, ClaimState::kHeld);
  EXPECT_EQ(Got(db_->ReadExact("items")), 0);
  ASSERT_OK(db_->Increment("stock", 1));
  const ClaimResult ok = Got(db_->CompleteClaim("order:9", 1, "shipped", take));
  EXPECT_EQ(ok.answer, ClaimAnswer::kCompleted);
  ASSERT_EQ(ok.counted.size(), 2u);
  EXPECT_EQ(ok.counted[1].value, 0);
  EXPECT_EQ(Got(db_->ReadExact("items")), 1);
  EXPECT_EQ(Got(db_->ReadExact("stock")), 0);
}

TEST_P(Claims, ListClaimsFiltersAndPages) {
  for (int i = 0; i < 6; ++i) {
    ASSERT_OK(db_->Claim("k" + std::to_string(i), "w", kLease));
  }
  ASSERT_OK(db_->CompleteClaim("k1", 1, "one"));
  ASSERT_OK(db_->CompleteClaim("k4", 1, "four"));
  ASSERT_OK(db_->ReleaseClaim("k2", 1));
  ListClaimsOptions o;
  const std::vector<ClaimInfo> all = Got(db_->ListClaims(o));
  ASSERT_EQ(all.size(), 6u);
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].key, "k" + std::to_string(i));
  }
  EXPECT_EQ(all[2].state, ClaimState::kReleased);
  o.filter = ClaimFilter::kDone;
  const std::vector<ClaimInfo> done = Got(db_->ListClaims(o));
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].result, "one");
  EXPECT_EQ(done[1].result, "four");
  o.filter = ClaimFilter::kHeld;
  o.limit = 2;
  o.start_after = "k0";
  const std::vector<ClaimInfo> page = Got(db_->ListClaims(o));
  ASSERT_EQ(page.size(), 2u);
  EXPECT_EQ(page[0].key, "k3");
  EXPECT_EQ(page[1].key, "k5");
  clock_.Advance(kLease);
  o.start_after.clear();
  EXPECT_TRUE(Got(db_->ListClaims(o)).empty()) << "every lease ran out";
  o.filter = ClaimFilter::kAll;
  o.limit = 100;
  const std::vector<ClaimInfo> later = Got(db_->ListClaims(o));
  ASSERT_EQ(later.size(), 6u);
  EXPECT_EQ(later[0].state, ClaimState::kExpired);  // held, lease run out
  o.limit = 0;
  EXPECT_TRUE(Fails(db_->ListClaims(o), Code::kInvalidArgument));
  o.limit = kMaxListClaims + 1;
  EXPECT_TRUE(Fails(db_->ListClaims(o), Code::kInvalidArgument));
}

TEST_P(Claims, BadInputIsRefusedAndChangesNothing) {
  EXPECT_TRUE(Fails(db_->Claim("", "w", kLease), Code::kInvalidArgument));
  EXPECT_TRUE(
      Fails(db_->Claim(std::string(kMaxClaimKeyBytes + 1, 'k'), "w", kLease),
            Code::kInvalidArgument));
  EXPECT_TRUE(Fails(db_->Claim("a\nb", "w", kLease), Code::kInvalidArgument));
  EXPECT_TRUE(Fails(db_->Claim("k", "", kLease), Code::kInvalidArgument));
  EXPECT_TRUE(
      Fails(db_->Claim("k", std::string(kMaxHolderBytes + 1, 'h'), kLease),
            Code::kInvalidArgument));
  EXPECT_TRUE(Fails(db_->Claim("k", "w", 0), Code::kInvalidArgument));
  EXPECT_TRUE(
      Fails(db_->Claim("k", "w", kMaxLeaseMs + 1), Code::kInvalidArgument));
  EXPECT_TRUE(Fails(db_->CompleteClaim("k", 1, ""), Code::kNotFound));
  EXPECT_TRUE(Fails(db_->ReleaseClaim("k", 1), Code::kNotFound));
  EXPECT_TRUE(Fails(db_->GetClaim("k"), Code::kNotFound));
  ASSERT_OK(db_->Claim("k", "w", kMaxLeaseMs));
  EXPECT_TRUE(Fails(db_->CompleteClaim("k", 0, ""), Code::kInvalidArgument));
  EXPECT_TRUE(Fails(db_->CompleteClaim("k", 2, ""), Code::kInvalidArgument));
  EXPECT_TRUE(Fails(db_->ReleaseClaim("k", 7), Code::kInvalidArgument));
  EXPECT_TRUE(Fails(
      db_->CompleteClaim("k", 1, std::string(kMaxClaimResultBytes + 1, 'r')),
      Code::kInvalidArgument));
  const ClaimInfo info = Got(db_->GetClaim("k"));
  EXPECT_EQ(info.state, ClaimState::kHeld);
  EXPECT_EQ(info.token, 1u);
  EXPECT_EQ(info.holder, "w");
}

TALLY_CONFORMANCE_SUITE(Claims);

}  // namespace
}  // namespace tally::conformance
