// Keyed counters under concurrency: copies of one (key, event) racing on
// many threads count once; roll-ups, key reads and key deletes run beside
// the writers without tearing a batch or losing an increment.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "tally/admin.h"
#include "tally/db.h"
#include "testutil/db_fixture.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

class KeyedConcurrency : public test::DbTest {};

constexpr int kThreads = 4;
constexpr int kKeys = 50;
constexpr int kEventsPerKey = 40;

std::string KeyOf(int k) { return "post-" + std::to_string(k); }

TEST_F(KeyedConcurrency, CopiesOfOneEventCountOncePerKeyAcrossThreads) {
  Options options;
  options.rollup_interval_ms = 1;  // the worker scans beside the writers
  auto db = Open(options);
  CounterSpec spec;
  spec.keyed = true;
  spec.shards = 3;
  ASSERT_OK(db->CreateCounter("likes", spec));
  // Every thread delivers every (key, event): each pair counts once. Event
  // ids repeat across keys: "user-e" likes every post once.
  std::atomic<int> applied{0}, duplicates{0}, failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int e = 0; e < kEventsPerKey; ++e) {
        for (int k = 0; k < kKeys; ++k) {
          const int key = (k + t * 7) % kKeys;  // threads meet in other orders
          const std::string user = "user-" + std::to_string(e);
          if (e % 2 == 0) {
            auto r = db->IncrementOnce({"likes", KeyOf(key)}, user, 1);
            if (!r.ok()) {
              ++failures;
            } else if (r->outcome == Outcome::kApplied) {
              ++applied;
            } else if (r->outcome == Outcome::kDuplicate) {
              ++duplicates;
            } else {
              ++failures;
            }
          } else {
            // The odd events come in batches touching two keys at once.
            Batch b;
            b.AddOnce({"likes", KeyOf(key)}, user, 1);
            b.AddOnce({"likes", KeyOf((key + 1) % kKeys)}, user + "-next", 1);
            std::vector<IncrementResult> results;
            Status s = db->Apply(b, &results);
            if (!s.ok()) {
              ++failures;
              continue;
            }
            for (const IncrementResult& r : results) {
              if (r.outcome == Outcome::kApplied) {
                ++applied;
              } else if (r.outcome == Outcome::kDuplicate) {
                ++duplicates;
              } else {
                ++failures;
              }
            }
          }
        }
      }
    });
  }
  // A reader beside them: every page of ListKeys and every ReadKeys sees
  // values that only grow.
  std::atomic<bool> stop{false};
  std::atomic<int> reader_errors{0};
  std::thread reader([&] {
    std::vector<int64_t> last(kKeys, 0);
    std::vector<std::string> names;
    for (int k = 0; k < kKeys; ++k) names.push_back(KeyOf(k));
    std::vector<std::string_view> keys(names.begin(), names.end());
    while (!stop.load()) {
      auto values = db->ReadKeys("likes", keys);
      if (!values.ok()) {
        ++reader_errors;
        return;
      }
      for (int k = 0; k < kKeys; ++k) {
        if ((*values)[k] < last[k]) ++reader_errors;
        last[k] = (*values)[k];
      }
      if (!db->TopKeys("likes", 5).ok()) ++reader_errors;
    }
  });
  for (std::thread& t : threads) t.join();
  stop = true;
  reader.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(reader_errors.load(), 0);
  // Even events: one per (key, event); odd events: two per (key, event).
  const int distinct = kKeys * (kEventsPerKey / 2) + kKeys * (kEventsPerKey / 2) * 2;
  EXPECT_EQ(applied.load(), distinct);
  EXPECT_EQ(applied.load() + duplicates.load(),
            kThreads * kKeys * (kEventsPerKey / 2) * 3);
  int64_t sum = 0;
  for (int k = 0; k < kKeys; ++k) {
    auto v = db->ReadExact({"likes", KeyOf(k)});
    ASSERT_OK(v);
    // Each key got every even event once, and every odd event twice (as
    // itself and as its neighbour's "-next").
    EXPECT_EQ(*v, kEventsPerKey / 2 + kEventsPerKey) << KeyOf(k);
    sum += *v;
  }
  EXPECT_EQ(sum, distinct);
  ASSERT_OK(db->RollupNow("likes"));
  EXPECT_EQ(test::OkValue(db->ReadCached("likes")).value, sum);
  auto top = db->TopKeys("likes", 3);
  ASSERT_OK(top);
  EXPECT_EQ(top->key_count, static_cast<uint64_t>(kKeys));
  EXPECT_EQ(top->total, sum);
  VerifyReport report;
  ASSERT_OK(Verify(*db, &report));
  EXPECT_TRUE(report.ok()) << report.problems.front();
}

TEST_F(KeyedConcurrency, DeleteKeyBesideWritersLosesNoOtherKey) {
  auto db = Open();
  CounterSpec spec;
  spec.keyed = true;
  ASSERT_OK(db->CreateCounter("views", spec));
  constexpr int kRounds = 300;
  std::atomic<int> failures{0};
  std::thread writer([&] {
    for (int i = 0; i < kRounds; ++i) {
      Batch b;
      b.Add({"views", "kept"}, 1);
      b.Add({"views", "doomed"}, 1);
      std::vector<IncrementResult> results;
      if (!db->Apply(b, &results).ok()) ++failures;
    }
  });
  std::thread deleter([&] {
    for (int i = 0; i < 50; ++i) {
      if (!db->DeleteKey("views", "doomed").ok()) ++failures;
    }
  });
  writer.join();
  deleter.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(test::OkValue(db->ReadExact({"views", "kept"})), kRounds);
  auto doomed = db->ReadExact({"views", "doomed"});
  ASSERT_OK(doomed);
  EXPECT_GE(*doomed, 0);
  EXPECT_LE(*doomed, kRounds);
}

}  // namespace
}  // namespace tally
