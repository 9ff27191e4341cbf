// IncrementAsync: every callback runs exactly once with the increment's
// outcome, after it is committed (durable with Options::sync); refusals call
// back inline; a delete waits for async commits, so none lands on a deleted
// counter; a callback runs holding no lock of tally's, so it may call any
// method of the Db, CreateCounter and DeleteCounter included.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "engine/test_hooks.h"
#include "tally/admin.h"
#include "tally/db.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

// Counts callbacks; Wait() returns once `n` have run.
class Callbacks {
 public:
  IncrementCallback Make() {
    return [this](const Result<IncrementResult>& r) {
      std::lock_guard<std::mutex> lock(mu_);
      ++(r.ok() ? ok_ : failed_);
      if (!r.ok()) last_error_ = r.status().ToString();
      cv_.notify_all();
    };
  }
  void Wait(uint64_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return ok_ + failed_ >= n; });
  }
  uint64_t ok() {
    std::lock_guard<std::mutex> lock(mu_);
    return ok_;
  }
  uint64_t failed() {
    std::lock_guard<std::mutex> lock(mu_);
    return failed_;
  }
  std::string last_error() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_error_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t ok_ = 0, failed_ = 0;
  std::string last_error_;
};

std::unique_ptr<Db> Open(const std::string& path, bool sync) {
  Options o;
  o.sync = sync;
  o.rollup_interval_ms = 0;
  return test::OpenOrDie(path, o);
}

std::unique_ptr<Db> OpenDurable(const std::string& path) {
  return Open(path, /*sync=*/true);
}

// The hang detector's bound (test::FinishesOrDie): far beyond any run.
constexpr std::chrono::seconds kHangBound{120};

// Spins until a CreateCounter/DeleteCounter waits for (or holds) the
// catalog, or `finished` says it is through: a callback that then takes
// the catalog shared again queues behind that writer.
void AwaitWriter(Db* db, const std::atomic<bool>& finished) {
  while (!engine::CatalogWriterPending(db) && !finished.load()) {
    std::this_thread::yield();
  }
}

TEST(IncrementAsync, ManyInFlightFromOneThreadCountExactly) {
  test::TempDir dir;
  constexpr int kN = 5000;
  {
    // Declared before the Db: the close below still runs callbacks, so
    // they must outlive it (issue 28, item 16).
    Callbacks cb;
    auto db = OpenDurable(dir.Sub("db"));
    ASSERT_OK(db->CreateCounter("c", {8}));
    for (int i = 0; i < kN; ++i) db->IncrementAsync("c", 2, cb.Make());
    cb.Wait(kN);
    EXPECT_EQ(cb.ok(), uint64_t{kN});
    EXPECT_EQ(test::OkValue(db->ReadExact("c")), 2 * kN);
    EXPECT_EQ(tally::GetStats(*db).applied, uint64_t{kN});
    // Queued and not yet called back when the Db closes: still committed,
    // and every callback has run once the close returns.
    for (int i = 0; i < kN; ++i) db->IncrementAsync("c", 1, cb.Make());
    db.reset();
    EXPECT_EQ(cb.ok(), uint64_t{2 * kN});
    EXPECT_EQ(cb.failed(), 0u);
  }
  auto db = OpenDurable(dir.Sub("db"));
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), 3 * kN);
}

TEST(IncrementAsync, RefusalsAndNonDurableCallBackInline) {
  test::TempDir dir;
  Options o;
  o.rollup_interval_ms = 0;
  auto db = test::OpenOrDie(dir.Sub("db"), o);  // sync = false
  ASSERT_OK(db->CreateCounter("c", {2}));
  CounterSpec with_outbox;
  with_outbox.outbox = true;
  ASSERT_OK(db->CreateCounter("o", with_outbox));
  Callbacks cb;
  db->IncrementAsync("c", 1, cb.Make());
  EXPECT_EQ(cb.ok(), 1u);  // already called
  db->IncrementAsync("missing", 1, cb.Make());
  EXPECT_EQ(cb.failed(), 1u);
  EXPECT_NE(cb.last_error().find("NotFound"), std::string::npos);
  db->IncrementAsync("o", 1, cb.Make());
  EXPECT_EQ(cb.failed(), 2u);
  EXPECT_NE(cb.last_error().find("has an outbox"), std::string::npos);
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), 1);
}

// A delete racing a stream of async increments leaves no key behind.
TEST(IncrementAsync, DeleteWaitsForAsyncCommits) {
  test::TempDir dir;
  auto db = OpenDurable(dir.Sub("db"));
  ASSERT_OK(db->CreateCounter("c", {4}));
  Callbacks cb;
  std::atomic<uint64_t> sent{0};
  // Sends until one is refused: after the delete each is refused inline
  // (NotFound), so the stream always runs past the delete, however fast
  // the delete returns (issue 28, item 16: a stop flag set after the delete
  // let the stream end before any send saw it).
  std::thread producer([&] {
    while (cb.failed() == 0) {
      db->IncrementAsync("c", 1, cb.Make());
      sent.fetch_add(1);
    }
  });
  while (sent.load() < 2000) std::this_thread::yield();
  ASSERT_OK(db->DeleteCounter("c"));
  producer.join();
  cb.Wait(sent.load());
  EXPECT_GT(cb.ok(), 0u);
  EXPECT_GT(cb.failed(), 0u);  // after the delete: NotFound
  EXPECT_NE(cb.last_error().find("NotFound"), std::string::npos);
  VerifyReport report;
  ASSERT_OK(tally::Verify(*db, &report));
  EXPECT_TRUE(report.ok()) << report.problems.front();
  EXPECT_EQ(report.shard_keys, 0u);
}

// Item 2a: a callback that creates the counter it was refused for and
// retries; inline (refused up front, or sync = false) and on the notifier.
TEST(IncrementAsync, Item02a_DoneMayCreateTheMissingCounterAndRetry) {
  for (bool sync : {false, true}) {
    SCOPED_TRACE(sync ? "sync" : "no sync");
    test::TempDir dir;
    auto db = Open(dir.Sub("db"), sync);
    Callbacks audited;
    test::FinishesOrDie("a callback calling CreateCounter", kHangBound, [&] {
      db->IncrementAsync("orders", 7, [&](const Result<IncrementResult>& r) {
        EXPECT_TRUE(r.status().IsNotFound()) << r.status().ToString();
        EXPECT_OK(db->CreateCounter("orders", {2}));
        db->IncrementAsync("orders", 7, [&](const Result<IncrementResult>& r2) {
          EXPECT_OK(r2);
          // An applied increment's callback may create a counter too.
          EXPECT_OK(db->CreateCounter("audit", {1}));
          audited.Make()(r2);
        });
      });
      audited.Wait(1);
    });
    EXPECT_EQ(audited.ok(), 1u);
    EXPECT_EQ(test::OkValue(db->ReadExact("orders")), 7);
    EXPECT_OK(db->DescribeCounter("audit"));
  }
}

// Item 2b: sync = false, the callback reads while a CreateCounter waits for
// the catalog. Before the fix the callback ran inside IncrementAsync's
// shared hold, the creator queued behind it, and the callback's own read
// queued behind the creator (the lock prefers writers): a deadlock.
TEST(IncrementAsync, Item02b_InlineDoneMayReadWhileAWriterWaits) {
  test::TempDir dir;
  auto db = Open(dir.Sub("db"), /*sync=*/false);
  ASSERT_OK(db->CreateCounter("c", {2}));
  std::atomic<bool> created{false};
  std::thread creator;
  Result<int64_t> read = Status::NotFound("not read");
  test::FinishesOrDie(
      "an inline callback reading beside CreateCounter", kHangBound, [&] {
        db->IncrementAsync("c", 5, [&](const Result<IncrementResult>& r) {
          EXPECT_OK(r);
          creator = std::thread([&] {
            EXPECT_OK(db->CreateCounter("other", {1}));
            created.store(true);
          });
          AwaitWriter(db.get(), created);
          read = db->ReadExact("c");
        });
        creator.join();
      });
  ASSERT_OK(read);
  EXPECT_EQ(*read, 5);
}

// Item 2c: sync = true, a callback reads while DeleteCounter removes an
// unrelated counter. Before the fix the delete held the catalog while it
// waited for every async commit to be called back; the reading callback
// waited for the catalog, and the second commit's callback, queued behind
// it on the notifier, never came.
TEST(IncrementAsync, Item02c_DurableDoneMayReadBesideDeleteCounter) {
  test::TempDir dir;
  auto db = OpenDurable(dir.Sub("db"));
  ASSERT_OK(db->CreateCounter("c", {2}));
  ASSERT_OK(db->CreateCounter("scratch", {1}));
  std::mutex mu;
  std::condition_variable cv;
  bool issued = false;  // guarded by mu: the second increment is in flight
  std::atomic<bool> deleted{false};
  std::thread deleter;
  Result<int64_t> read = Status::NotFound("not read");
  Callbacks second;
  test::FinishesOrDie(
      "a durable callback reading beside DeleteCounter", kHangBound, [&] {
        db->IncrementAsync("c", 1, [&](const Result<IncrementResult>& r) {
          EXPECT_OK(r);
          {
            std::unique_lock<std::mutex> lock(mu);
            cv.wait(lock, [&] { return issued; });
          }
          deleter = std::thread([&] {
            EXPECT_OK(db->DeleteCounter("scratch"));
            deleted.store(true);
          });
          AwaitWriter(db.get(), deleted);
          read = db->ReadExact("c");
        });
        db->IncrementAsync("c", 1, second.Make());
        {
          std::lock_guard<std::mutex> lock(mu);
          issued = true;
        }
        cv.notify_all();
        // Callbacks run in order: the first one (and its `deleter`) is done.
        second.Wait(1);
        deleter.join();
      });
  ASSERT_OK(read);
  EXPECT_GE(*read, 1);
  EXPECT_EQ(second.ok(), 1u);
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), 2);
  EXPECT_TRUE(db->DescribeCounter("scratch").status().IsNotFound());
}

// Item 2: the "except DeleteCounter" restriction is gone. A callback
// deletes a counter, its own included, with more commits of it in flight:
// the delete waits for them to be written, not for their callbacks.
TEST(IncrementAsync, Item02_DoneMayDeleteCounters) {
  for (bool sync : {false, true}) {
    SCOPED_TRACE(sync ? "sync" : "no sync");
    test::TempDir dir;
    auto db = Open(dir.Sub("db"), sync);
    ASSERT_OK(db->CreateCounter("c", {2}));
    ASSERT_OK(db->CreateCounter("scratch", {1}));
    Callbacks later;
    test::FinishesOrDie("a callback calling DeleteCounter", kHangBound, [&] {
      db->IncrementAsync("c", 1, [&](const Result<IncrementResult>& r) {
        EXPECT_OK(r);
        EXPECT_OK(db->DeleteCounter("scratch"));
        EXPECT_OK(db->DeleteCounter("c"));
      });
      for (int i = 0; i < 10; ++i) db->IncrementAsync("c", 1, later.Make());
      later.Wait(10);
    });
    // Each later one landed before the delete or was refused after it.
    EXPECT_EQ(later.ok() + later.failed(), 10u);
    EXPECT_TRUE(db->ReadExact("c").status().IsNotFound());
    VerifyReport report;
    ASSERT_OK(tally::Verify(*db, &report));
    EXPECT_TRUE(report.ok()) << report.problems.front();
    EXPECT_EQ(report.shard_keys, 0u);
  }
}

// Item 2, the loop: async increments whose callbacks read the
// total, beside a thread creating and deleting a scratch counter, in both
// durability modes. Hung within a second before the fix.
TEST(IncrementAsync, Item02c_StressReadingCallbacksBesideCreateDelete) {
  for (bool sync : {false, true}) {
    SCOPED_TRACE(sync ? "sync" : "no sync");
    test::TempDir dir;
    auto db = Open(dir.Sub("db"), sync);
    ASSERT_OK(db->CreateCounter("c", {4}));
    constexpr int kN = 3000;
    Callbacks cb;
    std::atomic<int> bad_reads{0};
    test::FinishesOrDie(
        "reading callbacks beside create/delete", kHangBound, [&] {
          std::atomic<bool> stop{false};
          std::thread churn([&] {
            while (!stop.load()) {
              EXPECT_OK(db->CreateCounter("scratch", {1}));
              EXPECT_OK(db->DeleteCounter("scratch"));
            }
          });
          for (int i = 0; i < kN; ++i) {
            db->IncrementAsync("c", 1, [&](const Result<IncrementResult>& r) {
              Result<int64_t> total = db->ReadExact("c");
              if (!total.ok() || *total < 1 || *total > kN)
                bad_reads.fetch_add(1);
              cb.Make()(r);
            });
          }
          cb.Wait(kN);
          stop.store(true);
          churn.join();
        });
    EXPECT_EQ(cb.ok(), uint64_t{kN});
    EXPECT_EQ(bad_reads.load(), 0);
    EXPECT_EQ(test::OkValue(db->ReadExact("c")), kN);
  }
}

}  // namespace
}  // namespace tally
