// tally_space_bench: what tally costs in bytes, through its public API.
//
//   space/markers   N once-increments with distinct ids ("evt-K") on one
//                   10-shard counter, written with Apply (1000 per batch),
//                   then Compact: bytes_per_marker = live SST bytes of the
//                   events family / N; disk_bytes_per_marker = every file
//                   of the database directory / N.
//   space/counters  M counters (2,000 × scale: CreateCounter is slow, its
//                   mean time is reported as create_us) of 10 shards, each
//                   incremented 10 times (10 rounds of Apply over all counters,
//                   so each round writes one random shard of each), then
//                   Compact: bytes_per_counter = live SST bytes of the meta,
//                   shards and events families / M (events stays empty).
//
// Both report peak_rss_mb, the process's peak resident set during that
// benchmark (VmHWM, reset before it), and check the totals after the run.
// One iteration each: the figures are sizes, not rates.

#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "bench/tally_util.h"
#include "tally/tally.h"

namespace tally::bench {
namespace {

constexpr uint32_t kShards = 10;
constexpr int kBatch = 1000;

// Applies one Batch per kBatch of `items`, add(&batch, item) adding each.
template <typename Add>
Status ApplyInBatches(Db* db, const std::vector<std::string>& items, Add add) {
  Batch batch;
  std::vector<IncrementResult> results;
  Status s;
  for (size_t i = 0; i < items.size() && s.ok(); i += kBatch) {
    batch.Clear();
    for (size_t j = i; j < items.size() && j < i + kBatch; ++j) {
      add(&batch, items[j]);
    }
    s = db->Apply(batch, &results);
  }
  return s;
}

// Compacts and returns the database's figures, or fails the benchmark.
bool CompactAndStat(benchmark::State& state, Db* db, DbStats* stats) {
  Status s = tally::Compact(*db);
  if (!s.ok()) {
    Fail(state, "compact", s.ToString());
    return false;
  }
  Result<DbStats> r = tally::GetDbStats(*db);
  if (!r.ok()) {
    Fail(state, "stats", r.status().ToString());
    return false;
  }
  *stats = *r;
  return true;
}

void BM_SpaceMarkers(benchmark::State& state, int64_t n) {
  ResetPeakRss();
  size_t distinct = 0;
  const auto ids = DeliveryIds(static_cast<size_t>(n), 0, &distinct);
  TempDir dir;
  auto db = OpenTally(state, dir);
  if (db == nullptr) return;
  Status s = db->CreateCounter("c", CounterSpec{kShards});
  for (auto _ : state) {
    if (s.ok()) {
      s = ApplyInBatches(db.get(), ids, [](Batch* b, const std::string& id) {
        b->AddOnce("c", id, 1);
      });
    }
  }
  if (!s.ok()) {
    Fail(state, "write", s.ToString());
    return;
  }
  DbStats st;
  if (!CompactAndStat(state, db.get(), &st)) return;
  Result<int64_t> total = db->ReadExact("c");
  Result<uint64_t> events = db->CountMarkers("c");
  if (!total.ok() || *total != n || !events.ok() ||
      *events != static_cast<uint64_t>(n)) {
    Fail(state, "check", "total or marker count != written");
    return;
  }
  state.SetItemsProcessed(n);
  state.counters["markers"] = static_cast<double>(n);
  state.counters["bytes_per_marker"] =
      static_cast<double>(st.Family("events")->sst_bytes) /
      static_cast<double>(n);
  state.counters["disk_bytes_per_marker"] =
      static_cast<double>(DirBytes(dir.path())) / static_cast<double>(n);
  state.counters["peak_rss_mb"] =
      static_cast<double>(PeakRssBytes()) / 1048576.0;
}

void BM_SpaceCounters(benchmark::State& state, int64_t m) {
  constexpr int kRounds = 10;
  ResetPeakRss();
  TempDir dir;
  auto db = OpenTally(state, dir);
  if (db == nullptr) return;
  std::vector<std::string> names;
  names.reserve(static_cast<size_t>(m));
  Status s;
  Stopwatch create;
  for (int64_t i = 0; i < m && s.ok(); ++i) {
    names.push_back("counter-" + std::to_string(i));
    s = db->CreateCounter(names.back(), CounterSpec{kShards});
  }
  state.counters["create_us"] =
      static_cast<double>(create.Lap()) / 1e3 / static_cast<double>(m);
  for (auto _ : state) {
    for (int round = 0; round < kRounds && s.ok(); ++round) {
      s = ApplyInBatches(
          db.get(), names,
          [](Batch* b, const std::string& name) { b->Add(name, 1); });
    }
  }
  if (!s.ok()) {
    Fail(state, "write", s.ToString());
    return;
  }
  DbStats st;
  if (!CompactAndStat(state, db.get(), &st)) return;
  for (size_t i = 0; i < names.size(); i += names.size() / 16 + 1) {
    Result<int64_t> v = db->ReadExact(names[i]);
    if (!v.ok() || *v != kRounds) {
      Fail(state, "check", names[i] + " != " + std::to_string(kRounds));
      return;
    }
  }
  uint64_t bytes = 0;  // every family's
  for (const FamilyStats& f : st.families) bytes += f.sst_bytes;
  state.SetItemsProcessed(m);
  state.counters["counters"] = static_cast<double>(m);
  state.counters["bytes_per_counter"] =
      static_cast<double>(bytes) / static_cast<double>(m);
  state.counters["disk_bytes_per_counter"] =
      static_cast<double>(DirBytes(dir.path())) / static_cast<double>(m);
  state.counters["peak_rss_mb"] =
      static_cast<double>(PeakRssBytes()) / 1048576.0;
}

}  // namespace
}  // namespace tally::bench

int main(int argc, char** argv) {
  using tally::bench::Scaled;
  tally::bench::Register("space/markers", 1, tally::bench::BM_SpaceMarkers,
                         Scaled(200000));
  tally::bench::Register("space/counters", 1, tally::bench::BM_SpaceCounters,
                         Scaled(2000));
  return tally::bench::RunBenchmarks(argc, argv,
                                     {{"tally_version", TALLY_VERSION_STRING}});
}
