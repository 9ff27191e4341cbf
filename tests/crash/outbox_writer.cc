// The writer half of the outbox power-cut crash test (issue 12, item 4): an
// edge database (Options::sync = false, on a PowerCutFs that logs every WAL
// sync) counts on two threads, an outbox counter only (plain increments,
// once-increments with fresh ids and redeliveries of them, batches), while a
// third thread runs SyncOutbox into a hub database (Options::sync = true)
// in small batches, until the driver SIGKILLs the process. The checker
// then models a power cut on the edge by truncating its WAL to the last
// logged sync (tests/testutil/power_cut_fs.h).
//
// Every applied increment's delta is appended to ACK_LOG ("A DELTA", one
// write(2) per call) so the checker can bound what the hub may hold. It
// writes one byte to stdout every few calls and after every sync.
//
// Usage: tally_crash_outbox_writer EDGE HUB SEED SYNC_LOG ACK_LOG

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "crash/outbox_workload.h"
#include "engine/open_on_env.h"
#include "tally/db.h"
#include "tally/sync.h"
#include "testutil/power_cut_fs.h"

namespace {

using tally::crash::kOutboxCounter;

[[noreturn]] void Die(const std::string& what, const tally::Status& s) {
  std::fprintf(stderr, "outbox_writer: %s: %s\n", what.c_str(),
               s.ToString().c_str());
  std::exit(2);
}

void Progress() {
  if (::write(STDOUT_FILENO, "x", 1) != 1) std::exit(3);
}

void Log(int fd, int64_t applied) {
  if (applied == 0) return;
  const std::string line = "A " + std::to_string(applied) + "\n";
  if (::write(fd, line.data(), line.size()) !=
      static_cast<ssize_t>(line.size())) {
    std::exit(3);
  }
}

void Count(tally::Db* edge, int log_fd, uint64_t seed, int thread) {
  std::mt19937_64 rng(seed * 100 + static_cast<uint64_t>(thread));
  const std::string prefix =
      "s" + std::to_string(seed) + "-t" + std::to_string(thread) + "-";
  std::vector<tally::IncrementResult> results;
  for (uint64_t i = 0;; ++i) {
    const int kind = static_cast<int>(rng() % 4);
    int64_t applied = 0;
    if (kind == 0) {
      const int64_t delta = 1 + static_cast<int64_t>(rng() % 5);
      auto r = edge->Increment(kOutboxCounter, delta);
      if (!r.ok()) Die("increment", r.status());
      applied = delta;
    } else if (kind == 1) {
      // A fresh id, or a redelivery of a recent one (a duplicate).
      const uint64_t id = i > 3 && rng() % 4 == 0 ? i - 1 - rng() % 3 : i;
      const int64_t delta = 1 + static_cast<int64_t>(id % 9);
      auto r = edge->IncrementOnce(kOutboxCounter, prefix + std::to_string(id),
                                   delta);
      if (!r.ok()) Die("increment once", r.status());
      if (r->outcome == tally::Outcome::kApplied) applied = delta;
    } else {
      tally::Batch b;
      for (int k = 0; k < 5; ++k) {
        b.Add(kOutboxCounter, 1 + static_cast<int64_t>(rng() % 3));
      }
      for (int k = 0; k < 2; ++k) {
        const std::string id =
            prefix + "b" + std::to_string(i) + "-" + std::to_string(k);
        b.AddOnce(kOutboxCounter, id, 1 + static_cast<int64_t>(rng() % 9));
      }
      tally::Status s = edge->Apply(b, &results);
      if (!s.ok()) Die("apply", s);
      for (size_t k = 0; k < results.size(); ++k) {
        if (results[k].outcome == tally::Outcome::kApplied) {
          applied += b.ops()[k].delta;
        }
      }
    }
    Log(log_fd, applied);
    if (i % 8 == 0) Progress();
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr,
                 "usage: tally_crash_outbox_writer EDGE HUB SEED SYNC_LOG "
                 "ACK_LOG\n");
    return 2;
  }
  auto fs = std::make_shared<tally::test::PowerCutFs>(argv[4]);
  std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(fs);
  tally::Options eo;
  eo.rollup_interval_ms = 0;
  tally::Options ho;
  ho.sync = true;
  ho.rollup_interval_ms = 0;
  std::unique_ptr<tally::Db> edge, hub;
  tally::Status s = tally::engine::OpenOnEnv(eo, argv[1], env.get(), &edge);
  if (!s.ok()) Die("open edge", s);
  s = tally::Db::Open(ho, argv[2], &hub);
  if (!s.ok()) Die("open hub", s);
  tally::CounterSpec spec;
  spec.shards = tally::crash::kEdgeShards;
  spec.outbox = true;
  s = edge->CreateCounter(kOutboxCounter, spec);
  if (!s.ok() && !s.IsAlreadyExists()) Die("create on the edge", s);
  s = hub->CreateCounter(kOutboxCounter, {tally::crash::kHubShards});
  if (!s.ok() && !s.IsAlreadyExists()) Die("create on the hub", s);
  const int log_fd = ::open(argv[5], O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (log_fd < 0) {
    std::perror("outbox_writer: ack log");
    return 2;
  }
  const uint64_t seed = std::strtoull(argv[3], nullptr, 10);
  std::vector<std::thread> threads;
  for (int t = 0; t < tally::crash::kOutboxThreads; ++t) {
    threads.emplace_back(Count, edge.get(), log_fd, seed, t);
  }
  tally::SyncOptions options;
  options.batch_entries = 8;
  for (;;) {  // never returns: killed by the driver
    tally::SyncReport report;
    s = tally::SyncOutbox(edge.get(), hub.get(), options, &report);
    if (!s.ok()) Die("sync", s);
    Progress();
  }
}
