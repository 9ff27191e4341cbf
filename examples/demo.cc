// tally_demo: three small experiments that show what tally is for.
//
//   (a) Exactly-once under redelivery (seed lab 000): 40 order events, each
//       delivered twice at the same moment from two threads, still count 40.
//   (b) Distribution, not folklore (seed 001): 200 checkouts against one hot
//       counter and against a 10-shard counter; both count 200, and the
//       per-operation timings are printed as a distribution.
//   (c) A side effect done once (seed 004): 30 items, each trigger
//       delivered 3 times to 4 workers; each worker claims the item, does
//       the "insert" (a table that checks the fencing token) and completes
//       the claim with a count in the same write: 30 rows, counted 30. Then
//       a worker paused past its lease: its insert and its completion are
//       refused, the next holder's stand.
//
// Usage: tally_demo [DB_DIR]
// Without DB_DIR a fresh database is made under $TMPDIR (or /tmp) and removed
// at the end. Exits 1 if any check fails.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tally/tally.h"

namespace {

// Every failed check prints one line and makes the demo exit 1.
bool g_failed = false;

void Expect(bool ok, const char* what) {
  if (!ok) {
    std::printf("  CHECK FAILED: %s\n", what);
    g_failed = true;
  }
}

// Prints a failed Status and records the failure; returns status.ok().
bool Ok(const tally::Status& status, const char* what) {
  if (!status.ok()) {
    std::printf("  ERROR %s: %s\n", what, status.ToString().c_str());
    g_failed = true;
  }
  return status.ok();
}

std::string EventId(const char* prefix, int i) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%s%04d", prefix, i);
  return buf;
}

// A rendezvous for two threads: neither leaves Wait() before both arrived.
// It makes the two copies of an event hit the engine at the same moment,
// which is the case an idempotency check has to survive. (C++17 has no
// std::barrier.)
class PairBarrier {
 public:
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    const uint64_t round = round_;
    if (++arrived_ == 2) {
      arrived_ = 0;
      ++round_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return round_ != round; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  uint64_t round_ = 0;
};

void PrintHistogram(tally::Db* db, const std::string& counter) {
  tally::Result<std::vector<int64_t>> shards = db->ShardCounts(counter);
  if (!Ok(shards.status(), "ShardCounts")) return;
  const int64_t max = *std::max_element(shards->begin(), shards->end());
  // One '#' per increment, scaled down when a shard holds more than 50.
  const int64_t per_mark = max > 50 ? (max + 49) / 50 : 1;
  for (size_t i = 0; i < shards->size(); ++i) {
    const int64_t n = (*shards)[i];
    std::printf("    shard %2zu | %-50s %lld\n", i,
                std::string(static_cast<size_t>(n / per_mark), '#').c_str(),
                static_cast<long long>(n));
  }
  if (per_mark > 1) {
    std::printf("    (one # per %lld increments)\n",
                static_cast<long long>(per_mark));
  }
}

// Checks a counter's exact total and marker count.
void CheckTotals(tally::Db* db, const std::string& counter, int64_t want) {
  tally::Result<int64_t> total = db->ReadExact(counter);
  tally::Result<uint64_t> markers = db->CountMarkers(counter);
  if (!Ok(total.status(), "ReadExact") ||
      !Ok(markers.status(), "CountMarkers")) {
    return;
  }
  std::printf("  %-18s exact total %lld, markers %llu (expected %lld each)\n",
              counter.c_str(), static_cast<long long>(*total),
              static_cast<unsigned long long>(*markers),
              static_cast<long long>(want));
  Expect(*total == want, "exact total equals the number of distinct events");
  Expect(*markers == static_cast<uint64_t>(want),
         "one marker per distinct event");
}

// (a) Seed lab 000: every event delivered twice, concurrently.
void RedeliveryLab(tally::Db* db) {
  std::printf("\n(a) Exactly once, even when a message is delivered twice\n");
  const std::string counter = "orders-today";
  constexpr int kEvents = 40;
  constexpr int kPairs = 4;  // 8 threads: two per event stream
  if (!Ok(db->CreateCounter(counter, tally::CounterSpec{10}),
          "CreateCounter")) {
    return;
  }
  std::printf("  counter %s: 10 shards\n", counter.c_str());
  std::printf(
      "  %d events ORDER_ACCEPTED:ord-0000..ord-%04d, each delivered "
      "twice at the same moment by two of %d threads\n",
      kEvents, kEvents - 1, 2 * kPairs);

  std::atomic<int> applied{0}, duplicates{0}, conflicts{0}, errors{0};
  std::vector<PairBarrier> barriers(kPairs);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2 * kPairs; ++t) {
    threads.emplace_back([&, t] {
      const int pair = t / 2;
      // Both threads of a pair walk the same events in the same order and
      // meet before each one, so the two copies race inside the engine.
      for (int i = pair; i < kEvents; i += kPairs) {
        barriers[pair].Wait();
        tally::Result<tally::IncrementResult> r =
            db->IncrementOnce(counter, EventId("ORDER_ACCEPTED:ord-", i), 1);
        if (!r.ok()) {
          ++errors;
        } else if (r->outcome == tally::Outcome::kApplied) {
          ++applied;
        } else if (r->outcome == tally::Outcome::kDuplicate) {
          ++duplicates;
        } else {
          ++conflicts;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();

  std::printf(
      "  deliveries: %d = applied %d + duplicates %d + conflicts %d "
      "+ errors %d\n",
      2 * kEvents, applied.load(), duplicates.load(), conflicts.load(),
      errors.load());
  Expect(errors.load() == 0, "no delivery failed");
  Expect(applied.load() == kEvents, "each event applied once");
  Expect(duplicates.load() == kEvents, "each second copy seen as duplicate");
  CheckTotals(db, counter, kEvents);
  std::printf(
      "  shard histogram (a once-increment's shard is the hash of "
      "its event id, so a retry lands on the same shard):\n");
  PrintHistogram(db, counter);
}

struct Summary {
  size_t count = 0;
  double min = 0, p50 = 0, p99 = 0, max = 0;
};

// Nearest-rank percentiles: every reported figure is a real sample.
Summary Summarize(std::vector<double> samples) {
  Summary s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  auto rank = [&](double p) {
    size_t r = static_cast<size_t>(p * samples.size() + 0.999999);
    return samples[std::min(samples.size(), std::max<size_t>(r, 1)) - 1];
  };
  s.count = samples.size();
  s.min = samples.front();
  s.p50 = rank(0.50);
  s.p99 = rank(0.99);
  s.max = samples.back();
  return s;
}

// Runs the 200 checkout once-increments against `counter` from 4 threads and
// returns each operation's duration in microseconds.
std::vector<double> RunCheckouts(tally::Db* db, const std::string& counter,
                                 int ops) {
  std::vector<double> micros(ops, 0.0);
  std::atomic<int> next{0};
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = next++; i < ops; i = next++) {
        const std::string id = EventId("checkout-", i);
        const auto start = std::chrono::steady_clock::now();
        tally::Result<tally::IncrementResult> r =
            db->IncrementOnce(counter, id, 1);
        const auto end = std::chrono::steady_clock::now();
        if (!r.ok()) ++errors;
        micros[i] =
            std::chrono::duration<double, std::micro>(end - start).count();
      }
    });
  }
  for (std::thread& th : threads) th.join();
  Expect(errors.load() == 0, "no checkout increment failed");
  return micros;
}

// (b) Seed 001: the same fixture against 1 shard and against 10 shards.
void DistributionLab(tally::Db* db) {
  std::printf("\n(b) Measure distribution, not folklore\n");
  constexpr int kOps = 200;
  struct Variant {
    const char* name;
    uint32_t shards;
  };
  const Variant variants[] = {{"checkouts-hot", 1}, {"checkouts-sharded", 10}};
  std::printf(
      "  %d once-increments checkout-0000..checkout-%04d from 4 "
      "threads, against each counter:\n",
      kOps, kOps - 1);
  std::printf("  %-18s %6s %7s %7s %7s %7s   (microseconds per operation)\n",
              "counter", "count", "min", "p50", "p99", "max");
  for (const Variant& v : variants) {
    if (!Ok(db->CreateCounter(v.name, tally::CounterSpec{v.shards}),
            "CreateCounter")) {
      return;
    }
    const Summary s = Summarize(RunCheckouts(db, v.name, kOps));
    std::printf("  %-18s %6zu %7.1f %7.1f %7.1f %7.1f\n", v.name, s.count,
                s.min, s.p50, s.p99, s.max);
  }
  std::printf(
      "  These timings describe this machine, this build and this "
      "200-operation fixture\n  only. They are not a throughput "
      "claim: measure your own workload.\n");
  for (const Variant& v : variants) CheckTotals(db, v.name, kOps);
  std::printf(
      "  checkouts-sharded histogram (does this fixture spread its "
      "writes?):\n");
  PrintHistogram(db, "checkouts-sharded");
}

// The demo's clock: the system clock plus an offset the demo moves on, so
// a lease can run out without waiting (Options::clock).
class DemoClock : public tally::Clock {
 public:
  int64_t NowMillis() const override {
    return tally::Clock::System()->NowMillis() + offset_ms_.load();
  }
  void Advance(int64_t ms) { offset_ms_.fetch_add(ms); }

 private:
  std::atomic<int64_t> offset_ms_{0};
};

// The other system a side effect writes to: an items table that keeps the
// highest fencing token it has seen per item and refuses a write carrying
// a lower one (docs/claims.md, "What is not").
class FencedTable {
 public:
  bool Insert(const std::string& item, uint64_t token) {
    std::lock_guard<std::mutex> l(mu_);
    uint64_t& seen = tokens_[item];
    if (token < seen) return false;
    seen = token;
    ++rows_[item];
    return true;
  }
  size_t Rows(const std::string& item) {
    std::lock_guard<std::mutex> l(mu_);
    return rows_[item];
  }

 private:
  std::mutex mu_;
  std::map<std::string, uint64_t> tokens_;
  std::map<std::string, size_t> rows_;
};

// (c) Seed 004: the Redis-lock recipe done right.
void ClaimsLab(tally::Db* db, DemoClock* clock) {
  std::printf("\n(c) A side effect done once (claims, fencing tokens)\n");
  constexpr int kItems = 30;
  constexpr int kWorkers = 4;
  constexpr int64_t kLeaseMs = 30'000;
  if (!Ok(db->CreateCounter("items-inserted", {1}), "CreateCounter")) return;
  FencedTable table;
  std::atomic<int> next{0}, acquired{0}, busy{0}, done{0};
  std::mutex error_mu;
  tally::Status error;  // the first failed call of any worker
  auto failed = [&](const tally::Status& s) {
    std::lock_guard<std::mutex> l(error_mu);
    if (error.ok()) error = s;
  };
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&, w] {
      const std::string me = "worker-" + std::to_string(w);
      for (int d; (d = next.fetch_add(1)) < 3 * kItems;) {
        const std::string item = EventId("item-", d / 3);  // copies adjacent
        auto c = db->Claim(item, me, kLeaseMs);
        if (!c.ok()) return failed(c.status());
        if (c->answer == tally::ClaimAnswer::kBusy) ++busy;
        if (c->answer == tally::ClaimAnswer::kDone) ++done;
        if (c->answer != tally::ClaimAnswer::kAcquired) continue;
        ++acquired;
        table.Insert(item, c->claim.token);  // the side effect
        tally::Batch count;
        count.Add("items-inserted", 1);
        auto r = db->CompleteClaim(item, c->claim.token, "row", count);
        if (!r.ok()) return failed(r.status());
      }
    });
  }
  for (std::thread& t : workers) t.join();
  if (!Ok(error, "a worker's Claim or CompleteClaim")) return;
  size_t rows = 0;
  for (int i = 0; i < kItems; ++i) rows += table.Rows(EventId("item-", i));
  auto counted = db->ReadExact("items-inserted");
  if (!Ok(counted.status(), "ReadExact")) return;
  std::printf("  %d deliveries: %d acquired, %d busy, %d already done\n",
              3 * kItems, acquired.load(), busy.load(), done.load());
  std::printf("  rows inserted %zu, items-inserted %lld (expected %d each)\n",
              rows, static_cast<long long>(*counted), kItems);
  Expect(rows == kItems && *counted == kItems && acquired == kItems,
        "each item inserted and counted once");

  // A worker paused past its lease (a GC pause, a stall): the lock of the
  // recipe would let it finish; the token does not.
  auto slow = db->Claim("item-late", "slow", kLeaseMs);
  if (!Ok(slow.status(), "Claim")) return;
  clock->Advance(kLeaseMs);  // slow is paused; its lease runs out
  auto fast = db->Claim("item-late", "fast", kLeaseMs);
  if (!Ok(fast.status(), "Claim")) return;
  const bool fast_inserted = table.Insert("item-late", fast->claim.token);
  auto fast_done = db->CompleteClaim("item-late", fast->claim.token, "row");
  const bool slow_inserted = table.Insert("item-late", slow->claim.token);
  auto slow_done = db->CompleteClaim("item-late", slow->claim.token, "row");
  if (!Ok(fast_done.status(), "CompleteClaim") ||
      !Ok(slow_done.status(), "CompleteClaim")) {
    return;
  }
  std::printf("  paused worker: token %llu, insert %s, completion %s\n",
              static_cast<unsigned long long>(slow->claim.token),
              slow_inserted ? "accepted" : "refused (older token)",
              tally::ClaimAnswerName(slow_done->answer));
  std::printf("  next holder:   token %llu, insert %s, completion %s\n",
              static_cast<unsigned long long>(fast->claim.token),
              fast_inserted ? "accepted" : "refused",
              tally::ClaimAnswerName(fast_done->answer));
  Expect(fast_inserted && !slow_inserted &&
            fast_done->answer == tally::ClaimAnswer::kCompleted &&
            slow_done->answer == tally::ClaimAnswer::kStaleToken &&
            table.Rows("item-late") == 1,
        "the paused worker's insert and completion are refused");
}

// A fresh directory under $TMPDIR or /tmp, or "" on failure.
std::string MakeTempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string templ =
      std::string(base && *base ? base : "/tmp") + "/tally-demo-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  return ::mkdtemp(buf.data()) ? std::string(buf.data()) : std::string();
}

}  // namespace

int main(int argc, char** argv) {
  const bool keep = argc > 1;
  const std::string dir = keep ? std::string(argv[1]) : MakeTempDir();
  if (dir.empty()) {
    std::fprintf(stderr, "tally_demo: cannot create a temporary directory\n");
    return 1;
  }
  const std::string path = keep ? dir : dir + "/db";
  std::printf("tally %s demo: sharded counters with exactly-once increments\n",
              TALLY_VERSION_STRING);
  std::printf("database: %s%s\n", path.c_str(),
              keep ? "" : " (temporary, removed at the end)");

  {
    DemoClock clock;
    tally::Options options;
    options.clock = &clock;
    std::unique_ptr<tally::Db> db;
    if (Ok(tally::Db::Open(options, path, &db), "Db::Open")) {
      RedeliveryLab(db.get());
      if (!g_failed) DistributionLab(db.get());
      if (!g_failed) ClaimsLab(db.get(), &clock);
    }
  }  // the Db closes here, before its directory is removed

  if (!keep) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::printf("\n%s\n", g_failed ? "demo FAILED: see the checks above"
                                 : "all checks passed");
  return g_failed ? 1 : 0;
}
