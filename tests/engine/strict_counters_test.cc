// Strict counters (CounterSpec::bounds): refused and saturated increments,
// remembered answers of once-increments, batches mixing strict and sharded
// ops, the specs refused, and the race the bounds exist for: many threads
// taking the last units of a stock while a reader watches the value.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "tally/admin.h"
#include "tally/batch.h"
#include "tally/db.h"
#include "testutil/db_fixture.h"
#include "testutil/sanitized.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

class Strict : public test::DbMatrixTest {
 protected:
  Strict() : DbMatrixTest(1'700'000'000'000) {}
  static CounterSpec Stock(bool keyed = false) {
    CounterSpec spec;
    spec.bounds = CounterBounds::AtLeast(0);
    spec.keyed = keyed;
    return spec;
  }
};

TEST_P(Strict, AnIncrementPastABoundIsRefusedAndChangesNothing) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("stock", Stock()));
  auto r = db->Increment("stock", 3);
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kApplied);
  EXPECT_EQ(r->value, 3);
  EXPECT_EQ(r->applied, 3);
  r = db->Increment("stock", -4);
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kRefused);
  EXPECT_EQ(r->value, 3);  // the value that refused it
  EXPECT_EQ(r->applied, 0);
  EXPECT_EQ(test::OkValue(db->ReadExact("stock")), 3);
  r = db->Increment("stock", -3);
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kApplied);
  EXPECT_EQ(r->value, 0);
  r = db->Increment("stock", -1);
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kRefused);
  EXPECT_EQ(test::OkValue(db->ReadExact("stock")), 0);
  EXPECT_EQ(GetStats(*db).refused, 2u);
}

TEST_P(Strict, AnUpperBoundRefusesToo) {
  auto db = Open();
  CounterSpec spec;
  spec.bounds = CounterBounds::Between(-5, 10);
  ASSERT_OK(db->CreateCounter("seats", spec));
  EXPECT_EQ(test::OkValue(db->Increment("seats", 10)).outcome,
            Outcome::kApplied);
  auto r = db->Increment("seats", 1);
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kRefused);
  EXPECT_EQ(r->value, 10);
  EXPECT_EQ(test::OkValue(db->Increment("seats", -15)).outcome,
            Outcome::kApplied);
  EXPECT_EQ(test::OkValue(db->Increment("seats", -1)).outcome,
            Outcome::kRefused);
  EXPECT_EQ(test::OkValue(db->ReadExact("seats")), -5);
}

TEST_P(Strict, SaturateAppliesWhatFits) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("stock", Stock()));
  ASSERT_OK(db->Increment("stock", 5));
  IncrementOptions sat;
  sat.saturate = true;
  auto r = db->Increment("stock", -8, sat);
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kApplied);
  EXPECT_EQ(r->applied, -5);
  EXPECT_EQ(r->value, 0);
  EXPECT_EQ(test::OkValue(db->ReadExact("stock")), 0);
  // Nothing fits: refused, saturating or not.
  r = db->Increment("stock", -1, sat);
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kRefused);
  EXPECT_EQ(r->applied, 0);
  // Within the bounds a saturating increment is a plain one.
  r = db->Increment("stock", 2, sat);
  ASSERT_OK(r);
  EXPECT_EQ(r->applied, 2);
  EXPECT_EQ(r->value, 2);
}

TEST_P(Strict, NoMaximumStillStopsAtInt64) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("stock", Stock()));
  ASSERT_OK(db->Increment("stock", INT64_MAX));
  auto r = db->Increment("stock", 1);
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kRefused);
  EXPECT_EQ(test::OkValue(db->ReadExact("stock")), INT64_MAX);
}

TEST_P(Strict, AOnceIncrementsAnswerIsRememberedRefusalIncluded) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("stock", Stock()));
  ASSERT_OK(db->Increment("stock", 1));
  // order-1 takes the last unit; order-2 is refused.
  auto a = db->IncrementOnce("stock", "order-1", -1);
  ASSERT_OK(a);
  EXPECT_EQ(a->outcome, Outcome::kApplied);
  EXPECT_EQ(a->value, 0);
  auto b = db->IncrementOnce("stock", "order-2", -1);
  ASSERT_OK(b);
  EXPECT_EQ(b->outcome, Outcome::kRefused);
  EXPECT_EQ(b->value, 0);
  // Restocked: a redelivered order-2 is still refused (same answer, same
  // value), and a redelivered order-1 is a duplicate with its own answer.
  ASSERT_OK(db->Increment("stock", 10));
  for (int copy = 0; copy < 2; ++copy) {
    auto b2 = db->IncrementOnce("stock", "order-2", -1);
    ASSERT_OK(b2);
    EXPECT_EQ(b2->outcome, Outcome::kRefused);
    EXPECT_EQ(b2->value, 0);
    auto a2 = db->IncrementOnce("stock", "order-1", -1);
    ASSERT_OK(a2);
    EXPECT_EQ(a2->outcome, Outcome::kDuplicate);
    EXPECT_EQ(a2->value, 0);
    EXPECT_EQ(a2->applied, -1);
  }
  // Another delta under a refused event's id is a conflict, not a retry.
  EXPECT_EQ(test::OkValue(db->IncrementOnce("stock", "order-2", -2)).outcome,
            Outcome::kConflict);
  EXPECT_EQ(test::OkValue(db->ReadExact("stock")), 10);
  // The answers survive a reopen.
  Reopen(&db);
  EXPECT_EQ(test::OkValue(db->IncrementOnce("stock", "order-2", -1)).outcome,
            Outcome::kRefused);
  EXPECT_EQ(test::OkValue(db->IncrementOnce("stock", "order-1", -1)).outcome,
            Outcome::kDuplicate);
  EXPECT_EQ(test::OkValue(db->ReadExact("stock")), 10);
  auto marker = db->GetMarker("stock", "order-2");
  ASSERT_OK(marker);
  EXPECT_TRUE(marker->strict);
  EXPECT_TRUE(marker->refused);
  EXPECT_EQ(marker->delta, 0);
  EXPECT_EQ(marker->asked, -1);
  VerifyReport report;
  ASSERT_OK(Verify(*db, &report));
  EXPECT_TRUE(report.ok()) << report.problems.front();
}

TEST_P(Strict, ASaturatedOnceIncrementRemembersWhatItApplied) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("stock", Stock()));
  ASSERT_OK(db->Increment("stock", 3));
  OnceOptions sat;
  sat.saturate = true;
  auto r = db->IncrementOnce("stock", "bulk-1", -5, sat);
  ASSERT_OK(r);
  EXPECT_EQ(r->applied, -3);
  ASSERT_OK(db->Increment("stock", 100));
  r = db->IncrementOnce("stock", "bulk-1", -5, sat);
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kDuplicate);
  EXPECT_EQ(r->applied, -3);
  EXPECT_EQ(r->value, 0);
  EXPECT_EQ(test::OkValue(db->ReadExact("stock")), 100);
}

TEST_P(Strict, KeyedStrictCountersCheckEachKey) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("stock", Stock(/*keyed=*/true)));
  ASSERT_OK(db->Increment({"stock", "sku-1"}, 2));
  EXPECT_EQ(test::OkValue(db->Increment({"stock", "sku-2"}, -1)).outcome,
            Outcome::kRefused);
  EXPECT_EQ(test::OkValue(db->Increment({"stock", "sku-1"}, -2)).outcome,
            Outcome::kApplied);
  EXPECT_EQ(test::OkValue(db->Increment({"stock", "sku-1"}, -1)).outcome,
            Outcome::kRefused);
  // One (key, event) answer per key: the same order id in two keys is two
  // events.
  ASSERT_OK(db->Increment({"stock", "sku-2"}, 1));
  EXPECT_EQ(
      test::OkValue(db->IncrementOnce({"stock", "sku-1"}, "o-1", -1)).outcome,
      Outcome::kRefused);
  EXPECT_EQ(
      test::OkValue(db->IncrementOnce({"stock", "sku-2"}, "o-1", -1)).outcome,
      Outcome::kApplied);
  auto values = db->ReadKeys("stock", {"sku-1", "sku-2"});
  ASSERT_OK(values);
  EXPECT_EQ(*values, (std::vector<int64_t>{0, 0}));
}

TEST_P(Strict, ABatchChecksEachKeyAgainstWhatItsEarlierOpsLeft) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("stock", Stock(/*keyed=*/true)));
  ASSERT_OK(db->CreateCounter("orders", {4}));
  ASSERT_OK(db->Increment({"stock", "sku-1"}, 2));
  // Take a unit and count the order, atomically, twice: both fit.
  Batch batch;
  batch.AddOnce({"stock", "sku-1"}, "order-1", -1);
  batch.Add("orders", 1);
  batch.AddOnce({"stock", "sku-1"}, "order-2", -1);
  batch.Add("orders", 1);
  std::vector<IncrementResult> results;
  ASSERT_OK(db->Apply(batch, &results));
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[0].value, 1);
  EXPECT_EQ(results[2].value, 0);
  // A third take does not fit: the whole batch is refused, naming the op,
  // and nothing of it is written (the order is not counted).
  batch.Clear();
  batch.Add("orders", 1);
  batch.AddOnce({"stock", "sku-1"}, "order-3", -1);
  results.assign(7, IncrementResult{});
  Status s = db->Apply(batch, &results);
  EXPECT_TRUE(s.IsOutOfRange()) << s.ToString();
  EXPECT_NE(s.message().find("batch op 1"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("'sku-1'"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("minimum 0"), std::string::npos) << s.ToString();
  EXPECT_EQ(results.size(), 7u);  // left as it was
  EXPECT_EQ(test::OkValue(db->ReadExact("orders")), 2);
  EXPECT_EQ(test::OkValue(db->ReadExact({"stock", "sku-1"})), 0);
  // No refusal was remembered for order-3: after a restock it applies.
  ASSERT_OK(db->Increment({"stock", "sku-1"}, 1));
  ASSERT_OK(db->Apply(batch, &results));
  EXPECT_EQ(results[1].outcome, Outcome::kApplied);
  // Copies in one batch: the first decides, the copy is its duplicate.
  batch.Clear();
  batch.AddOnce({"stock", "sku-1"}, "order-3", -1);
  batch.AddOnce({"stock", "sku-1"}, "order-4", 5);
  batch.AddOnce({"stock", "sku-1"}, "order-4", 5);
  ASSERT_OK(db->Apply(batch, &results));
  EXPECT_EQ(results[0].outcome, Outcome::kDuplicate);
  EXPECT_EQ(results[1].outcome, Outcome::kApplied);
  EXPECT_EQ(results[1].value, 5);
  EXPECT_EQ(results[2].outcome, Outcome::kDuplicate);
  EXPECT_EQ(results[2].value, 5);
  EXPECT_EQ(test::OkValue(db->ReadExact({"stock", "sku-1"})), 5);
}

TEST_P(Strict, ABatchAnswersAnEarlierRefusalWithoutRefusingItself) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("stock", Stock()));
  ASSERT_OK(db->CreateCounter("orders", {1}));
  EXPECT_EQ(test::OkValue(db->IncrementOnce("stock", "order-1", -1)).outcome,
            Outcome::kRefused);
  ASSERT_OK(db->Increment("stock", 5));
  Batch batch;
  batch.AddOnce("stock", "order-1", -1);
  batch.Add("orders", 1);
  std::vector<IncrementResult> results;
  ASSERT_OK(db->Apply(batch, &results));
  EXPECT_EQ(results[0].outcome, Outcome::kRefused);
  EXPECT_EQ(results[0].value, 0);
  EXPECT_EQ(test::OkValue(db->ReadExact("stock")), 5);
  EXPECT_EQ(test::OkValue(db->ReadExact("orders")), 1);
}

TEST_P(Strict, SaturatingOpsInABatch) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("stock", Stock()));
  ASSERT_OK(db->Increment("stock", 3));
  Batch batch;
  IncrementOptions sat;
  sat.saturate = true;
  batch.Add("stock", -2, sat);
  batch.Add("stock", -2, sat);
  std::vector<IncrementResult> results;
  ASSERT_OK(db->Apply(batch, &results));
  EXPECT_EQ(results[0].applied, -2);
  EXPECT_EQ(results[1].applied, -1);
  EXPECT_EQ(results[1].value, 0);
  EXPECT_EQ(test::OkValue(db->ReadExact("stock")), 0);
}

TEST_P(Strict, SpecsThatCannotHoldABoundAreRefused) {
  auto db = Open();
  CounterSpec spec = Stock();
  spec.shards = 4;
  Status s = db->CreateCounter("a", spec);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("never sharded"), std::string::npos);
  spec = Stock();
  spec.bounds = CounterBounds::AtLeast(1);
  s = db->CreateCounter("a", spec);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("minimum 1"), std::string::npos);
  spec.bounds = CounterBounds::AtMost(-1);
  s = db->CreateCounter("a", spec);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("maximum -1"), std::string::npos);
  spec = Stock();
  spec.outbox = true;
  EXPECT_TRUE(db->CreateCounter("a", spec).IsNotSupported());
  EXPECT_TRUE(test::OkValue(db->ListCounters()).empty());
  // The async calls cannot check a bound.
  ASSERT_OK(db->CreateCounter("stock", Stock()));
  // A refused call's callback runs before the call returns.
  Status async = Status::OK();
  bool called = false;
  db->IncrementAsync("stock", 1, [&](Result<IncrementResult> r) {
    async = r.status();
    called = true;
  });
  EXPECT_TRUE(called);
  EXPECT_TRUE(async.IsNotSupported()) << async.ToString();
}

TEST_P(Strict, BoundsPersistAndRaiseTheFormat) {
  auto db = Open();
  CounterSpec spec;
  spec.bounds = CounterBounds::Between(-3, 7);
  ASSERT_OK(db->CreateCounter("seats", spec));
  Reopen(&db);
  auto info = db->DescribeCounter("seats");
  ASSERT_OK(info);
  EXPECT_TRUE(info->bounds.has_min && info->bounds.has_max);
  EXPECT_EQ(info->bounds.min, -3);
  EXPECT_EQ(info->bounds.max, 7);
  EXPECT_EQ(test::OkValue(db->Increment("seats", 8)).outcome,
            Outcome::kRefused);
}

// Done means (issue 16): 8 threads each try to take 1 unit 10,000 times
// from a stock of 1,000 with min 0; exactly 1,000 are accepted, the value
// ends at 0 and a reader never sees it below 0.
TEST_P(Strict, EightThreadsTakeExactlyTheStock) {
  const int kTakes = test::kSanitized ? 1'000 : 10'000;
  constexpr int kThreads = 8;
  constexpr int64_t kStock = 1'000;
  auto db = Open();
  ASSERT_OK(db->CreateCounter("stock", Stock()));
  ASSERT_OK(db->Increment("stock", kStock));
  std::atomic<int64_t> accepted{0}, refused{0}, failures{0};
  std::atomic<int> writers{kThreads};
  std::atomic<int64_t> lowest{kStock}, reads{0};
  // How many accepted takes reported each value they left: with the key's
  // check and write serialised, every value 0..kStock-1 exactly once (two
  // takes deciding on the same value would both report it).
  std::vector<std::atomic<int>> left(kStock);
  std::thread reader([&] {
    // Reads until every writer is done, then once more.
    for (bool last = false; !last;) {
      last = writers.load() == 0;
      Result<int64_t> v = db->ReadExact("stock");
      if (!v.ok()) {
        ++failures;
        return;
      }
      ++reads;
      if (*v < lowest.load()) lowest.store(*v);
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kTakes; ++i) {
        Result<IncrementResult> r = db->Increment("stock", -1);
        if (!r.ok()) {
          ++failures;
        } else if (r->outcome == Outcome::kApplied) {
          ++accepted;
          if (r->value < 0 || r->value >= kStock) {
            ++failures;
          } else {
            ++left[static_cast<size_t>(r->value)];
          }
        } else if (r->outcome == Outcome::kRefused) {
          ++refused;
        } else {
          ++failures;
        }
      }
      --writers;
    });
  }
  for (std::thread& t : threads) t.join();
  reader.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(accepted.load(), kStock);
  EXPECT_EQ(refused.load(), int64_t{kThreads} * kTakes - kStock);
  EXPECT_EQ(test::OkValue(db->ReadExact("stock")), 0);
  EXPECT_EQ(lowest.load(), 0);
  EXPECT_GT(reads.load(), 0);
  int reported_twice = 0;
  for (const std::atomic<int>& n : left) reported_twice += n.load() != 1;
  EXPECT_EQ(reported_twice, 0);
}

// The same with every take a once-increment delivered twice (by two
// threads racing on the same ids): each take's two copies get one answer,
// and the accepted takes are exactly the stock.
TEST_P(Strict, TakesDeliveredTwiceCountOnceAndAnswerTheSame) {
  const int kTakes = test::kSanitized ? 500 : 5'000;
  constexpr int kPairs = 4;  // 8 threads: two per id range
  constexpr int64_t kStock = 1'000;
  auto db = Open();
  ASSERT_OK(db->CreateCounter("stock", Stock()));
  ASSERT_OK(db->Increment("stock", kStock));
  // answers[p][copy][i]: what copy `copy` of take i of pair p was told.
  std::vector<std::vector<std::vector<int>>> answers(
      kPairs, std::vector<std::vector<int>>(2, std::vector<int>(kTakes, -1)));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < kPairs; ++p) {
    for (int copy = 0; copy < 2; ++copy) {
      threads.emplace_back([&, p, copy] {
        for (int i = 0; i < kTakes; ++i) {
          const std::string id =
              "take-" + std::to_string(p) + "-" + std::to_string(i);
          Result<IncrementResult> r = db->IncrementOnce("stock", id, -1);
          if (!r.ok() || r->value < 0) {
            ++failures;
            continue;
          }
          answers[p][copy][i] = static_cast<int>(r->outcome);
        }
      });
    }
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  int64_t accepted = 0;
  for (int p = 0; p < kPairs; ++p) {
    for (int i = 0; i < kTakes; ++i) {
      const int a = answers[p][0][i], b = answers[p][1][i];
      const int applied = static_cast<int>(Outcome::kApplied);
      const int duplicate = static_cast<int>(Outcome::kDuplicate);
      const int refusal = static_cast<int>(Outcome::kRefused);
      if (a == applied || b == applied) {
        // One copy applied it, the other saw the duplicate.
        EXPECT_TRUE((a == applied && b == duplicate) ||
                    (a == duplicate && b == applied))
            << "take " << p << "-" << i << ": " << a << ", " << b;
        ++accepted;
      } else {
        EXPECT_TRUE(a == refusal && b == refusal)
            << "take " << p << "-" << i << ": " << a << ", " << b;
      }
    }
  }
  EXPECT_EQ(accepted, kStock);
  EXPECT_EQ(test::OkValue(db->ReadExact("stock")), 0);
  VerifyReport report;
  ASSERT_OK(Verify(*db, &report));
  EXPECT_TRUE(report.ok()) << report.problems.front();
}

// DeleteKey of a strict key takes the key's stripe: a take that read the
// value before the delete must not land its -1 on the emptied key.
TEST_P(Strict, DeletingAKeyNeverLeavesItBelowItsMinimum) {
  const int kRounds = test::kSanitized ? 300 : 3'000;
  auto db = Open();
  ASSERT_OK(db->CreateCounter("stock", Stock(/*keyed=*/true)));
  std::atomic<bool> done{false};
  std::atomic<int> failures{0}, below{0};
  std::thread deleter([&] {
    while (!done.load()) {
      if (!db->DeleteKey("stock", "sku").ok()) ++failures;
    }
  });
  std::thread reader([&] {
    while (!done.load()) {
      Result<int64_t> v = db->ReadExact({"stock", "sku"});
      if (!v.ok()) {
        ++failures;
      } else if (*v < 0) {
        ++below;
      }
    }
  });
  for (int i = 0; i < kRounds; ++i) {
    if (!db->Increment({"stock", "sku"}, 1).ok()) ++failures;
    Result<IncrementResult> r = db->Increment({"stock", "sku"}, -1);
    if (!r.ok() || r->value < 0) ++failures;
  }
  done.store(true);
  deleter.join();
  reader.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(below.load(), 0);
  Result<int64_t> v = db->ReadExact({"stock", "sku"});
  ASSERT_OK(v);
  EXPECT_GE(*v, 0);
}

TALLY_WRITE_MODES(Strict);

}  // namespace
}  // namespace tally
