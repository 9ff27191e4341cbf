// A read-only reader of the outbox (counterctl outbox list --after SEQ, an
// app's reader process) never skips an entry: commits finish out of order,
// so a later seq can be visible while an earlier one is still committing;
// the reader stops before a missing seq until its view proves it settled
// (docs/sync.md, "No skipped entries").

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/db_impl.h"
#include "reliability/fault_fs.h"
#include "tally/db.h"
#include "tally/outbox.h"
#include "testutil/db_fixture.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

Options ReadOnly() {
  Options o;
  o.read_only = true;
  return o;
}

std::vector<uint64_t> Seqs(Db* reader, uint64_t after) {
  EXPECT_OK(reader->Refresh());
  auto entries = tally::ReadOutbox(*reader, after, 1000);
  EXPECT_OK(entries);
  std::vector<uint64_t> seqs;
  if (entries.ok()) {
    for (const OutboxEntry& e : *entries) seqs.push_back(e.seq);
  }
  return seqs;
}

// Holds the writer thread that reserves seq `held` between its reservation
// and its commit, until Release().
class ReservationGate {
 public:
  explicit ReservationGate(Db* writer, uint64_t held) : held_(held) {
    static_cast<engine::DbImpl*>(writer)
        ->outbox_sequencer()
        ->SetAfterReserveForTest([this](uint64_t first) { Hold(first); });
  }
  void WaitUntilHeld() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return holding_; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  void Hold(uint64_t first) {
    if (first != held_) return;
    std::unique_lock<std::mutex> lock(mu_);
    holding_ = true;
    cv_.notify_all();
    cv_.wait(lock, [this] { return released_; });
  }
  const uint64_t held_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool holding_ = false, released_ = false;
};

class OutboxReadOnly : public test::DbTest {};

TEST_F(OutboxReadOnly, Item09_NeverReturnsASeqPastOneStillCommitting) {
  auto writer = Open();
  ASSERT_OK(writer->CreateCounter("c", test::OutboxSpec(2)));
  auto reader = Open(ReadOnly());
  ReservationGate gate(writer.get(), /*held=*/1);
  std::thread first([&] { ASSERT_OK(writer->Increment("c", 1)); });
  gate.WaitUntilHeld();
  // Seq 2 commits while seq 1 is reserved and not committed.
  ASSERT_OK(writer->Increment("c", 2));
  EXPECT_EQ(Seqs(reader.get(), 0), std::vector<uint64_t>{})
      << "seq 2 returned while seq 1 was still committing";
  gate.Release();
  first.join();
  EXPECT_EQ(Seqs(reader.get(), 0), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(Seqs(reader.get(), 1), std::vector<uint64_t>{2});
}

// A commit that fails leaves its seq dead; an entry reserved while it was in
// flight cannot prove that. The reader must not wait forever: the writer
// proves it (at the latest at its next open).
TEST_F(OutboxReadOnly, Item09_NotHeldForeverBehindAFailedCommit) {
  auto fs = std::make_shared<test::FaultFs>();
  std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(fs);
  Options wo;
  wo.rollup_interval_ms = 0;
  auto writer = Open(wo, env.get());
  ASSERT_OK(writer->CreateCounter("c", test::OutboxSpec(2)));
  ASSERT_OK(writer->Increment("c", 1));  // seq 1
  auto reader = Open(ReadOnly());
  {
    ReservationGate gate(writer.get(), /*held=*/2);
    std::thread failing([&] {
      EXPECT_FALSE(writer->Increment("c", 10).ok());  // seq 2: fails
    });
    gate.WaitUntilHeld();
    ASSERT_OK(writer->Increment("c", 3));  // seq 3, reserved beside seq 2
    fs->Inject(test::Fault::kWriteError, ".log");
    gate.Release();
    failing.join();
    fs->Heal();
  }
  // Seq 3 was reserved while seq 2 was in flight: alone it proves nothing.
  EXPECT_EQ(Seqs(reader.get(), 0), std::vector<uint64_t>{1});
  writer.reset();
  writer = Open(wo, env.get());  // every seq settled now
  EXPECT_EQ(Seqs(reader.get(), 1), std::vector<uint64_t>{3});
  ASSERT_OK(writer->Increment("c", 4));  // seq 4, never 2 or 3 again
  EXPECT_EQ(Seqs(reader.get(), 3), std::vector<uint64_t>{4});
}

// The reproduction, bounded: 3 writer threads (plain increments and
// batches, which reserve runs), a read-only reader paging with Refresh and
// ReadOutbox(after cursor). Every seq must come exactly once, in order.
TEST_F(OutboxReadOnly, Item09_PagingReaderBesideThreeWritersSkipsNothing) {
  Options wo;
  wo.rollup_interval_ms = 0;
  auto writer = Open(wo);
  ASSERT_OK(writer->CreateCounter("c", test::OutboxSpec(8)));
  auto reader = Open(ReadOnly());
  constexpr int kThreads = 3, kCalls = 1500;
  std::atomic<int> done{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      std::vector<IncrementResult> results;
      for (int i = 0; i < kCalls; ++i) {
        if (i % 4 == 0) {
          Batch b;
          b.Add("c", 1);
          b.AddOnce("c", std::to_string(t) + ":" + std::to_string(i), 1);
          b.Add("c", 1);
          ASSERT_OK(writer->Apply(b, &results));
        } else {
          ASSERT_OK(writer->Increment("c", 1));
        }
      }
      done.fetch_add(1);
    });
  }
  uint64_t cursor = 0, skipped = 0, entries = 0;
  for (;;) {
    const bool writers_done = done.load() == kThreads;
    ASSERT_OK(reader->Refresh());
    auto page = tally::ReadOutbox(*reader, cursor, 200);
    ASSERT_OK(page);
    for (const OutboxEntry& e : *page) {
      if (e.seq != cursor + 1) skipped += e.seq - cursor - 1;
      cursor = e.seq;
      ++entries;
    }
    if (writers_done && page->empty()) break;
  }
  for (auto& w : writers) w.join();
  ::testing::Test::RecordProperty("skipped", static_cast<int>(skipped));
  EXPECT_EQ(skipped, 0u);
  const uint64_t expected = kThreads * (kCalls / 4 * 3 + kCalls / 4 * 3);
  EXPECT_EQ(entries, expected);
  EXPECT_EQ(cursor, expected);
}

}  // namespace
}  // namespace tally
