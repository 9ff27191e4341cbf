// The writer half of the crash test (like RocksDB's db_stress): several
// threads run a randomized, duplicate-heavy workload until the driver
// SIGKILLs the process:
//   - once-increments, single and in batches (with copies of one event inside
//     a batch), and multi-counter events (an order's count and amount);
//   - plain increments, single and in batches, and batches mixing plain and
//     once increments;
//   - roll-ups: the background worker every 5 ms, and RollupNow calls.
// Once-counters ("orders", "revenue", "hot") only ever get once-increments,
// so their shard sum must equal their markers' delta sum; the plain counter
// ("views") only gets plain ones.
//
// Every acknowledged result is appended to ACK_LOG (one write(2) per call;
// with --sync the database syncs every commit and the log is fdatasync'ed
// after each append):
//   O <counter> <event id> <delta>   a once-increment applied or found
//                                    already counted with this delta
//   P <delta>                        a plain increment of "views"
// It writes one byte to stdout every kReportEvery calls so the driver can
// kill it at a random point of real progress without sleeping.
//
// Usage: tally_crash_writer DB_PATH SEED ACK_LOG [--sync]
//
// Import mode (item 6 of issue 12: a kill during import):
//   tally_crash_writer --import SOURCE DB_PATH
// imports every counter of SOURCE (opened read-only) that DB_PATH does not
// hold, one tally::ImportCounter each, as `counterctl import --merge
// skip-existing` does, writing one byte to stdout as it starts each
// counter's import (after reading it) or skips it, and one more when all are
// imported; then waits to be killed.

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "crash/workload.h"
#include "tally/db.h"
#include "tally/import.h"
#include "testutil/exported.h"

namespace {

using tally::crash::kOnceCounters;
using tally::crash::kPlainCounter;

constexpr int kReportEvery = 25;
constexpr int kEventSpace = 20000;  // small: many redeliveries

[[noreturn]] void Die(const std::string& what, const tally::Status& s) {
  std::fprintf(stderr, "crash_writer: %s: %s\n", what.c_str(),
               s.ToString().c_str());
  std::exit(2);
}

class AckLog {
 public:
  AckLog(const char* path, bool sync)
      : fd_(::open(path, O_WRONLY | O_CREAT | O_APPEND, 0600)), sync_(sync) {
    if (fd_ < 0) {
      std::perror("crash_writer: ack log");
      std::exit(2);
    }
  }
  // One append per call: O_APPEND keeps concurrent lines whole.
  void Append(const std::string& lines) {
    if (lines.empty()) return;
    if (::write(fd_, lines.data(), lines.size()) !=
        static_cast<ssize_t>(lines.size())) {
      std::exit(3);
    }
    if (sync_ && ::fdatasync(fd_) != 0) std::exit(3);
  }

 private:
  const int fd_;
  const bool sync_;
};

void Report() {
  static std::atomic<int> calls{0};
  if (calls.fetch_add(1) % kReportEvery == 0) {
    // A short write to a pipe is atomic; the driver only counts bytes.
    if (::write(STDOUT_FILENO, "x", 1) != 1) std::exit(3);
  }
}

std::string OnceLine(std::string_view counter, const std::string& id,
                     int64_t delta) {
  return "O " + std::string(counter) + " " + id + " " + std::to_string(delta) +
         "\n";
}

// The acknowledged lines of one Apply's results.
std::string AckLines(const tally::Batch& batch,
                     const std::vector<tally::IncrementResult>& results) {
  std::string out;
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& op = batch.ops()[i];
    if (!op.once) {
      out += "P " + std::to_string(op.delta) + "\n";
    } else if (results[i].outcome != tally::Outcome::kConflict) {
      out += OnceLine(op.counter, op.event_id, op.delta);
    }
  }
  return out;
}

void Work(tally::Db* db, AckLog* log, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<tally::IncrementResult> results;
  auto event = [&rng] {
    const int e = static_cast<int>(rng() % kEventSpace);
    // The delta is a function of the event, so redeliveries are duplicates;
    // one delivery in 50 carries another delta (a conflict).
    int64_t delta = e % 13 + 1;
    if (rng() % 50 == 0) delta += 100;
    return std::make_pair("evt-" + std::to_string(e), delta);
  };
  for (;;) {
    const int kind = static_cast<int>(rng() % 10);
    tally::Batch b;
    if (kind <= 3) {  // a single once-increment
      auto [id, delta] = event();
      const char* counter = kOnceCounters[rng() % 3];
      auto r = db->IncrementOnce(counter, id, delta);
      if (!r.ok()) Die("increment once", r.status());
      if (r->outcome != tally::Outcome::kConflict) {
        log->Append(OnceLine(counter, id, delta));
      }
      Report();
      continue;
    }
    if (kind <= 5) {  // one order: count and amount, sometimes twice
      auto [id, delta] = event();
      const int copies = rng() % 4 == 0 ? 2 : 1;
      for (int c = 0; c < copies; ++c) {
        b.AddOnce("orders", id, 1);
        b.AddOnce("revenue", id, delta);
        b.AddOnce("hot", id, delta);
      }
    } else if (kind == 6) {  // 20 once-increments, repeats inside
      std::vector<std::pair<std::string, int64_t>> picked;
      for (int i = 0; i < 20; ++i) {
        if (!picked.empty() && rng() % 3 == 0) {
          picked.push_back(picked[rng() % picked.size()]);
        } else {
          picked.push_back(event());
        }
      }
      for (const auto& [id, delta] : picked) {
        b.AddOnce(kOnceCounters[rng() % 3], id, delta);
      }
    } else if (kind == 7 && rng() % 8 == 0) {  // a roll-up now and then
      tally::Status s =
          db->RollupNow(rng() % 2 == 0 ? kOnceCounters[rng() % 3] : "");
      if (!s.ok()) Die("rollup", s);
      Report();
      continue;
    } else if (kind <= 8) {  // a plain increment
      const int64_t delta = 1 + static_cast<int64_t>(rng() % 5);
      auto r = rng() % 2 == 0
                   ? db->Increment(kPlainCounter, delta)
                   : db->Increment(kPlainCounter, delta,
                                   {"device-" + std::to_string(rng() % 16)});
      if (!r.ok()) Die("increment", r.status());
      log->Append("P " + std::to_string(delta) + "\n");
      Report();
      continue;
    } else {  // plain and once in one batch
      for (int i = 0; i < 10; ++i) {
        b.Add(kPlainCounter, 1 + static_cast<int64_t>(rng() % 3));
      }
      for (int i = 0; i < 5; ++i) {
        auto [id, delta] = event();
        b.AddOnce("orders", id, delta);
      }
    }
    tally::Status s = db->Apply(b, &results);
    if (!s.ok()) Die("apply", s);
    log->Append(AckLines(b, results));
    Report();
  }
}

}  // namespace

int ImportMain(const char* source, const char* target) {
  tally::Options ro;
  ro.read_only = true;
  std::unique_ptr<tally::Db> src, db;
  tally::Status s = tally::Db::Open(ro, source, &src);
  if (!s.ok()) Die("open source", s);
  s = tally::Db::Open(tally::Options(), target, &db);
  if (!s.ok()) Die("open", s);
  auto counters = src->ListCounters();
  if (!counters.ok()) Die("list", counters.status());
  auto progress = [] {
    if (::write(STDOUT_FILENO, "x", 1) != 1) std::exit(3);
  };
  for (const tally::CounterInfo& c : *counters) {
    if (db->DescribeCounter(c.name).ok()) {
      progress();
      continue;
    }
    tally::CounterImport im;
    s = tally::test::ReadExported(src.get(), c, 1000, &im);
    if (!s.ok()) Die("read " + c.name, s);
    progress();  // a kill now lands inside this counter's import
    s = tally::ImportCounter(*db, im);
    if (!s.ok()) Die("import " + c.name, s);
  }
  progress();          // all imported
  for (;;) ::pause();  // killed by the driver
}

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--import") == 0) {
    return ImportMain(argv[2], argv[3]);
  }
  const bool sync = argc == 5 && std::strcmp(argv[4], "--sync") == 0;
  if (argc != 4 && !sync) {
    std::fprintf(stderr,
                 "usage: tally_crash_writer DB_PATH SEED ACK_LOG [--sync]\n");
    return 2;
  }
  tally::Options options;
  options.sync = sync;
  options.rollup_interval_ms = 5;
  // Small write buffers: the families flush often, which is what the
  // driver's read-only reader must see through (issue 12, item 1).
  options.write_buffer_bytes = 256 << 10;
  std::unique_ptr<tally::Db> db;
  tally::Status s = tally::Db::Open(options, argv[1], &db);
  if (!s.ok()) Die("open", s);
  for (size_t i = 0; i < 3; ++i) {
    s = db->CreateCounter(kOnceCounters[i], {tally::crash::kOnceShards[i]});
    if (!s.ok() && !s.IsAlreadyExists()) Die("create", s);
  }
  s = db->CreateCounter(kPlainCounter, {8});
  if (!s.ok() && !s.IsAlreadyExists()) Die("create", s);
  AckLog log(argv[3], sync);
  const uint64_t seed = std::strtoull(argv[2], nullptr, 10);
  std::vector<std::thread> threads;
  for (int t = 0; t < tally::crash::kThreads; ++t) {
    threads.emplace_back(Work, db.get(), &log, seed * 1000 + t);
  }
  for (auto& t : threads) t.join();  // never returns: killed by the driver
  return 0;
}
