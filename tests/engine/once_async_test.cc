// IncrementOnceAsync: the outcome IncrementOnce would give (applied,
// duplicate, conflict, outside window, refusal), each callback exactly once,
// every event counted exactly once however many copies are in flight from
// however many threads (sync on and off), copies of a queued event decided
// against it and answered after it (its failure included), IncrementOnce
// waiting for a queued copy, refusals inline, and a close with callbacks
// pending committing and answering them all.

#include <gtest/gtest.h>
#include <rocksdb/env.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "wal/gate_fs.h"
#include "testutil/answers.h"
#include "tally/admin.h"
#include "tally/db.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

using test::Answers;

Options Opts(bool sync) {
  Options o;
  o.sync = sync;
  o.rollup_interval_ms = 0;
  return o;
}

// A durable database over a GateFs, to hold a group commit inside its WAL
// sync: a copy queued then stays queued until the test releases it.
struct GatedDb {
  explicit GatedDb(const std::string& path)
      : fs(std::make_shared<test::GateFs>()),
        env(rocksdb::NewCompositeEnv(fs)) {
    Options o = Opts(/*sync=*/true);
    db = test::OpenOrDie(path, o, env.get());
  }
  std::shared_ptr<test::GateFs> fs;
  std::unique_ptr<rocksdb::Env> env;
  std::unique_ptr<Db> db;  // last: closed before the env
};

class OnceAsync : public ::testing::TestWithParam<bool> {};

// Four threads each submit every event of an overlapping set, some twice in
// a row, without waiting, while a fifth counts the same events with
// IncrementOnce and Apply: each event is applied exactly once, every other
// copy is a duplicate with the applied copy's shard, and the sum and the
// engine counts agree.
TEST_P(OnceAsync, ManyThreadsManyCopiesCountEachEventOnce) {
  test::TempDir dir;
  constexpr int kEvents = 600;
  constexpr int kThreads = 4;
  constexpr int kCopiesPerThread = 2;  // event i twice in a row when i % 3 == 0
  auto db = test::OpenOrDie(dir.Sub("db"), Opts(GetParam()));
  ASSERT_OK(db->CreateCounter("c", {8}));
  auto delta_of = [](int i) { return int64_t{i % 7 + 1}; };
  auto id_of = [](int i) { return "ev-" + std::to_string(i); };

  std::vector<std::atomic<int>> applied(kEvents);
  std::vector<std::atomic<int>> shard_of(kEvents);
  for (auto& s : shard_of) s.store(-1);
  std::atomic<int> answered{0}, failures{0}, wrong{0};
  // Every answer: OK, applied at most once per event, one shard per event.
  auto check = [&](int i, const Result<IncrementResult>& r) {
    if (!r.ok()) {
      failures.fetch_add(1);
    } else {
      if (r->outcome == Outcome::kApplied) {
        applied[i].fetch_add(1);
      } else if (r->outcome != Outcome::kDuplicate) {
        wrong.fetch_add(1);
      }
      // Applied or a copy: the event's delta counted (types.h).
      if (r->applied != delta_of(i)) wrong.fetch_add(1);
      int expected = -1;
      const int shard = static_cast<int>(r->shard);
      if (!shard_of[i].compare_exchange_strong(expected, shard) &&
          expected != shard) {
        wrong.fetch_add(1);
      }
    }
    answered.fetch_add(1);
  };
  int submitted = 0;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kEvents; ++i) submitted += (i % 3 == 0) ? 2 : 1;
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < kEvents; ++k) {
        const int i = (k * 7 + t * 131) % kEvents;  // each its own order
        const int copies = (i % 3 == 0) ? kCopiesPerThread : 1;
        for (int c = 0; c < copies; ++c) {
          db->IncrementOnceAsync(
              "c", id_of(i), delta_of(i),
              [&check, i](const Result<IncrementResult>& r) { check(i, r); });
        }
      }
    });
  }
  // Synchronous copies of the same events beside them.
  std::thread sync_thread([&] {
    for (int i = 0; i < kEvents; i += 5) {
      check(i, db->IncrementOnce("c", id_of(i), delta_of(i)));
      Batch b;
      b.AddOnce("c", id_of(i + 1), delta_of(i + 1));
      std::vector<IncrementResult> results;
      Status s = db->Apply(b, &results);
      check(i + 1, s.ok() ? Result<IncrementResult>(results[0])
                          : Result<IncrementResult>(s));
    }
  });
  for (auto& th : threads) th.join();
  sync_thread.join();
  const int sync_calls = 2 * (kEvents / 5);
  test::FinishesOrDie("async once callbacks", std::chrono::seconds(120), [&] {
    while (answered.load() < submitted + sync_calls) std::this_thread::yield();
  });
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
  int64_t expected_sum = 0;
  for (int i = 0; i < kEvents; ++i) {
    EXPECT_EQ(applied[i].load(), 1) << "event " << i;
    expected_sum += delta_of(i);
    auto m = db->GetMarker("c", id_of(i));
    ASSERT_OK(m);
    EXPECT_EQ(static_cast<int>(m->shard), shard_of[i].load()) << "event " << i;
  }
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), expected_sum);
  const EngineStats stats = tally::GetStats(*db);
  EXPECT_EQ(stats.applied, uint64_t{kEvents});
  EXPECT_EQ(stats.duplicates, uint64_t(submitted + sync_calls - kEvents));
  EXPECT_EQ(stats.conflicts, 0u);
}

INSTANTIATE_TEST_SUITE_P(Sync, OnceAsync, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? "Durable" : "NotDurable";
                         });

// One thread submits three copies of an event while the first is queued:
// the second is a duplicate, the third (another delta) a conflict, both
// with the first copy's shard and answered after it, without waiting; a
// synchronous IncrementOnce of the event waits for the first's commit and
// then finds its marker.
TEST(OnceAsyncQueued, CopiesOfAQueuedEventAreDecidedAgainstIt) {
  test::TempDir dir;
  GatedDb g(dir.Sub("db"));
  Db* db = g.db.get();
  ASSERT_OK(db->CreateCounter("c", {16}));
  Answers answers;
  // A write held in its WAL sync: the next group queues behind it.
  g.fs->HoldNextSync();
  db->IncrementOnceAsync("c", "blocker", 1, answers.Make(0));
  g.fs->WaitUntilHeld();
  db->IncrementOnceAsync("c", "e", 5, answers.Make(1));
  db->IncrementOnceAsync("c", "e", 5, answers.Make(2));
  db->IncrementOnceAsync("c", "e", 6, answers.Make(3));
  EXPECT_EQ(answers.count(), 0u);  // none answered while the first is queued
  Result<IncrementResult> sync_answer = Status::Busy("not run");
  std::thread sync_copy([&] { sync_answer = db->IncrementOnce("c", "e", 5); });
  g.fs->Release();
  sync_copy.join();
  answers.Wait(4);
  EXPECT_EQ(answers.order(), (std::vector<int>{0, 1, 2, 3}));
  auto first = answers.Of(1);
  ASSERT_OK(first);
  EXPECT_EQ(first->outcome, Outcome::kApplied);
  auto second = answers.Of(2);
  ASSERT_OK(second);
  EXPECT_EQ(second->outcome, Outcome::kDuplicate);
  EXPECT_EQ(second->shard, first->shard);
  auto third = answers.Of(3);
  ASSERT_OK(third);
  EXPECT_EQ(third->outcome, Outcome::kConflict);
  EXPECT_EQ(third->shard, first->shard);
  ASSERT_OK(sync_answer);
  EXPECT_EQ(sync_answer->outcome, Outcome::kDuplicate);
  EXPECT_EQ(sync_answer->shard, first->shard);
  // The delta counted (IncrementResult::applied): the event's for the
  // applied copy and for every duplicate, none for the conflict.
  EXPECT_EQ(first->applied, 5);
  EXPECT_EQ(second->applied, 5);
  EXPECT_EQ(third->applied, 0);
  EXPECT_EQ(sync_answer->applied, 5);
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), 1 + 5);
  const EngineStats stats = tally::GetStats(*db);
  EXPECT_EQ(stats.applied, 2u);
  EXPECT_EQ(stats.duplicates, 2u);
  EXPECT_EQ(stats.conflicts, 1u);
  // Written now: a later copy finds the stored marker and is answered
  // inline.
  db->IncrementOnceAsync("c", "e", 5, answers.Make(4));
  EXPECT_EQ(answers.count(), 5u);
  auto stored = answers.Of(4);
  ASSERT_OK(stored);
  EXPECT_EQ(stored->outcome, Outcome::kDuplicate);
  EXPECT_EQ(stored->shard, first->shard);
  EXPECT_EQ(stored->applied, 5);
}

// The queued copy's commit fails: the copies riding on it get its error,
// nothing of the event is counted, and the database latches the failure.
TEST(OnceAsyncQueued, CopiesOfAFailedCommitGetItsError) {
  test::TempDir dir;
  GatedDb g(dir.Sub("db"));
  Db* db = g.db.get();
  ASSERT_OK(db->CreateCounter("c", {4}));
  Answers answers;
  g.fs->HoldNextSync();
  db->IncrementOnceAsync("c", "blocker", 1, answers.Make(0));
  g.fs->WaitUntilHeld();
  g.fs->FailNextSyncs(1);  // the group after the held one
  db->IncrementOnceAsync("c", "e", 5, answers.Make(1));
  db->IncrementOnceAsync("c", "e", 5, answers.Make(2));
  g.fs->Release();
  answers.Wait(3);
  EXPECT_OK(answers.Of(0));
  for (int tag : {1, 2}) {
    auto r = answers.Of(tag);
    ASSERT_FALSE(r.ok()) << tag;
    EXPECT_TRUE(r.status().IsIOError()) << r.status().ToString();
  }
  EXPECT_EQ(answers.order(), (std::vector<int>{0, 1, 2}));
  // A later copy is refused by the latched error, not taken as counted.
  db->IncrementOnceAsync("c", "e", 5, answers.Make(3));
  answers.Wait(4);
  EXPECT_TRUE(answers.Of(3).status().IsIOError());
  EXPECT_TRUE(db->GetMarker("c", "e").status().IsNotFound());
}

// Answers that need no write come inline, before the call returns:
// refusals, an event outside the window, a stored marker's duplicate and
// conflict; every answer without sync.
TEST(OnceAsyncInline, RefusalsAndWritelessAnswersCallBackInline) {
  test::TempDir dir;
  test::ManualClock clock(1'000'000'000);
  Options o = Opts(/*sync=*/true);
  o.clock = &clock;
  auto db = test::OpenOrDie(dir.Sub("db"), o);
  CounterSpec windowed{2};
  windowed.dedupe_window_ms = 60'000;
  ASSERT_OK(db->CreateCounter("w", windowed));
  CounterSpec with_outbox;
  with_outbox.outbox = true;
  ASSERT_OK(db->CreateCounter("o", with_outbox));
  Answers answers;
  db->IncrementOnceAsync("missing", "e", 1, answers.Make(0));
  ASSERT_EQ(answers.count(), 1u);
  EXPECT_TRUE(answers.Of(0).status().IsNotFound());
  db->IncrementOnceAsync("w", "", 1, answers.Make(1));  // empty event id
  ASSERT_EQ(answers.count(), 2u);
  EXPECT_TRUE(answers.Of(1).status().IsInvalidArgument());
  db->IncrementOnceAsync("o", "e", 1, answers.Make(2));
  ASSERT_EQ(answers.count(), 3u);
  EXPECT_TRUE(answers.Of(2).status().IsNotSupported());
  EXPECT_NE(answers.Of(2).status().message().find("has an outbox"),
            std::string::npos);
  const OnceOptions too_old{clock.NowMillis() - 120'000, {}};
  db->IncrementOnceAsync("w", "old", 1, answers.Make(3), too_old);
  ASSERT_EQ(answers.count(), 4u);
  ASSERT_OK(answers.Of(3));
  EXPECT_EQ(test::OkValue(answers.Of(3)).outcome, Outcome::kOutsideWindow);
  // Stored (IncrementOnce returned, so durable): duplicate and conflict.
  const OnceOptions now{clock.NowMillis(), {}};
  auto first = db->IncrementOnce("w", "e", 3, now);
  ASSERT_OK(first);
  db->IncrementOnceAsync("w", "e", 3, answers.Make(4), now);
  db->IncrementOnceAsync("w", "e", 4, answers.Make(5), now);
  ASSERT_EQ(answers.count(), 6u);
  ASSERT_OK(answers.Of(4));
  EXPECT_EQ(test::OkValue(answers.Of(4)).outcome, Outcome::kDuplicate);
  EXPECT_EQ(test::OkValue(answers.Of(4)).shard, first->shard);
  ASSERT_OK(answers.Of(5));
  EXPECT_EQ(test::OkValue(answers.Of(5)).outcome, Outcome::kConflict);
  EXPECT_EQ(test::OkValue(db->ReadExact("w")), 3);
  EXPECT_EQ(tally::GetStats(*db).rejected, 3u);
  db.reset();

  // Without sync every answer is inline, applied ones included.
  auto plain = test::OpenOrDie(dir.Sub("plain"), Opts(/*sync=*/false));
  ASSERT_OK(plain->CreateCounter("c", {2}));
  Answers inline_answers;
  plain->IncrementOnceAsync("c", "e", 2, inline_answers.Make(0));
  plain->IncrementOnceAsync("c", "e", 2, inline_answers.Make(1));
  ASSERT_EQ(inline_answers.count(), 2u);
  EXPECT_EQ(test::OkValue(inline_answers.Of(0)).outcome, Outcome::kApplied);
  EXPECT_EQ(test::OkValue(inline_answers.Of(1)).outcome, Outcome::kDuplicate);
  plain.reset();

  // A read-only database refuses inline.
  Options ro = Opts(false);
  ro.read_only = true;
  auto reader = test::OpenOrDie(dir.Sub("plain"), ro);
  Answers ro_answers;
  reader->IncrementOnceAsync("c", "f", 1, ro_answers.Make(0));
  ASSERT_EQ(ro_answers.count(), 1u);
  EXPECT_TRUE(ro_answers.Of(0).status().IsNotSupported());
}

// Closing with thousands of copies queued (duplicates among them) commits
// and answers every one; reopened, each event is counted once.
TEST(OnceAsyncClose, CloseWithCallbacksPendingAnswersThemAll) {
  test::TempDir dir;
  constexpr int kEvents = 3000;
  std::atomic<int> answered{0}, applied{0}, duplicates{0}, failed{0};
  {
    auto db = test::OpenOrDie(dir.Sub("db"), Opts(/*sync=*/true));
    ASSERT_OK(db->CreateCounter("c", {4}));
    for (int i = 0; i < 2 * kEvents; ++i) {
      db->IncrementOnceAsync("c", "ev-" + std::to_string(i % kEvents), 1,
                             [&](const Result<IncrementResult>& r) {
                               if (!r.ok()) {
                                 failed.fetch_add(1);
                               } else if (r->outcome == Outcome::kApplied) {
                                 applied.fetch_add(1);
                               } else if (r->outcome == Outcome::kDuplicate) {
                                 duplicates.fetch_add(1);
                               }
                               answered.fetch_add(1);
                             });
    }
  }  // closes with callbacks pending
  EXPECT_EQ(answered.load(), 2 * kEvents);
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(applied.load(), kEvents);
  EXPECT_EQ(duplicates.load(), kEvents);
  auto db = test::OpenOrDie(dir.Sub("db"), Opts(/*sync=*/true));
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), kEvents);
  EXPECT_EQ(test::OkValue(db->CountMarkers("c")), uint64_t{kEvents});
}

}  // namespace
}  // namespace tally
