// Reservations (Db::Reserve, CommitReservation, ReleaseReservation): units
// held against a strict counter's minimum until committed, released or
// run out on the injected clock; every call idempotent by id; a crash
// (reopen) never brings a hold back past its end nor gives units back
// twice; the race of takes and reservations over the last units of a
// stock with a reader watching.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "tally/admin.h"
#include "tally/batch.h"
#include "tally/db.h"
#include "tally/limits.h"
#include "engine/coding.h"
#include "engine/column_families.h"
#include "schema/records.h"
#include "testutil/db_fixture.h"
#include "testutil/raw_db.h"
#include "testutil/sanitized.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

class Reservations : public test::DbMatrixTest {
 protected:
  Reservations() : DbMatrixTest(1'700'000'040'000) {}
  static CounterSpec Stock(bool keyed = true) {
    CounterSpec spec;
    spec.bounds = CounterBounds::AtLeast(0);
    spec.keyed = keyed;
    return spec;
  }
  std::unique_ptr<Db> OpenStock(int64_t units) {
    auto db = Open(ClockOptions());
    EXPECT_OK(db->CreateCounter("stock", Stock()));
    EXPECT_OK(db->Increment({"stock", "sku"}, units));
    return db;
  }
  static constexpr int64_t kMinute = 60'000;
};

TEST_P(Reservations, AHoldCountsAgainstTheMinimumUntilCommitted) {
  auto db = OpenStock(5);
  const CounterRef sku{"stock", "sku"};
  auto r = db->Reserve(sku, "cart-1", 3, 15 * kMinute);
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kApplied);
  EXPECT_EQ(r->state, HoldState::kHeld);
  EXPECT_EQ(r->units, 3);
  EXPECT_EQ(r->expires_at_ms, clock_.NowMillis() + 15 * kMinute);
  EXPECT_EQ(r->value, 5);
  EXPECT_EQ(r->available, 2);
  // The value does not move; takes only reach what is available.
  EXPECT_EQ(test::OkValue(db->ReadExact(sku)), 5);
  EXPECT_EQ(test::OkValue(db->Increment(sku, -3)).outcome, Outcome::kRefused);
  auto take = db->Increment(sku, -2);
  ASSERT_OK(take);
  EXPECT_EQ(take->outcome, Outcome::kApplied);
  EXPECT_EQ(take->value, 3);
  EXPECT_EQ(take->remaining, 0);
  EXPECT_EQ(test::OkValue(db->Increment(sku, -1)).outcome, Outcome::kRefused);
  // Nor another reservation.
  r = db->Reserve(sku, "cart-2", 1, kMinute);
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kRefused);
  EXPECT_EQ(r->state, HoldState::kRefused);
  // The commit takes the units.
  r = db->CommitReservation(sku, "cart-1");
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kApplied);
  EXPECT_EQ(r->state, HoldState::kCommitted);
  EXPECT_EQ(r->value, 0);
  EXPECT_EQ(r->available, 0);
  EXPECT_EQ(test::OkValue(db->ReadExact(sku)), 0);
  // Every call again: the same state, nothing moves.
  EXPECT_EQ(test::OkValue(db->CommitReservation(sku, "cart-1")).outcome,
            Outcome::kDuplicate);
  r = db->ReleaseReservation(sku, "cart-1");
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kRefused);
  EXPECT_EQ(r->state, HoldState::kCommitted);
  r = db->Reserve(sku, "cart-1", 3, kMinute);
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kDuplicate);
  EXPECT_EQ(r->state, HoldState::kCommitted);
  EXPECT_EQ(test::OkValue(db->Reserve(sku, "cart-1", 4, kMinute)).outcome,
            Outcome::kConflict);
  // A refused reservation stays refused, also once units are back.
  ASSERT_OK(db->Increment(sku, 10));
  r = db->Reserve(sku, "cart-2", 1, kMinute);
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kDuplicate);
  EXPECT_EQ(r->state, HoldState::kRefused);
  EXPECT_EQ(test::OkValue(db->CommitReservation(sku, "cart-2")).outcome,
            Outcome::kRefused);
  EXPECT_EQ(test::OkValue(db->ReadExact(sku)), 10);
  VerifyReport report;
  ASSERT_OK(Verify(*db, &report));
  EXPECT_TRUE(report.problems.empty()) << report.problems.front();
}

TEST_P(Reservations, AReleaseOrTheEndOfTheHoldGivesTheUnitsBack) {
  auto db = OpenStock(4);
  const CounterRef sku{"stock", "sku"};
  ASSERT_OK(db->Reserve(sku, "a", 2, kMinute));
  ASSERT_OK(db->Reserve(sku, "b", 2, 2 * kMinute));
  auto held = db->ReadHeld(sku);
  ASSERT_OK(held);
  EXPECT_EQ(held->value, 4);
  EXPECT_EQ(held->held, 4);
  EXPECT_EQ(held->available, 0);
  EXPECT_EQ(held->open, 2u);
  EXPECT_EQ(held->next_expiry_ms, clock_.NowMillis() + kMinute);
  auto r = db->ReleaseReservation(sku, "a");
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kApplied);
  EXPECT_EQ(r->state, HoldState::kReleased);
  EXPECT_EQ(r->available, 2);
  EXPECT_EQ(test::OkValue(db->ReleaseReservation(sku, "a")).outcome,
            Outcome::kDuplicate);
  // "b" runs out: at its end exactly, not a millisecond later.
  clock_.Advance(2 * kMinute - 1);
  EXPECT_EQ(test::OkValue(db->ReadHeld(sku)).held, 2);
  clock_.Advance(1);
  held = db->ReadHeld(sku);
  ASSERT_OK(held);
  EXPECT_EQ(held->held, 0);
  EXPECT_EQ(held->available, 4);
  EXPECT_EQ(test::OkValue(db->GetReservation(sku, "b")).state,
            HoldState::kExpired);
  r = db->CommitReservation(sku, "b");
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kRefused);
  EXPECT_EQ(r->state, HoldState::kExpired);
  EXPECT_EQ(test::OkValue(db->ReadExact(sku)), 4);
  EXPECT_EQ(test::OkValue(db->ReleaseReservation(sku, "b")).outcome,
            Outcome::kDuplicate);
  EXPECT_EQ(test::OkValue(db->Increment(sku, -4)).outcome, Outcome::kApplied);
  EXPECT_TRUE(db->CommitReservation(sku, "never").status().IsNotFound());
}

TEST_P(Reservations, AReopenNeitherBringsAHoldBackNorReleasesTwice) {
  auto db = OpenStock(3);
  const CounterRef sku{"stock", "sku"};
  ASSERT_OK(db->Reserve(sku, "held", 1, kMinute));
  ASSERT_OK(db->Reserve(sku, "gone", 1, kMinute));
  ASSERT_OK(db->ReleaseReservation(sku, "gone"));
  Reopen(&db);
  // Still held after the reopen: the take is refused past it.
  EXPECT_EQ(test::OkValue(db->Increment(sku, -3)).outcome, Outcome::kRefused);
  EXPECT_EQ(test::OkValue(db->ReleaseReservation(sku, "gone")).outcome,
            Outcome::kDuplicate);
  EXPECT_EQ(test::OkValue(db->ReadHeld(sku)).available, 2);
  clock_.Advance(kMinute);
  Reopen(&db);
  EXPECT_EQ(test::OkValue(db->ReadHeld(sku)).held, 0);
  EXPECT_EQ(test::OkValue(db->Increment(sku, -3)).outcome, Outcome::kApplied);
  EXPECT_EQ(test::OkValue(db->CommitReservation(sku, "held")).state,
            HoldState::kExpired);
  EXPECT_EQ(test::OkValue(db->ReadExact(sku)), 0);
}

TEST_P(Reservations, WrongCountersAndArgumentsAreRefused) {
  auto db = Open(ClockOptions());
  ASSERT_OK(db->CreateCounter("views", {4}));
  CounterSpec capped;
  capped.bounds = CounterBounds::AtMost(10);
  ASSERT_OK(db->CreateCounter("capped", capped));
  ASSERT_OK(db->CreateCounter("stock", Stock(false)));
  for (const char* name : {"views", "capped"}) {
    auto r = db->Reserve(name, "r", 1, kMinute);
    EXPECT_TRUE(r.status().IsInvalidArgument()) << r.status().ToString();
  }
  EXPECT_TRUE(db->Reserve("stock", "r", 0, kMinute).status().IsInvalidArgument());
  EXPECT_TRUE(db->Reserve("stock", "r", 1, 0).status().IsInvalidArgument());
  EXPECT_TRUE(db->Reserve("stock", "r", 1, kMaxHoldMs + 1)
                  .status()
                  .IsInvalidArgument());
  EXPECT_TRUE(db->Reserve("stock", "", 1, 1).status().IsInvalidArgument());
  EXPECT_TRUE(
      db->Reserve("stock", "bad\nid", 1, 1).status().IsInvalidArgument());
  EXPECT_TRUE(db->Reserve("nope", "r", 1, 1).status().IsNotFound());
  EXPECT_TRUE(db->Reserve({"stock", "k"}, "r", 1, 1).status().IsInvalidArgument());
  // A named counter's reservation works as a key's.
  ASSERT_OK(db->Increment("stock", 1));
  EXPECT_EQ(test::OkValue(db->Reserve("stock", "r", 1, 1)).outcome,
            Outcome::kApplied);
}

TEST_P(Reservations, DeletingAKeyDropsItsReservations) {
  auto db = OpenStock(2);
  const CounterRef sku{"stock", "sku"};
  ASSERT_OK(db->Reserve(sku, "r", 2, kMinute));
  ASSERT_OK(db->DeleteKey("stock", "sku"));
  EXPECT_TRUE(db->GetReservation(sku, "r").status().IsNotFound());
  ASSERT_OK(db->Increment(sku, 1));
  EXPECT_EQ(test::OkValue(db->Increment(sku, -1)).outcome, Outcome::kApplied);
}

TEST_P(Reservations, BatchesAndResetsSeeTheHeldUnits) {
  auto db = OpenStock(3);
  const CounterRef sku{"stock", "sku"};
  ASSERT_OK(db->Reserve(sku, "r", 2, kMinute));
  Batch b;
  b.Add(sku, -1);
  b.Add(sku, -1);
  std::vector<IncrementResult> results;
  Status s = db->Apply(b, &results);
  EXPECT_TRUE(s.IsOutOfRange()) << s.ToString();
  EXPECT_NE(s.message().find("reservations hold"), std::string::npos)
      << s.ToString();
  EXPECT_EQ(test::OkValue(db->ReadExact(sku)), 3);
  // A reset may not leave less than the held units.
  auto reset = db->Reset(sku, "reset-1", 1);
  EXPECT_TRUE(reset.status().IsInvalidArgument()) << reset.status().ToString();
  ASSERT_OK(db->Reset(sku, "reset-2", 2));
  EXPECT_EQ(test::OkValue(db->ReadHeld(sku)).available, 0);
  EXPECT_EQ(test::OkValue(db->CommitReservation(sku, "r")).value, 0);
}

TEST_P(Reservations, TakesAndReservationsRaceOverTheLastUnits) {
  // 8 threads over a stock of 1,000: half take one unit at a time, half
  // reserve one, then commit or release it (alternately). A reader checks
  // throughout that the value never goes below 0 and that what is
  // available (value less held) never does either. In the end the
  // accepted takes plus the committed reservations equal the stock
  // consumed, exactly.
  const int kOps = test::kSanitized ? 500 : 4'000;
  constexpr int kThreads = 8;
  constexpr int64_t kStock = 1'000;
  auto db = OpenStock(kStock);
  const CounterRef sku{"stock", "sku"};
  std::atomic<int64_t> taken{0}, committed{0}, failures{0}, below{0};
  std::atomic<int> writers{kThreads};
  std::atomic<int64_t> reads{0};
  std::thread reader([&] {
    for (bool last = false; !last;) {
      last = writers.load() == 0;
      Result<HeldValue> v = db->ReadHeld(sku);
      if (!v.ok()) {
        ++failures;
        return;
      }
      ++reads;
      if (v->value < 0 || v->available < 0) ++below;
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kOps; ++i) {
        if (t % 2 == 0) {
          auto r = db->Increment(sku, -1);
          if (!r.ok()) {
            ++failures;
          } else if (r->outcome == Outcome::kApplied) {
            ++taken;
          }
          continue;
        }
        const std::string id = std::to_string(t) + "-" + std::to_string(i);
        auto r = db->Reserve(sku, id, 1, kMinute);
        if (!r.ok()) {
          ++failures;
          continue;
        }
        if (r->state != HoldState::kHeld) continue;  // refused: none left
        if (r->available < 0) ++below;
        auto done = i % 2 == 0 ? db->CommitReservation(sku, id)
                               : db->ReleaseReservation(sku, id);
        if (!done.ok() || done->outcome != Outcome::kApplied) {
          ++failures;
        } else if (done->state == HoldState::kCommitted) {
          ++committed;
        }
      }
      --writers;
    });
  }
  for (std::thread& t : threads) t.join();
  reader.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(below.load(), 0);
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(taken.load() + committed.load(), kStock);
  EXPECT_EQ(test::OkValue(db->ReadExact(sku)), 0);
  EXPECT_EQ(test::OkValue(db->ReadHeld(sku)).held, 0);
  VerifyReport report;
  ASSERT_OK(Verify(*db, &report));
  EXPECT_TRUE(report.problems.empty()) << report.problems.front();
}

TEST_P(Reservations, VerifyFindsHoldsTheValueCannotCover) {
  // A held reservation the value cannot cover (written behind the engine's
  // back, as damage would leave it) is a Verify finding naming the key; so
  // is a reservation of a counter that takes none.
  auto db = OpenStock(1);
  const CounterRef sku{"stock", "sku"};
  ASSERT_OK(db->Reserve(sku, "ok", 1, 60 * kMinute));
  ASSERT_OK(db->CreateCounter("views", {2}));
  const uint64_t stock_id = test::OkValue(db->DescribeCounter("stock")).id;
  const uint64_t views_id = test::OkValue(db->DescribeCounter("views")).id;
  db.reset();
  {
    test::RawDb raw(path());
    ASSERT_NE(raw.db(), nullptr);
    for (const auto& [id, key] : {std::pair<uint64_t, std::string>{stock_id, "sku"},
                                  {views_id, ""}}) {
      schema::HoldRecord h;
      h.reservation_id = "forged";
      h.counter_id = id;
      h.units = 5;
      h.created_at_ms = clock_.NowMillis();
      h.expires_at_ms = clock_.NowMillis() + 60 * kMinute;
      std::string k, v;
      engine::EncodeHoldKey(id, engine::kOpenHoldTag, key, "forged", &k);
      schema::EncodeHold(h, &v);
      ASSERT_TRUE(raw.db()
                      ->Put(rocksdb::WriteOptions(),
                            raw.family(engine::kHolds), k, v)
                      .ok());
    }
  }
  Reopen(&db);
  VerifyReport report;
  ASSERT_OK(Verify(*db, &report));
  EXPECT_EQ(report.reservations, 3u);
  std::string all;
  for (const std::string& p : report.problems) all += p + "\n";
  EXPECT_NE(all.find("key 'sku': value 1 does not cover the 6 units"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("counter 'views': a reservation, but the counter takes "
                     "none"),
            std::string::npos)
      << all;
  EXPECT_EQ(report.problems.size(), 2u) << all;
  // Once the holds run out, the value covers what is held (nothing).
  clock_.Advance(60 * kMinute);
  VerifyReport later;
  ASSERT_OK(Verify(*db, &later));
  EXPECT_EQ(later.problems.size(), 1u);  // the reservation of "views" stays
}

TALLY_WRITE_MODES(Reservations);

}  // namespace
}  // namespace tally
