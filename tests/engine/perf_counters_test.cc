// RocksDB's per-thread perf counters during tally's write calls
// (engine/perf_counters.h): switched off at RocksDB's default level and
// restored after the call; a thread that chose a level of its own keeps it
// and its counts.
#include <gtest/gtest.h>
#include <rocksdb/perf_context.h>
#include <rocksdb/perf_level.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "testutil/db_fixture.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

// Restores the test thread's perf level whatever a test set.
class PerfCounters : public test::DbTest {
 protected:
  ~PerfCounters() override { rocksdb::SetPerfLevel(rocksdb::kEnableCount); }

  // A database holding counter "c" (4 shards) and one marker, so the calls
  // below insert into non-empty memtables; null (test failed) on error.
  std::unique_ptr<Db> OpenWithEntries() {
    auto db = Open();
    if (db == nullptr) return db;
    Status s = db->CreateCounter("c", CounterSpec{4});
    if (s.ok()) s = db->IncrementOnce("c", "e0", 1).status();
    if (!s.ok()) {
      ADD_FAILURE() << s.ToString();
      return nullptr;
    }
    return db;
  }

  // Each write call once, with new event ids on every round. Each inserts
  // into a non-empty memtable, so at an enabled level each counts key
  // comparisons.
  std::vector<std::function<Status(Db*)>> Calls() {
    ++round_;
    const std::string e1 = "e1-" + std::to_string(round_);
    const std::string e2 = "e2-" + std::to_string(round_);
    return {
        [](Db* db) { return db->Increment("c", 1).status(); },
        [e1](Db* db) { return db->IncrementOnce("c", e1, 1).status(); },
        [e2](Db* db) {
          Batch b;
          b.Add("c", 1);
          b.AddOnce("c", e2, 1);
          std::vector<IncrementResult> results;
          return db->Apply(b, &results);
        },
        [](Db* db) {
          Status got = Status::Corruption("no callback");
          db->IncrementAsync("c", 1, [&](const Result<IncrementResult>& r) {
            got = r.status();
          });
          return got;
        },
    };
  }

 private:
  int round_ = 0;
};

// Each call at `level`: its key comparisons counted (or not), and the
// thread's level the same after it.
void RunAt(Db* db, const std::vector<std::function<Status(Db*)>>& calls,
           rocksdb::PerfLevel level, bool counted) {
  for (size_t i = 0; i < calls.size(); ++i) {
    rocksdb::SetPerfLevel(level);
    rocksdb::get_perf_context()->Reset();
    ASSERT_TRUE(calls[i](db).ok()) << "call " << i;
    EXPECT_EQ(rocksdb::get_perf_context()->user_key_comparison_count > 0,
              counted)
        << "call " << i;
    EXPECT_EQ(rocksdb::GetPerfLevel(), level) << "call " << i;
  }
}

TEST_F(PerfCounters, DefaultLevelCountsNothingAndIsRestored) {
  auto db = OpenWithEntries();
  ASSERT_NE(db, nullptr);
  RunAt(db.get(), Calls(), rocksdb::kEnableCount, /*counted=*/false);
}

TEST_F(PerfCounters, ThreadsOwnLevelIsKeptAndCounts) {
  auto db = OpenWithEntries();
  ASSERT_NE(db, nullptr);
  RunAt(db.get(), Calls(), rocksdb::kEnableTimeExceptForMutex,
        /*counted=*/true);
  RunAt(db.get(), Calls(), rocksdb::kDisable, /*counted=*/false);
}

}  // namespace
}  // namespace tally
