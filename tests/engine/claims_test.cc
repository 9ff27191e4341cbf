// Claims (Db::Claim, CompleteClaim, ReleaseClaim, GetClaim, ListClaims):
// one holder at a time with a fencing token that only grows; leases that
// run out on the injected clock; a stale holder's completion refused; the
// completion and its counts in one write; the race of the issue's "Done
// means" (8 threads, 10,000 keys each delivered 3 times, holders pausing
// past their lease).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tally/admin.h"
#include "tally/batch.h"
#include "tally/db.h"
#include "tally/limits.h"
#include "engine/column_families.h"
#include "engine/test_hooks.h"
#include "testutil/db_fixture.h"
#include "testutil/sanitized.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

constexpr int64_t kSecond = 1000;
constexpr int64_t kLease = 30 * kSecond;

class Claims : public test::DbMatrixTest {
 protected:
  Claims() : DbMatrixTest(1'700'000'100'000) {}
  std::unique_ptr<Db> OpenCounting() {
    auto db = Open(ClockOptions());
    EXPECT_OK(db->CreateCounter("items", {4}));
    return db;
  }
  static Batch CountOne() {
    Batch b;
    b.Add("items", 1);
    return b;
  }
};

TEST_P(Claims, OneHolderAtATimeThenDoneForEveryone) {
  auto db = OpenCounting();
  auto a = db->Claim("item:1", "worker-a", kLease);
  ASSERT_OK(a);
  EXPECT_EQ(a->answer, ClaimAnswer::kAcquired);
  EXPECT_FALSE(a->repeated);
  EXPECT_EQ(a->claim.token, 1u);
  EXPECT_EQ(a->claim.state, ClaimState::kHeld);
  EXPECT_EQ(a->claim.holder, "worker-a");
  EXPECT_EQ(a->claim.lease_until_ms, clock_.NowMillis() + kLease);

  auto b = db->Claim("item:1", "worker-b", kLease);
  ASSERT_OK(b);
  EXPECT_EQ(b->answer, ClaimAnswer::kBusy);
  EXPECT_EQ(b->claim.holder, "worker-a");
  EXPECT_EQ(b->claim.lease_until_ms, a->claim.lease_until_ms);

  // The holder asking again renews its lease and keeps its token.
  clock_.Advance(10 * kSecond);
  auto again = db->Claim("item:1", "worker-a", kLease);
  ASSERT_OK(again);
  EXPECT_EQ(again->answer, ClaimAnswer::kAcquired);
  EXPECT_TRUE(again->repeated);
  EXPECT_EQ(again->claim.token, 1u);
  EXPECT_EQ(again->claim.lease_until_ms, clock_.NowMillis() + kLease);

  auto done = db->CompleteClaim("item:1", 1, "row 7", CountOne());
  ASSERT_OK(done);
  EXPECT_EQ(done->answer, ClaimAnswer::kCompleted);
  EXPECT_FALSE(done->repeated);
  EXPECT_EQ(done->claim.state, ClaimState::kDone);
  EXPECT_EQ(done->claim.result, "row 7");
  EXPECT_EQ(done->claim.ended_at_ms, clock_.NowMillis());
  ASSERT_EQ(done->counted.size(), 1u);
  EXPECT_EQ(done->counted[0].outcome, Outcome::kApplied);

  // A retried completion counts nothing again and keeps the first result.
  auto retry = db->CompleteClaim("item:1", 1, "row 8", CountOne());
  ASSERT_OK(retry);
  EXPECT_EQ(retry->answer, ClaimAnswer::kCompleted);
  EXPECT_TRUE(retry->repeated);
  EXPECT_EQ(retry->claim.result, "row 7");
  EXPECT_TRUE(retry->counted.empty());
  EXPECT_EQ(test::OkValue(db->ReadExact("items")), 1);

  // Done for every later delivery, long after any lease.
  clock_.Advance(kMaxLeaseMs);
  for (const char* who : {"worker-a", "worker-b"}) {
    auto later = db->Claim("item:1", who, kLease);
    ASSERT_OK(later);
    EXPECT_EQ(later->answer, ClaimAnswer::kDone);
    EXPECT_EQ(later->claim.token, 1u);
    EXPECT_EQ(later->claim.result, "row 7");
  }
  auto release = db->ReleaseClaim("item:1", 1);
  ASSERT_OK(release);
  EXPECT_EQ(release->answer, ClaimAnswer::kDone);
  EXPECT_EQ(test::OkValue(db->GetClaim("item:1")).state, ClaimState::kDone);
  EXPECT_EQ(test::OkValue(db->ReadExact("items")), 1);
}

// The lock of the seed: a worker paused past its lease. The next grant has
// a higher token, and the paused worker's completion is refused.
TEST_P(Claims, AnExpiredLeaseIsGrantedAgainWithAHigherToken) {
  auto db = OpenCounting();
  ASSERT_EQ(test::OkValue(db->Claim("item:2", "slow", kLease)).claim.token, 1u);
  clock_.Advance(kLease - 1);
  EXPECT_EQ(test::OkValue(db->Claim("item:2", "fast", kLease)).answer,
            ClaimAnswer::kBusy);
  clock_.Advance(1);  // the lease ends at granted + lease, exclusive
  EXPECT_EQ(test::OkValue(db->GetClaim("item:2")).state, ClaimState::kExpired);
  auto fast = db->Claim("item:2", "fast", kLease);
  ASSERT_OK(fast);
  EXPECT_EQ(fast->answer, ClaimAnswer::kAcquired);
  EXPECT_EQ(fast->claim.token, 2u);
  EXPECT_EQ(fast->claim.holder, "fast");

  // The slow one wakes up: neither its completion nor its release does
  // anything, and its counts are not applied.
  auto stale = db->CompleteClaim("item:2", 1, "slow row", CountOne());
  ASSERT_OK(stale);
  EXPECT_EQ(stale->answer, ClaimAnswer::kStaleToken);
  EXPECT_EQ(stale->claim.token, 2u);
  EXPECT_EQ(stale->claim.state, ClaimState::kHeld);
  EXPECT_TRUE(stale->counted.empty());
  EXPECT_EQ(test::OkValue(db->ReleaseClaim("item:2", 1)).answer,
            ClaimAnswer::kStaleToken);
  EXPECT_EQ(test::OkValue(db->ReadExact("items")), 0);

  auto done = db->CompleteClaim("item:2", 2, "fast row", CountOne());
  ASSERT_OK(done);
  EXPECT_EQ(done->answer, ClaimAnswer::kCompleted);
  // After the completion the old token is still stale, not done.
  EXPECT_EQ(
      test::OkValue(db->CompleteClaim("item:2", 1, "", CountOne())).answer,
      ClaimAnswer::kStaleToken);
  EXPECT_EQ(test::OkValue(db->ReadExact("items")), 1);
  EXPECT_EQ(test::OkValue(db->GetClaim("item:2")).result, "fast row");
}

// The token, not the clock, decides: a lease that ran out with nobody
// granted the key since still completes (no other holder can act).
TEST_P(Claims, ARunOutLeaseNobodyTookStillCompletes) {
  auto db = OpenCounting();
  ASSERT_OK(db->Claim("k", "a", kLease));
  clock_.Advance(2 * kLease);
  auto done = db->CompleteClaim("k", 1, "late");
  ASSERT_OK(done);
  EXPECT_EQ(done->answer, ClaimAnswer::kCompleted);
  EXPECT_EQ(done->claim.state, ClaimState::kDone);
}

TEST_P(Claims, AReleasedClaimGoesToTheNextHolder) {
  auto db = OpenCounting();
  ASSERT_OK(db->Claim("k", "a", kLease));
  auto r = db->ReleaseClaim("k", 1);
  ASSERT_OK(r);
  EXPECT_EQ(r->answer, ClaimAnswer::kReleased);
  EXPECT_FALSE(r->repeated);
  EXPECT_EQ(r->claim.state, ClaimState::kReleased);
  EXPECT_EQ(r->claim.ended_at_ms, clock_.NowMillis());
  auto again = db->ReleaseClaim("k", 1);
  ASSERT_OK(again);
  EXPECT_EQ(again->answer, ClaimAnswer::kReleased);
  EXPECT_TRUE(again->repeated);
  // A released grant cannot complete.
  EXPECT_EQ(test::OkValue(db->CompleteClaim("k", 1, "x", CountOne())).answer,
            ClaimAnswer::kStaleToken);
  // The same holder asking again gets a new grant, not its old one.
  auto next = db->Claim("k", "a", kLease);
  ASSERT_OK(next);
  EXPECT_EQ(next->answer, ClaimAnswer::kAcquired);
  EXPECT_FALSE(next->repeated);
  EXPECT_EQ(next->claim.token, 2u);
  EXPECT_EQ(next->claim.ended_at_ms, 0);
  EXPECT_EQ(test::OkValue(db->ReadExact("items")), 0);
}

// Counts that a strict counter refuses refuse the completion: neither is
// written, the claim stays held, and its holder may release it.
TEST_P(Claims, RefusedCountsLeaveTheClaimHeld) {
  auto db = OpenCounting();
  CounterSpec stock;
  stock.bounds = CounterBounds::AtLeast(0);
  ASSERT_OK(db->CreateCounter("stock", stock));
  ASSERT_OK(db->Claim("order:9", "a", kLease));
  Batch take;
  take.Add("items", 1);
  take.Add("stock", -1);
  auto r = db->CompleteClaim("order:9", 1, "shipped", take);
  EXPECT_TRUE(r.status().IsOutOfRange()) << r.status().ToString();
  auto info = db->GetClaim("order:9");
  ASSERT_OK(info);
  EXPECT_EQ(info->state, ClaimState::kHeld);
  EXPECT_EQ(test::OkValue(db->ReadExact("items")), 0);
  EXPECT_EQ(test::OkValue(db->ReadExact("stock")), 0);
  // A bad batch is refused whole too.
  Batch bad;
  bad.Add("nope", 1);
  EXPECT_TRUE(db->CompleteClaim("order:9", 1, "", bad).status().IsNotFound());
  EXPECT_EQ(test::OkValue(db->GetClaim("order:9")).state, ClaimState::kHeld);
  ASSERT_OK(db->Increment("stock", 1));
  auto ok = db->CompleteClaim("order:9", 1, "shipped", take);
  ASSERT_OK(ok);
  EXPECT_EQ(ok->answer, ClaimAnswer::kCompleted);
  EXPECT_EQ(test::OkValue(db->ReadExact("items")), 1);
  EXPECT_EQ(test::OkValue(db->ReadExact("stock")), 0);
}

// Once-increments in the counts: a marker of their own, so the same event
// counted elsewhere is a duplicate here too.
TEST_P(Claims, CountsMayBeOnceIncrements) {
  auto db = OpenCounting();
  ASSERT_OK(db->IncrementOnce("items", "ev-1", 1));
  ASSERT_OK(db->Claim("k", "a", kLease));
  Batch b;
  b.AddOnce("items", "ev-1", 1);
  b.AddOnce("items", "ev-2", 1);
  auto r = db->CompleteClaim("k", 1, "", b);
  ASSERT_OK(r);
  ASSERT_EQ(r->counted.size(), 2u);
  EXPECT_EQ(r->counted[0].outcome, Outcome::kDuplicate);
  EXPECT_EQ(r->counted[1].outcome, Outcome::kApplied);
  EXPECT_EQ(test::OkValue(db->ReadExact("items")), 2);
  // Every op a duplicate: the completion is still written.
  ASSERT_OK(db->Claim("k2", "a", kLease));
  auto dup = db->CompleteClaim("k2", 1, "", b);
  ASSERT_OK(dup);
  EXPECT_EQ(dup->answer, ClaimAnswer::kCompleted);
  EXPECT_EQ(test::OkValue(db->GetClaim("k2")).state, ClaimState::kDone);
  EXPECT_EQ(test::OkValue(db->ReadExact("items")), 2);
}

TEST_P(Claims, TokensAndCompletionsSurviveAReopen) {
  auto db = OpenCounting();
  ASSERT_OK(db->Claim("a", "w", kLease));
  ASSERT_OK(db->Claim("b", "w", kLease));
  ASSERT_OK(db->ReleaseClaim("b", 1));
  ASSERT_OK(db->Claim("b", "w", kLease));  // token 2
  ASSERT_OK(db->CompleteClaim("b", 2, "r", CountOne()));
  Reopen(&db);
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(test::OkValue(db->Claim("a", "other", kLease)).answer,
            ClaimAnswer::kBusy);
  clock_.Advance(kLease);
  EXPECT_EQ(test::OkValue(db->Claim("a", "other", kLease)).claim.token, 2u);
  auto b = db->Claim("b", "other", kLease);
  ASSERT_OK(b);
  EXPECT_EQ(b->answer, ClaimAnswer::kDone);
  EXPECT_EQ(b->claim.token, 2u);
  EXPECT_EQ(test::OkValue(db->ReadExact("items")), 1);
  VerifyReport report;
  ASSERT_OK(Verify(*db, &report));
  EXPECT_TRUE(report.ok()) << report.problems[0];
}

TEST_P(Claims, ListFiltersAndPages) {
  auto db = OpenCounting();
  for (int i = 0; i < 6; ++i) {
    ASSERT_OK(db->Claim("k" + std::to_string(i), "w", kLease));
  }
  ASSERT_OK(db->CompleteClaim("k1", 1, "one"));
  ASSERT_OK(db->CompleteClaim("k4", 1, "four"));
  ASSERT_OK(db->ReleaseClaim("k2", 1));
  ListClaimsOptions o;
  auto all = db->ListClaims(o);
  ASSERT_OK(all);
  ASSERT_EQ(all->size(), 6u);
  EXPECT_EQ((*all)[0].key, "k0");
  EXPECT_EQ((*all)[5].key, "k5");
  o.filter = ClaimFilter::kDone;
  auto done = db->ListClaims(o);
  ASSERT_OK(done);
  ASSERT_EQ(done->size(), 2u);
  EXPECT_EQ((*done)[1].result, "four");
  o.filter = ClaimFilter::kHeld;
  EXPECT_EQ(test::OkValue(db->ListClaims(o)).size(), 3u);  // k0 k3 k5
  o.limit = 2;
  o.start_after = "k0";
  auto page = db->ListClaims(o);
  ASSERT_OK(page);
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ((*page)[0].key, "k3");
  EXPECT_EQ((*page)[1].key, "k5");
  clock_.Advance(kLease);
  o.start_after.clear();
  EXPECT_TRUE(test::OkValue(db->ListClaims(o)).empty())
      << "every lease ran out";
  o.limit = 0;
  EXPECT_TRUE(db->ListClaims(o).status().IsInvalidArgument());
  o.limit = kMaxListClaims + 1;
  EXPECT_TRUE(db->ListClaims(o).status().IsInvalidArgument());
}

TEST_P(Claims, BadInputIsRefusedNamingTheValue) {
  auto db = OpenCounting();
  auto bad = [](const Status& s, const std::string& part) {
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_NE(s.message().find(part), std::string::npos) << s.ToString();
  };
  bad(db->Claim("", "w", kLease).status(), "claim key is empty");
  bad(db->Claim(std::string(kMaxClaimKeyBytes + 1, 'k'), "w", kLease).status(),
      "the limit is 256");
  bad(db->Claim("a\nb", "w", kLease).status(), "control character");
  bad(db->Claim("k", "", kLease).status(), "claim holder is empty");
  bad(db->Claim("k", std::string(kMaxHolderBytes + 1, 'h'), kLease).status(),
      "claim holder");
  bad(db->Claim("k", "w", 0).status(), "kMaxLeaseMs");
  bad(db->Claim("k", "w", kMaxLeaseMs + 1).status(), "kMaxLeaseMs");
  EXPECT_TRUE(db->CompleteClaim("k", 1, "").status().IsNotFound());
  EXPECT_TRUE(db->ReleaseClaim("k", 1).status().IsNotFound());
  EXPECT_TRUE(db->GetClaim("k").status().IsNotFound());
  ASSERT_OK(db->Claim("k", "w", kMaxLeaseMs));
  bad(db->CompleteClaim("k", 0, "").status(), "tokens start at 1");
  bad(db->CompleteClaim("k", 2, "").status(), "never granted");
  bad(db->ReleaseClaim("k", 7).status(), "latest grant is token 1");
  bad(db->CompleteClaim("k", 1, std::string(kMaxClaimResultBytes + 1, 'r'))
          .status(),
      "claim result");
  // Nothing of that changed the claim.
  auto info = db->GetClaim("k");
  ASSERT_OK(info);
  EXPECT_EQ(info->state, ClaimState::kHeld);
  EXPECT_EQ(info->token, 1u);
}

TEST_P(Claims, ReadOnlyDatabasesReadClaimsAndTakeNone) {
  auto db = OpenCounting();
  ASSERT_OK(db->Claim("k", "w", kLease));
  ASSERT_OK(db->CompleteClaim("k", 1, "r"));
  Options ro = ClockOptions();
  ro.read_only = true;
  auto reader = Open(ro);
  ASSERT_NE(reader, nullptr);
  auto info = reader->GetClaim("k");
  ASSERT_OK(info);
  EXPECT_EQ(info->state, ClaimState::kDone);
  EXPECT_EQ(test::OkValue(reader->ListClaims({})).size(), 1u);
  EXPECT_TRUE(reader->Claim("k2", "w", kLease).status().IsNotSupported());
  ro.reads = kReadValues;
  auto values_only = Open(ro);
  ASSERT_NE(values_only, nullptr);
  EXPECT_TRUE(values_only->GetClaim("k").status().IsNotSupported());
}

// A stored claim that does not decode is Corruption naming the key, from
// every call and from Verify.
TEST_P(Claims, ADamagedRecordIsCorruptionNamingTheKey) {
  auto db = OpenCounting();
  ASSERT_OK(db->Claim("k", "w", kLease));
  ASSERT_OK(engine::PutRawForTest(db.get(), engine::kClaims, "k", "junk"));
  auto r = db->Claim("k", "w", kLease);
  EXPECT_TRUE(r.status().IsCorruption()) << r.status().ToString();
  EXPECT_NE(r.status().message().find("claim 'k'"), std::string::npos)
      << r.status().ToString();
  EXPECT_TRUE(db->GetClaim("k").status().IsCorruption());
  VerifyReport report;
  ASSERT_OK(Verify(*db, &report));
  EXPECT_FALSE(report.ok());
}

// The "Done means": 8 threads take deliveries of 10,000 keys, each
// delivered 3 times, from one shuffled queue. A holder now and then pauses
// past its lease (it moves the shared clock on by a lease, so every lease
// running then ends) and its trigger is redelivered meanwhile: it waits
// until another worker has asked for the key, then completes, and must be
// refused as stale. Every key is completed exactly once, by its latest
// grant; no two grants of a key share a token; the counter the
// completions increment ends at 10,000.
TEST_P(Claims, RacingWorkersCompleteEveryKeyExactlyOnce) {
  const int keys = test::kSanitized ? 2000 : 10000;
  constexpr int kDeliveries = 3;
  constexpr int kThreads = 8;
  auto db = OpenCounting();
  std::vector<int> queue;
  for (int d = 0; d < kDeliveries; ++d) {
    for (int k = 0; k < keys; ++k) queue.push_back(k);
  }
  std::mt19937 shuffle(20261202);
  std::shuffle(queue.begin(), queue.end(), shuffle);
  std::atomic<size_t> next{0};
  std::atomic<int> completed{0};
  std::atomic<int> stale_refused{0};
  std::atomic<int> pauses{0};
  // Redeliveries of paused holders' keys, taken before the queue; `paused`
  // counts the holders waiting for theirs to be asked for (at most
  // kThreads - 1, so someone is always left to ask).
  struct Redelivery {
    int key;
    std::promise<void> asked;
  };
  std::mutex qmu;
  std::condition_variable qcv;
  std::deque<Redelivery*> redeliver;
  int paused = 0;  // guarded by qmu
  // The next delivery: a redelivery, else the queue's next; false once both
  // are empty and no holder is paused (none can redeliver any more).
  auto take = [&](int* key, Redelivery** red) {
    std::unique_lock<std::mutex> l(qmu);
    for (;;) {
      if (!redeliver.empty()) {
        *red = redeliver.front();
        redeliver.pop_front();
        *key = (*red)->key;
        return true;
      }
      const size_t i = next.fetch_add(1);
      if (i < queue.size()) {
        *red = nullptr;
        *key = queue[i];
        return true;
      }
      if (paused == 0) return false;
      qcv.wait(l, [&] { return !redeliver.empty() || paused == 0; });
    }
  };
  std::mutex mu;
  std::map<int, std::set<uint64_t>> grants;  // key -> tokens granted
  std::map<int, uint64_t> completed_by;      // key -> the token completing
  std::vector<std::string> failures;
  auto fail = [&](std::string what) {
    std::lock_guard<std::mutex> l(mu);
    failures.push_back(std::move(what));
  };
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([&, t] {
      std::mt19937 rng(t);
      const std::string holder = "worker-" + std::to_string(t);
      int k = 0;
      Redelivery* red = nullptr;
      while (take(&k, &red)) {
        const std::string key = "item:" + std::to_string(k);
        auto c = db->Claim(key, holder, kLease);
        if (red != nullptr) red->asked.set_value();
        if (!c.ok()) return fail(c.status().ToString());
        if (c->answer != ClaimAnswer::kAcquired) continue;  // busy or done
        if (c->repeated) {
          fail(key + ": renewed by a worker that did not hold it");
          continue;
        }
        {
          std::lock_guard<std::mutex> l(mu);
          if (!grants[k].insert(c->claim.token).second) {
            failures.push_back(key + ": token " +
                               std::to_string(c->claim.token) +
                               " granted twice");
          }
        }
        bool pause = false;
        Redelivery mine{k, {}};
        if (rng() % 16 == 0) {
          std::lock_guard<std::mutex> l(qmu);
          if (paused < kThreads - 1) {
            ++paused;
            pause = true;
            clock_.Advance(kLease);  // this holder's lease runs out
            redeliver.push_back(&mine);
          }
        }
        if (pause) {
          qcv.notify_all();
          mine.asked.get_future().wait();  // another worker asked for it
          pauses.fetch_add(1);
          {
            std::lock_guard<std::mutex> l(qmu);
            --paused;
          }
          qcv.notify_all();
        }
        auto r = db->CompleteClaim(key, c->claim.token, holder, CountOne());
        if (!r.ok()) return fail(r.status().ToString());
        if (r->answer == ClaimAnswer::kStaleToken) {
          stale_refused.fetch_add(1);
          if (r->claim.token <= c->claim.token) {
            fail(key + ": stale without a newer grant");
          }
          continue;
        }
        if (pause) fail(key + ": a paused holder completed");
        if (r->answer != ClaimAnswer::kCompleted || r->repeated) {
          fail(key + ": " + ClaimAnswerName(r->answer) +
               (r->repeated ? " (repeated)" : ""));
          continue;
        }
        completed.fetch_add(1);
        std::lock_guard<std::mutex> l(mu);
        if (!completed_by.emplace(k, c->claim.token).second) {
          failures.push_back(key + ": completed twice");
        }
      }
    });
  }
  for (std::thread& w : workers) w.join();
  ASSERT_TRUE(failures.empty()) << failures.size() << " failures; first: "
                                << failures[0];
  EXPECT_GT(pauses.load(), 0);
  // Every paused holder was refused (checked above, each); so was any other
  // holder whose lease a pause ended and whose key was granted again.
  EXPECT_GE(stale_refused.load(), pauses.load());
  RecordProperty("pauses", pauses.load());
  RecordProperty("stale_refused", stale_refused.load());
  EXPECT_EQ(completed.load(), keys);
  EXPECT_EQ(completed_by.size(), static_cast<size_t>(keys));
  EXPECT_EQ(test::OkValue(db->ReadExact("items")), keys);
  // What is stored agrees: every key done by the token that completed it,
  // which is its latest grant.
  ListClaimsOptions o;
  o.limit = kMaxListClaims;
  size_t done = 0;
  for (;;) {
    auto page = db->ListClaims(o);
    ASSERT_OK(page);
    if (page->empty()) break;
    for (const ClaimInfo& c : *page) {
      ASSERT_EQ(c.state, ClaimState::kDone) << c.key;
      const int k = std::stoi(c.key.substr(5));
      EXPECT_EQ(c.token, completed_by[k]) << c.key;
      EXPECT_EQ(c.token, *grants[k].rbegin()) << c.key;
      ++done;
    }
    o.start_after = page->back().key;
  }
  EXPECT_EQ(done, static_cast<size_t>(keys));
  VerifyReport report;
  ASSERT_OK(Verify(*db, &report));
  EXPECT_TRUE(report.ok()) << report.problems[0];
}

TALLY_WRITE_MODES(Claims);

}  // namespace
}  // namespace tally
