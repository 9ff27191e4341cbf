// The writer half of the crash test: runs a duplicate-heavy workload of
// once-increments (single calls and multi-counter batches) from several
// threads until it is SIGKILLed. It writes one byte to stdout every
// kReportEvery operations so the parent can kill it at a random point of
// real progress without sleeping.
//
// Usage: tally_crash_writer DB_PATH SEED

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tally/db.h"

namespace {

constexpr int kThreads = 4;
constexpr int kEventSpace = 20000;  // small: many redeliveries
constexpr int kReportEvery = 25;
const char* const kCounters[] = {"orders", "revenue", "hot"};
constexpr uint32_t kShards[] = {10, 7, 1};

[[noreturn]] void Die(const std::string& what, const tally::Status& s) {
  std::fprintf(stderr, "crash_writer: %s: %s\n", what.c_str(),
               s.ToString().c_str());
  std::exit(2);
}

void Report() {
  static std::atomic<int> ops{0};
  if (ops.fetch_add(1) % kReportEvery == 0) {
    // A short write to a pipe is atomic; the parent only counts bytes.
    if (::write(STDOUT_FILENO, "x", 1) != 1) std::exit(3);
  }
}

void Work(tally::Db* db, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<tally::IncrementResult> results;
  for (;;) {
    const int event = static_cast<int>(rng() % kEventSpace);
    const std::string id = "evt-" + std::to_string(event);
    // The delta is a function of the event, so redeliveries are duplicates;
    // one in 50 deliveries carries another delta (a conflict).
    int64_t delta = event % 13 + 1;
    if (rng() % 50 == 0) delta += 100;
    if (rng() % 3 == 0) {
      // A multi-counter event: count and amount in one batch.
      tally::Batch b;
      b.AddOnce("orders", id, 1);
      b.AddOnce("revenue", id, delta);
      b.AddOnce("hot", id, delta);
      tally::Status s = db->Apply(b, &results);
      if (!s.ok()) Die("apply", s);
    } else {
      const char* counter = kCounters[rng() % 3];
      auto r = db->IncrementOnce(counter, id, delta);
      if (!r.ok()) Die("increment", r.status());
    }
    Report();
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: tally_crash_writer DB_PATH SEED\n");
    return 2;
  }
  std::unique_ptr<tally::Db> db;
  tally::Status s = tally::Db::Open(tally::Options(), argv[1], &db);
  if (!s.ok()) Die("open", s);
  for (size_t i = 0; i < 3; ++i) {
    s = db->CreateCounter(kCounters[i], {kShards[i]});
    if (!s.ok() && !s.IsAlreadyExists()) Die("create", s);
  }
  const uint64_t seed = std::strtoull(argv[2], nullptr, 10);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back(Work, db.get(), seed * 1000 + t);
  }
  for (auto& t : threads) t.join();  // never returns: killed by the parent
  return 0;
}
