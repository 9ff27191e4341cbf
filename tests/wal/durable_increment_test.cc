// Durable increments (Options::sync = true) through the public API, which
// go through the group commit pipeline: 64 producers count exactly, also
// with once-increments racing on shared event ids; an fsync failing under
// load fails its group and then everything, and a reopen holds every
// acknowledged increment; the group commit options are checked.

#include <gtest/gtest.h>
#include <rocksdb/env.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/rules.h"
#include "reliability/fault_fs.h"
#include "tally/admin.h"
#include "tally/db.h"
#include "tally/limits.h"
#include "testutil/db_fixture.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

Options Durable() {
  Options o;
  o.sync = true;
  o.rollup_interval_ms = 0;  // no background writes
  return o;
}

class DurableIncrement : public test::DbTest {};

// 64 producers: plain increments with distinct deltas and once-increments
// where every event id is sent by two threads. Totals are exact, every
// event counted once, before and after a reopen, and Verify is clean.
TEST_F(DurableIncrement, SixtyFourProducersCountExactly) {
  auto db = Open(Durable());
  ASSERT_NE(db, nullptr);
  ASSERT_OK(db->CreateCounter("plain", {10}));
  ASSERT_OK(db->CreateCounter("once", {4}));
  constexpr int kThreads = 64;
  constexpr int kPlain = 60;
  constexpr int kOnce = 40;
  std::atomic<int> failed{0};
  std::atomic<int> applied{0};
  std::atomic<int> duplicates{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPlain; ++i) {
        if (!db->Increment("plain", t + 1).ok()) failed.fetch_add(1);
      }
      for (int i = 0; i < kOnce; ++i) {
        // Threads 2k and 2k+1 send the same ids.
        auto r = db->IncrementOnce(
            "once", "ev-" + std::to_string(t / 2) + "-" + std::to_string(i),
            1);
        if (!r.ok()) {
          failed.fetch_add(1);
        } else if (r->outcome == Outcome::kApplied) {
          applied.fetch_add(1);
        } else if (r->outcome == Outcome::kDuplicate) {
          duplicates.fetch_add(1);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failed.load(), 0);
  constexpr int64_t kPlainTotal =
      int64_t{kPlain} * kThreads * (kThreads + 1) / 2;
  constexpr int kEvents = kThreads / 2 * kOnce;
  EXPECT_EQ(applied.load(), kEvents);
  EXPECT_EQ(duplicates.load(), kEvents);
  auto check = [&](Db* d) {
    auto plain = d->ReadExact("plain");
    ASSERT_OK(plain);
    EXPECT_EQ(*plain, kPlainTotal);
    auto once = d->ReadExact("once");
    ASSERT_OK(once);
    EXPECT_EQ(*once, kEvents);
    auto events = d->CountMarkers("once");
    ASSERT_OK(events);
    EXPECT_EQ(*events, uint64_t{kEvents});
    VerifyReport report;
    ASSERT_OK(tally::Verify(*d, &report));
    EXPECT_TRUE(report.ok());
  };
  check(db.get());
  db.reset();
  db = Open(Durable());
  ASSERT_NE(db, nullptr);
  check(db.get());
}

// The WAL fsync starts failing while 32 producers increment durably: the
// failed group's members get the injected error, every later increment the
// latched one, no thread is acknowledged after its first error, and after
// a reopen on a healed disk the counter holds every acknowledged increment
// and at most the failed group's on top (they reached the log, unsynced).
TEST_F(DurableIncrement, FsyncFailureUnderLoadLatchesAndKeepsAcknowledged) {
  auto fs = std::make_shared<test::FaultFs>();
  std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(fs);
  Options o = Durable();
  auto db = Open(o, env.get());
  ASSERT_NE(db, nullptr);
  ASSERT_OK(db->CreateCounter("c", {10}));

  constexpr int kThreads = 32;
  std::atomic<int64_t> acked{0};
  std::atomic<int> injected{0};
  std::atomic<int> latched{0};
  std::atomic<int> other{0};
  std::atomic<int> ok_after_error{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      bool failed_before = false;
      for (;;) {
        auto r = db->Increment("c", 1);
        if (r.ok()) {
          acked.fetch_add(1);
          if (failed_before) ok_after_error.fetch_add(1);
          continue;
        }
        failed_before = true;
        const std::string msg = r.status().ToString();
        if (!r.status().IsIOError()) {
          other.fetch_add(1);
          return;
        }
        if (msg.find("First failure") != std::string::npos) {
          latched.fetch_add(1);
          return;  // the database is stopped: this thread is done
        }
        if (msg.find("injected fsync failure") != std::string::npos) {
          injected.fetch_add(1);
        } else {
          other.fetch_add(1);
          return;
        }
      }
    });
  }
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (acked.load() < 300 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  EXPECT_GE(acked.load(), 300);
  fs->Inject(test::Fault::kSyncError, ".log");
  for (auto& t : threads) t.join();

  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ(ok_after_error.load(), 0);
  EXPECT_GE(injected.load(), 1);
  EXPECT_EQ(latched.load(), kThreads);
  fs->Heal();
  auto after = db->Increment("c", 1);
  EXPECT_NE(after.status().ToString().find("First failure"), std::string::npos)
      << after.status().ToString();

  db.reset();
  db = Open(o);
  ASSERT_NE(db, nullptr);
  auto value = db->ReadExact("c");
  ASSERT_OK(value);
  EXPECT_GE(*value, acked.load());
  EXPECT_LE(*value, acked.load() + injected.load());
}

// Each group commit option is refused outside its limits, naming the value
// and the limit; the limits themselves are accepted.
TEST_F(DurableIncrement, GroupCommitOptionsAreChecked) {
  Options o;
  EXPECT_OK(engine::ValidateGroupCommit(o));
  o.group_commit_max_bytes = kMaxGroupCommitBytes;
  o.group_commit_max_ops = kMaxGroupCommitOps;
  o.group_commit_max_delay_us = kMaxGroupCommitDelayUs;
  EXPECT_OK(engine::ValidateGroupCommit(o));

  struct Bad {
    Options options;
    std::string message;
  };
  std::vector<Bad> bad;
  Options b;
  b.group_commit_max_bytes = 0;
  bad.push_back({b, "group_commit_max_bytes 0 is outside 1..67108864"});
  b = Options();
  b.group_commit_max_bytes = kMaxGroupCommitBytes + 1;
  bad.push_back({b, "group_commit_max_bytes 67108865 is outside 1..67108864"});
  b = Options();
  b.group_commit_max_ops = 0;
  bad.push_back({b, "group_commit_max_ops 0 is outside 1..1048576"});
  b = Options();
  b.group_commit_max_ops = kMaxGroupCommitOps + 1;
  bad.push_back({b, "group_commit_max_ops 1048577 is outside 1..1048576"});
  b = Options();
  b.group_commit_max_delay_us = kMaxGroupCommitDelayUs + 1;
  bad.push_back({b, "group_commit_max_delay_us 100001 is outside 0..100000"});
  for (const Bad& c : bad) {
    Status s = engine::ValidateGroupCommit(c.options);
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_EQ(s.message(), c.message);
  }
}

}  // namespace
}  // namespace tally
