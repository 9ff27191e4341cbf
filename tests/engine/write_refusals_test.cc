// The write calls' refusals, one rule for all four (Increment,
// IncrementOnce, IncrementAsync, Apply): a refusal (InvalidArgument,
// NotFound, OutOfRange, NotSupported) counts once in EngineStats::rejected,
// other errors and every outcome do not; and no error hands out a result
// (Apply leaves the caller's vector as it was).
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tally/admin.h"
#include "tally/limits.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

using test::ManualClock;
using test::OpenOrDie;
using test::TempDir;

constexpr int64_t kStart = 1'700'000'000'000;  // ms since the epoch
constexpr int64_t kHour = 3'600'000;
constexpr int64_t kDay = 24 * kHour;

// IncrementAsync's answer; refusals and (sync=false) commits come inline.
Status Async(Db* db, std::string_view counter, int64_t delta,
             const IncrementOptions& options = {}) {
  int calls = 0;
  Status got = Status::Corruption("no callback");
  db->IncrementAsync(
      counter, delta,
      [&](const Result<IncrementResult>& r) {
        ++calls;
        got = r.status();
      },
      options);
  EXPECT_EQ(calls, 1) << "the callback runs exactly once";
  return got;
}

// A writer with one counter of each kind the refusals need, its outbox
// full (Options::outbox_max_entries = 1, one entry written), and a
// read-only instance beside it.
class WriteRefusals : public ::testing::Test {
 protected:
  void SetUp() override {
    Options o;
    o.clock = &clock_;
    o.outbox_max_entries = 1;
    writer_ = OpenOrDie(dir_.path(), o);
    ASSERT_NE(writer_, nullptr);
    ASSERT_OK(writer_->CreateCounter("c", {4}));
    CounterSpec aff{4};
    aff.policy = ShardPolicy::kAffinity;
    ASSERT_OK(writer_->CreateCounter("aff", aff));
    CounterSpec win{4};
    win.dedupe_window_ms = kHour;
    ASSERT_OK(writer_->CreateCounter("win", win));
    CounterSpec day{4};
    day.bucket = BucketWidth::kDay;
    day.retention_ms = kDay;
    ASSERT_OK(writer_->CreateCounter("day", day));
    ASSERT_OK(writer_->CreateCounter("ob", test::OutboxSpec(2)));
    ASSERT_OK(writer_->Increment("ob", 1));  // the outbox is now full
    ASSERT_OK(writer_->IncrementOnce("c", "seen", 3));
    Options ro;
    ro.read_only = true;
    reader_ = OpenOrDie(dir_.path(), ro);
    ASSERT_NE(reader_, nullptr);
  }

  uint64_t Rejected() const {
    // A read-only Db's GetStats shows its writer's figures; its own
    // refusals are apart.
    return tally::GetStats(*writer_).rejected +
           tally::GetStats(*reader_).reader_rejected;
  }

  ManualClock clock_{kStart};
  TempDir dir_;
  std::unique_ptr<Db> writer_;
  std::unique_ptr<Db> reader_;
};

struct Case {
  const char* name;
  bool refusal;  // counted in EngineStats::rejected
  std::function<Status(Db* writer, Db* reader,
                       std::vector<IncrementResult>* results)>
      run;
};

Status ResultStatus(const Result<IncrementResult>& r) { return r.status(); }

std::vector<Case> Cases() {
  using R = std::vector<IncrementResult>*;
  Batch big;
  for (size_t i = 0; i <= kMaxBatchOps; ++i) big.Add("c", 1);
  return {
      // Increment
      {"Increment/read-only", true,
       [](Db*, Db* rd, R) { return ResultStatus(rd->Increment("c", 1)); }},
      {"Increment/bad delta", true,
       [](Db* w, Db*, R) {
         return ResultStatus(w->Increment("c", kMinDelta - 1));
       }},
      {"Increment/unknown counter", true,
       [](Db* w, Db*, R) { return ResultStatus(w->Increment("nope", 1)); }},
      {"Increment/no affinity key", true,
       [](Db* w, Db*, R) { return ResultStatus(w->Increment("aff", 1)); }},
      {"Increment/past retention", true,
       [](Db* w, Db*, R) {
         return ResultStatus(
             w->Increment("day", 1, IncrementOptions{{}, kStart - 10 * kDay}));
       }},
      {"Increment/outbox full", false,
       [](Db* w, Db*, R) { return ResultStatus(w->Increment("ob", 1)); }},
      // IncrementOnce
      {"IncrementOnce/read-only", true,
       [](Db*, Db* rd, R) {
         return ResultStatus(rd->IncrementOnce("c", "e", 1));
       }},
      {"IncrementOnce/empty event id", true,
       [](Db* w, Db*, R) {
         return ResultStatus(w->IncrementOnce("c", "", 1));
       }},
      {"IncrementOnce/unknown counter", true,
       [](Db* w, Db*, R) {
         return ResultStatus(w->IncrementOnce("nope", "e", 1));
       }},
      {"IncrementOnce/window without event time", true,
       [](Db* w, Db*, R) {
         return ResultStatus(w->IncrementOnce("win", "e", 1));
       }},
      {"IncrementOnce/outbox full", false,
       [](Db* w, Db*, R) {
         return ResultStatus(w->IncrementOnce("ob", "e", 1));
       }},
      // IncrementAsync
      {"IncrementAsync/read-only", true,
       [](Db*, Db* rd, R) { return Async(rd, "c", 1); }},
      {"IncrementAsync/bad delta", true,
       [](Db* w, Db*, R) { return Async(w, "c", kMinDelta - 1); }},
      {"IncrementAsync/unknown counter", true,
       [](Db* w, Db*, R) { return Async(w, "nope", 1); }},
      {"IncrementAsync/outbox counter", true,
       [](Db* w, Db*, R) { return Async(w, "ob", 1); }},
      // Apply
      {"Apply/read-only", true,
       [](Db*, Db* rd, R out) {
         Batch b;
         b.Add("c", 1);
         return rd->Apply(b, out);
       }},
      {"Apply/too many ops", true,
       [big](Db* w, Db*, R out) { return w->Apply(big, out); }},
      {"Apply/bad delta", true,
       [](Db* w, Db*, R out) {
         Batch b;
         b.Add("c", 1);
         b.Add("c", kMinDelta - 1);
         return w->Apply(b, out);
       }},
      {"Apply/unknown counter", true,
       [](Db* w, Db*, R out) {
         Batch b;
         b.Add("c", 1);
         b.AddOnce("nope", "e", 1);
         return w->Apply(b, out);
       }},
      {"Apply/window without event time", true,
       [](Db* w, Db*, R out) {
         Batch b;
         b.AddOnce("win", "e", 1);
         return w->Apply(b, out);
       }},
      {"Apply/past retention", true,
       [](Db* w, Db*, R out) {
         Batch b;
         b.AddOnce("c", "seen", 3);  // a duplicate, decided before the refusal
         b.Add("day", 1, IncrementOptions{{}, kStart - 10 * kDay});
         return w->Apply(b, out);
       }},
      {"Apply/sum beyond int64", true,
       [](Db* w, Db*, R out) {
         Batch b;
         b.Add("c", kMaxDelta);
         b.Add("c", 1);
         return w->Apply(b, out);
       }},
      {"Apply/outbox full", false,
       [](Db* w, Db*, R out) {
         Batch b;
         b.AddOnce("c", "seen", 3);
         b.Add("ob", 1);
         return w->Apply(b, out);
       }},
  };
}

TEST_F(WriteRefusals, EachRefusalCountsOnceOtherErrorsDoNot) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    std::vector<IncrementResult> results;
    const uint64_t before = Rejected();
    Status s = c.run(writer_.get(), reader_.get(), &results);
    ASSERT_FALSE(s.ok());
    const bool refusal = s.IsInvalidArgument() || s.IsNotFound() ||
                         s.IsOutOfRange() || s.IsNotSupported();
    EXPECT_EQ(refusal, c.refusal) << s.ToString();
    EXPECT_EQ(Rejected() - before, c.refusal ? 1u : 0u) << s.ToString();
  }
}

TEST_F(WriteRefusals, OutcomesAreNotRefusals) {
  const uint64_t before = Rejected();
  auto dup = writer_->IncrementOnce("c", "seen", 3);
  ASSERT_OK(dup);
  EXPECT_EQ(dup->outcome, Outcome::kDuplicate);
  auto conflict = writer_->IncrementOnce("c", "seen", 4);
  ASSERT_OK(conflict);
  EXPECT_EQ(conflict->outcome, Outcome::kConflict);
  auto outside = writer_->IncrementOnce("win", "old", 1,
                                        OnceOptions{kStart - 2 * kHour, {}});
  ASSERT_OK(outside);
  EXPECT_EQ(outside->outcome, Outcome::kOutsideWindow);
  Batch b;
  b.AddOnce("c", "seen", 3);
  std::vector<IncrementResult> results;
  ASSERT_OK(writer_->Apply(b, &results));
  EXPECT_EQ(Rejected(), before);
}

TEST_F(WriteRefusals, NoErrorHandsOutResults) {
  const std::vector<IncrementResult> sentinel(3, {Outcome::kConflict, 777});
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    std::vector<IncrementResult> results = sentinel;
    ASSERT_FALSE(c.run(writer_.get(), reader_.get(), &results).ok());
    ASSERT_EQ(results.size(), sentinel.size()) << "Apply wrote its output";
    for (const IncrementResult& r : results) {
      EXPECT_EQ(r.outcome, Outcome::kConflict);
      EXPECT_EQ(r.shard, 777u);
    }
  }
  // Nothing of the refused calls was counted or written.
  EXPECT_EQ(test::OkValue(writer_->ReadExact("c")), 3);
  EXPECT_EQ(test::OkValue(writer_->ReadExact("day")), 0);
  EXPECT_EQ(test::OkValue(writer_->ReadExact("ob")), 1);
}

}  // namespace
}  // namespace tally
