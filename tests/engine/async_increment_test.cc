// IncrementAsync: every callback runs exactly once with the increment's
// outcome, after it is committed (durable with Options::sync); refusals call
// back inline; a delete waits for async commits, so none lands on a deleted
// counter.

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

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

std::unique_ptr<Db> OpenDurable(const std::string& path) {
  Options o;
  o.sync = true;
  o.rollup_interval_ms = 0;
  return test::OpenOrDie(path, o);
}

TEST(IncrementAsync, ManyInFlightFromOneThreadCountExactly) {
  test::TempDir dir;
  constexpr int kN = 5000;
  {
    auto db = OpenDurable(dir.Sub("db"));
    ASSERT_OK(db->CreateCounter("c", {8}));
    Callbacks cb;
    for (int i = 0; i < kN; ++i) db->IncrementAsync("c", 2, cb.Make());
    cb.Wait(kN);
    EXPECT_EQ(cb.ok(), uint64_t{kN});
    EXPECT_EQ(*db->ReadExact("c"), 2 * kN);
    EXPECT_EQ(db->GetStats().applied, uint64_t{kN});
    // Queued and not yet called back when the Db closes: still committed.
    for (int i = 0; i < kN; ++i) db->IncrementAsync("c", 1, cb.Make());
  }
  auto db = OpenDurable(dir.Sub("db"));
  EXPECT_EQ(*db->ReadExact("c"), 3 * kN);
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
  EXPECT_EQ(*db->ReadExact("c"), 1);
}

// A delete racing a stream of async increments leaves no key behind.
TEST(IncrementAsync, DeleteWaitsForAsyncCommits) {
  test::TempDir dir;
  auto db = OpenDurable(dir.Sub("db"));
  ASSERT_OK(db->CreateCounter("c", {4}));
  Callbacks cb;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> sent{0};
  std::thread producer([&] {
    while (!stop.load()) {
      db->IncrementAsync("c", 1, cb.Make());
      sent.fetch_add(1);
    }
  });
  while (sent.load() < 2000) std::this_thread::yield();
  ASSERT_OK(db->DeleteCounter("c"));
  stop.store(true);
  producer.join();
  cb.Wait(sent.load());
  EXPECT_GT(cb.ok(), 0u);
  EXPECT_GT(cb.failed(), 0u);  // after the delete: NotFound
  VerifyReport report;
  ASSERT_OK(db->Verify(&report));
  EXPECT_TRUE(report.ok()) << report.problems.front();
  EXPECT_EQ(report.shard_keys, 0u);
}

}  // namespace
}  // namespace tally
