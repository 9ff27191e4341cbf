// tally_bench: tally's write path against raw RocksDB doing the same work,
// in one binary so that every ratio comes from one run on one machine.
//
// The raw baselines (BM_Raw*) open RocksDB with its default options, as a
// user following RocksDB's documentation would (raw_util.h's
// OpenDefaultRocks: the engine's families and key coding, the int64 merge
// operator, nothing tuned), so a ratio measures tally against the RocksDB
// recipe for the same logical work: what the engine adds (name lookup,
// validation, hashing, the lock stripe, marker encoding, results) and what
// its configuration saves (issue 14: "a write path beyond RocksDB's
// defaults").
//
// Every benchmark opens a fresh database in a temporary directory with the
// WAL on and sync=false (the Options defaults) and does its setup outside the
// timed loop. Time is wall time (UseRealTime): RocksDB flushes on background
// threads, and those belong in the bill. items_per_second counts increments;
// for the once benchmarks it counts deliveries, duplicates included.
//
// Targets, as ratios of items_per_second from one run:
//   BM_Increment          / BM_RawMerge       >= 1.3 (issue 14; 0.9 in
//                                                issue 2, against raw
//                                                RocksDB with tally's options)
//   BM_IncrementOnce      / BM_RawOnce        >= 1.5 (issue 14; 0.85)
//   BM_IncrementOnceBatch/1000 / BM_RawOnceBatch/1000 >= 1.5 (issue 14)
//   BM_IncrementBatch/N   / BM_Increment      >= 8
//   BM_IncrementOnceBatch/N / BM_IncrementOnce >= 1.3
// bench/summarize.py computes them from --benchmark_out JSON files.

#include <benchmark/benchmark.h>
#include <rocksdb/db.h>
#include <rocksdb/version.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench/bench_util.h"
#include "bench/raw_util.h"
#include "bench/tally_util.h"
#include "engine/coding.h"
#include "engine/format.h"
#include "engine/rules.h"
#include "engine/merge_operator.h"
#include "engine/rocksdb_options.h"
#include "tally/tally.h"

namespace tally::bench {
namespace {

// Shards per counter in every benchmark: the shape issue 2 asks about.
constexpr uint32_t kShards = 10;
// Counters the batch benchmarks spread their increments over, so a batch
// touches several counters as a real batch would.
constexpr int kBatchCounters = 4;
const char* const kBatchCounterNames[kBatchCounters] = {"c0", "c1", "c2", "c3"};
// Size of the raw baseline's marker value: about what a marker record
// (delta, created-at, counter id, shard) costs without FlatBuffer framing.
constexpr size_t kRawMarkerBytes = 40;
// Deliveries a duplicate may trail its first copy by in the Dup50 streams.
constexpr size_t kDupWindow = 1024;

// ---- raw RocksDB, configured as the engine configures it ----

class RawDb {
 public:
  RawDb() { write_options_.sync = Options().sync; }
  ~RawDb() { CloseRocks(db_.get(), handles_); }
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;

  rocksdb::Status Open(const std::string& path) {
    return OpenDefaultRocks(path, &handles_, &db_);
  }

  rocksdb::DB* db() { return db_.get(); }
  rocksdb::ColumnFamilyHandle* shards() { return handles_[engine::kShards]; }
  rocksdb::ColumnFamilyHandle* events() { return handles_[engine::kEvents]; }
  const rocksdb::WriteOptions& write_options() const { return write_options_; }

  // The sum of counter `counter_id`'s shards, for the after-run check.
  rocksdb::Status SumShards(uint64_t counter_id, int64_t* sum) {
    return bench::SumShards(db_.get(), shards(), counter_id, kShards, sum);
  }

 private:
  // handles_ must go before db_ is deleted: the destructor orders that.
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  rocksdb::WriteOptions write_options_;
};

bool OpenRaw(benchmark::State& state, const TempDir& dir, RawDb* raw) {
  if (!dir.ok()) {
    Fail(state, "mkdtemp", "failed");
    return false;
  }
  rocksdb::Status s = raw->Open(dir.Sub("raw"));
  if (!s.ok()) {
    Fail(state, "rocksdb open", s.ToString());
    return false;
  }
  return true;
}

// Checks after the timed loop that the raw counter holds `expected`.
void CheckRawTotal(benchmark::State& state, RawDb* raw, uint64_t counter_id,
                   int64_t expected) {
  int64_t sum = 0;
  rocksdb::Status s = raw->SumShards(counter_id, &sum);
  if (!s.ok()) {
    Fail(state, "raw sum", s.ToString());
  } else if (sum != expected) {
    Fail(state, "raw sum",
         std::to_string(sum) + " != expected " + std::to_string(expected));
  }
}

// The raw idempotent-increment recipe: one mutex stripe per hash of the
// event id around "Get the marker; if absent, Put marker + Merge operand in
// one WriteBatch". What the engine does, minus everything that is not
// RocksDB or the lock.
class RawOnce {
 public:
  enum class Outcome { kApplied, kDuplicate, kConflict };

  explicit RawOnce(RawDb* raw)
      : raw_(raw),
        stripe_count_(Options().event_lock_stripes),
        stripes_(new std::mutex[stripe_count_]) {
    for (uint32_t shard = 0; shard < kShards; ++shard) {
      engine::EncodeShardKey(kCounterId, shard, shard_keys_[shard]);
    }
  }

  // Not inlined, so that a profile (callgrind --toggle-collect) can count
  // its instructions per call as it counts DbImpl::IncrementOnce's.
  [[gnu::noinline]] rocksdb::Status IncrementOnce(std::string_view event_id,
                                                  int64_t delta,
                                                  Outcome* outcome) {
    const uint64_t h = engine::StableHash(event_id);
    std::lock_guard<std::mutex> lock(stripes_[h % stripe_count_]);
    engine::EncodeMarkerKey(kCounterId, event_id, &marker_key_);
    rocksdb::PinnableSlice found;
    rocksdb::Status s = raw_->db()->Get(rocksdb::ReadOptions(), raw_->events(),
                                        marker_key_, &found);
    if (s.ok()) {
      int64_t prior = 0;
      if (found.size() < engine::kValueBytes ||
          !engine::DecodeInt64(
              std::string_view(found.data(), engine::kValueBytes), &prior)) {
        return rocksdb::Status::Corruption("bad raw marker");
      }
      *outcome = prior == delta ? Outcome::kDuplicate : Outcome::kConflict;
      return rocksdb::Status::OK();
    }
    if (!s.IsNotFound()) return s;

    const uint32_t shard = static_cast<uint32_t>(h % kShards);
    const int64_t now_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::system_clock::now().time_since_epoch())
            .count();
    char marker[kRawMarkerBytes] = {};
    engine::EncodeInt64(delta, marker);
    engine::EncodeInt64(now_ms, marker + 8);
    engine::EncodeFixed64BE(kCounterId, marker + 16);
    engine::EncodeFixed32BE(shard, marker + 24);
    char operand[engine::kValueBytes];
    engine::EncodeInt64(delta, operand);

    batch_.Clear();
    s = batch_.Put(raw_->events(), marker_key_,
                   rocksdb::Slice(marker, sizeof(marker)));
    if (!s.ok()) return s;
    s = batch_.Merge(raw_->shards(),
                     rocksdb::Slice(shard_keys_[shard], engine::kShardKeyBytes),
                     rocksdb::Slice(operand, sizeof(operand)));
    if (!s.ok()) return s;
    s = raw_->db()->Write(raw_->write_options(), &batch_);
    if (s.ok()) *outcome = Outcome::kApplied;
    return s;
  }

  static constexpr uint64_t kCounterId = engine::kFirstCounterId;

 private:
  RawDb* raw_;
  const uint32_t stripe_count_;
  std::unique_ptr<std::mutex[]> stripes_;
  char shard_keys_[kShards][engine::kShardKeyBytes];
  // Scratch reused across calls (one thread per RawOnce in these
  // benchmarks), as the engine reuses its thread-local scratch.
  std::string marker_key_;
  rocksdb::WriteBatch batch_;
};

// ---- event id streams (bench_util.h's DeliveryIds, built before the timed
// loop: a caller has its ids before it calls) ----

// n distinct ids, "evt-0", "evt-1", ...
std::vector<std::string> UniqueIds(size_t n) {
  size_t distinct = 0;
  return DeliveryIds(n, 0, &distinct);
}

// n deliveries in which each id comes twice, the copies shuffled (fixed
// seed) within windows of kDupWindow deliveries. About half are duplicates;
// *distinct gets the number of different ids among the n.
std::vector<std::string> DupIds(size_t n, size_t* distinct) {
  return DeliveryIds(n, 50, distinct, kDupWindow);
}

// ---- benchmarks ----

// Raw RocksDB: one WriteBatch with one Merge into a random shard per write.
void BM_RawMerge(benchmark::State& state) {
  TempDir dir;
  RawDb raw;
  if (!OpenRaw(state, dir, &raw)) return;
  constexpr uint64_t kCounterId = engine::kFirstCounterId;
  char keys[kShards][engine::kShardKeyBytes];
  for (uint32_t shard = 0; shard < kShards; ++shard) {
    engine::EncodeShardKey(kCounterId, shard, keys[shard]);
  }
  char operand[engine::kValueBytes];
  engine::EncodeInt64(1, operand);
  Rng rng(1);
  // Reused like the engine's thread-local batch: no allocation once warm.
  rocksdb::WriteBatch batch;

  for (auto _ : state) {
    batch.Clear();
    rocksdb::Status s = batch.Merge(
        raw.shards(),
        rocksdb::Slice(keys[rng.Uniform(kShards)], engine::kShardKeyBytes),
        rocksdb::Slice(operand, sizeof(operand)));
    if (s.ok()) s = raw.db()->Write(raw.write_options(), &batch);
    if (!s.ok()) {
      Fail(state, "raw merge", s.ToString());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  if (!state.error_occurred()) {
    CheckRawTotal(state, &raw, kCounterId, state.iterations());
  }
}

// tally: Db::Increment on a 10-shard counter, random shard.
void BM_Increment(benchmark::State& state) {
  TempDir dir;
  std::unique_ptr<Db> db = OpenTally(state, dir);
  if (db == nullptr || !CreateCounters(state, db.get(), {"c"}, kShards)) {
    return;
  }

  for (auto _ : state) {
    Result<IncrementResult> r = db->Increment("c", 1);
    if (!r.ok()) {
      Fail(state, "increment", r.status().ToString());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  if (!state.error_occurred()) {
    CheckTally(state, db.get(), {"c"}, state.iterations(), 0);
  }
}

// Raw RocksDB: the marker recipe over the given delivery stream.
void RunRawOnce(benchmark::State& state, const std::vector<std::string>& ids,
                size_t distinct) {
  TempDir dir;
  RawDb raw;
  if (!OpenRaw(state, dir, &raw)) return;
  RawOnce once(&raw);
  size_t next = 0;
  uint64_t duplicates = 0;

  for (auto _ : state) {
    RawOnce::Outcome outcome = RawOnce::Outcome::kApplied;
    rocksdb::Status s = once.IncrementOnce(ids[next++], 1, &outcome);
    if (!s.ok()) {
      Fail(state, "raw once", s.ToString());
      break;
    }
    duplicates += outcome == RawOnce::Outcome::kDuplicate ? 1 : 0;
  }
  state.SetItemsProcessed(state.iterations());
  if (state.error_occurred()) return;
  if (duplicates != static_cast<uint64_t>(state.iterations()) - distinct) {
    Fail(state, "raw once", "unexpected duplicate count");
    return;
  }
  CheckRawTotal(state, &raw, RawOnce::kCounterId,
                static_cast<int64_t>(distinct));
}

// tally: Db::IncrementOnce over the given delivery stream.
void RunIncrementOnce(benchmark::State& state,
                      const std::vector<std::string>& ids, size_t distinct) {
  TempDir dir;
  std::unique_ptr<Db> db = OpenTally(state, dir);
  if (db == nullptr || !CreateCounters(state, db.get(), {"c"}, kShards)) {
    return;
  }
  size_t next = 0;

  for (auto _ : state) {
    Result<IncrementResult> r = db->IncrementOnce("c", ids[next++], 1);
    if (!r.ok()) {
      Fail(state, "increment once", r.status().ToString());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  if (!state.error_occurred()) {
    CheckTally(state, db.get(), {"c"}, static_cast<int64_t>(distinct),
               static_cast<uint64_t>(state.iterations()) - distinct);
  }
}

void BM_RawOnce(benchmark::State& state) {
  const std::vector<std::string> ids =
      UniqueIds(static_cast<size_t>(state.max_iterations));
  RunRawOnce(state, ids, ids.size());
}

void BM_IncrementOnce(benchmark::State& state) {
  const std::vector<std::string> ids =
      UniqueIds(static_cast<size_t>(state.max_iterations));
  RunIncrementOnce(state, ids, ids.size());
}

void BM_RawOnce_Dup50(benchmark::State& state) {
  size_t distinct = 0;
  const std::vector<std::string> ids =
      DupIds(static_cast<size_t>(state.max_iterations), &distinct);
  RunRawOnce(state, ids, distinct);
}

void BM_IncrementOnce_Dup50(benchmark::State& state) {
  size_t distinct = 0;
  const std::vector<std::string> ids =
      DupIds(static_cast<size_t>(state.max_iterations), &distinct);
  RunIncrementOnce(state, ids, distinct);
}

// Raw RocksDB: N merges into random shards of kBatchCounters counters in one
// WriteBatch per write. Reference for BM_IncrementBatch.
void BM_RawMergeBatch(benchmark::State& state) {
  const int64_t n = state.range(0);
  TempDir dir;
  RawDb raw;
  if (!OpenRaw(state, dir, &raw)) return;
  char keys[kBatchCounters][kShards][engine::kShardKeyBytes];
  for (int c = 0; c < kBatchCounters; ++c) {
    for (uint32_t shard = 0; shard < kShards; ++shard) {
      engine::EncodeShardKey(engine::kFirstCounterId + c, shard,
                             keys[c][shard]);
    }
  }
  char operand[engine::kValueBytes];
  engine::EncodeInt64(1, operand);
  Rng rng(1);
  rocksdb::WriteBatch batch;

  for (auto _ : state) {
    batch.Clear();
    rocksdb::Status s;
    for (int64_t i = 0; i < n && s.ok(); ++i) {
      s = batch.Merge(
          raw.shards(),
          rocksdb::Slice(keys[i % kBatchCounters][rng.Uniform(kShards)],
                         engine::kShardKeyBytes),
          rocksdb::Slice(operand, sizeof(operand)));
    }
    if (s.ok()) s = raw.db()->Write(raw.write_options(), &batch);
    if (!s.ok()) {
      Fail(state, "raw merge batch", s.ToString());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * n);
  if (state.error_occurred()) return;
  int64_t total = 0;
  for (int c = 0; c < kBatchCounters; ++c) {
    int64_t sum = 0;
    rocksdb::Status s = raw.SumShards(engine::kFirstCounterId + c, &sum);
    if (!s.ok()) {
      Fail(state, "raw sum", s.ToString());
      return;
    }
    total += sum;
  }
  if (total != static_cast<int64_t>(state.iterations()) * n) {
    Fail(state, "raw merge batch", "wrong total");
  }
}

// tally: Apply of a Batch of N plain increments over kBatchCounters counters.
// The batch is built inside the loop: building it is the caller's cost.
void BM_IncrementBatch(benchmark::State& state) {
  const int64_t n = state.range(0);
  TempDir dir;
  std::unique_ptr<Db> db = OpenTally(state, dir);
  const std::vector<std::string> names(std::begin(kBatchCounterNames),
                                       std::end(kBatchCounterNames));
  if (db == nullptr || !CreateCounters(state, db.get(), names, kShards)) {
    return;
  }
  Batch batch;
  std::vector<IncrementResult> results;

  for (auto _ : state) {
    batch.Clear();
    for (int64_t i = 0; i < n; ++i) {
      batch.Add(kBatchCounterNames[i % kBatchCounters], 1);
    }
    Status s = db->Apply(batch, &results);
    if (!s.ok()) {
      Fail(state, "apply", s.ToString());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * n);
  if (!state.error_occurred()) {
    CheckTally(state, db.get(), names, state.iterations() * n, 0);
  }
}

// Raw RocksDB: the batch form of the marker recipe, as RocksDB's
// documentation would lead a user to write it: under one writer mutex (a
// batch holds many event ids; one lock is the simple correct choice for
// check-then-write), one MultiGet of the N marker keys in the `events` CF,
// then one WriteBatch with a Put(marker, 40-byte value) and a Merge into the
// shard (hash of the id) for every marker not found. Unique ids, one
// 10-shard counter. Reference for BM_IncrementOnceBatch/N (issue 14).
void BM_RawOnceBatch(benchmark::State& state) {
  const auto n = static_cast<size_t>(state.range(0));
  const std::vector<std::string> ids =
      UniqueIds(static_cast<size_t>(state.max_iterations) * n);
  TempDir dir;
  RawDb raw;
  if (!OpenRaw(state, dir, &raw)) return;
  constexpr uint64_t kCounterId = engine::kFirstCounterId;
  char shard_keys[kShards][engine::kShardKeyBytes];
  for (uint32_t shard = 0; shard < kShards; ++shard) {
    engine::EncodeShardKey(kCounterId, shard, shard_keys[shard]);
  }
  std::mutex writer;
  // Scratch reused across batches, as a careful user would.
  std::vector<std::string> keys(n);
  std::vector<rocksdb::Slice> key_slices(n);
  std::vector<rocksdb::PinnableSlice> values(n);
  std::vector<rocksdb::Status> statuses(n);
  rocksdb::WriteBatch batch;
  size_t next = 0;
  int64_t applied = 0;

  for (auto _ : state) {
    std::lock_guard<std::mutex> lock(writer);
    const size_t first = next;
    for (size_t i = 0; i < n; ++i) {
      engine::EncodeMarkerKey(kCounterId, ids[next++], &keys[i]);
      key_slices[i] = rocksdb::Slice(keys[i]);
      values[i].Reset();
    }
    raw.db()->MultiGet(rocksdb::ReadOptions(), raw.events(), n,
                       key_slices.data(), values.data(), statuses.data());
    const int64_t now_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::system_clock::now().time_since_epoch())
            .count();
    batch.Clear();
    rocksdb::Status s;
    for (size_t i = 0; i < n && s.ok(); ++i) {
      if (statuses[i].ok()) continue;  // a duplicate: nothing to write
      if (!statuses[i].IsNotFound()) {
        s = statuses[i];
        break;
      }
      const uint64_t h = engine::StableHash(ids[first + i]);
      const auto shard = static_cast<uint32_t>(h % kShards);
      char marker[kRawMarkerBytes] = {};
      engine::EncodeInt64(1, marker);
      engine::EncodeInt64(now_ms, marker + 8);
      engine::EncodeFixed64BE(kCounterId, marker + 16);
      engine::EncodeFixed32BE(shard, marker + 24);
      char operand[engine::kValueBytes];
      engine::EncodeInt64(1, operand);
      s = batch.Put(raw.events(), key_slices[i],
                    rocksdb::Slice(marker, sizeof(marker)));
      if (s.ok()) {
        s = batch.Merge(
            raw.shards(),
            rocksdb::Slice(shard_keys[shard], engine::kShardKeyBytes),
            rocksdb::Slice(operand, sizeof(operand)));
      }
      ++applied;
    }
    if (s.ok()) s = raw.db()->Write(raw.write_options(), &batch);
    if (!s.ok()) {
      Fail(state, "raw once batch", s.ToString());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
  if (state.error_occurred()) return;
  if (applied != state.iterations() * static_cast<int64_t>(n)) {
    Fail(state, "raw once batch", "unexpected duplicates");
    return;
  }
  CheckRawTotal(state, &raw, kCounterId, applied);
}

// tally: Apply of a Batch of N once-increments with unique ids, built inside
// the loop (the caller's cost) from ids the caller already has.
void BM_IncrementOnceBatch(benchmark::State& state) {
  const int64_t n = state.range(0);
  const std::vector<std::string> ids =
      UniqueIds(static_cast<size_t>(state.max_iterations * n));
  TempDir dir;
  std::unique_ptr<Db> db = OpenTally(state, dir);
  if (db == nullptr || !CreateCounters(state, db.get(), {"c"}, kShards)) {
    return;
  }
  Batch batch;
  std::vector<IncrementResult> results;
  size_t next = 0;

  for (auto _ : state) {
    batch.Clear();
    for (int64_t i = 0; i < n; ++i) batch.AddOnce("c", ids[next++], 1);
    Status s = db->Apply(batch, &results);
    if (!s.ok()) {
      Fail(state, "apply once", s.ToString());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * n);
  if (!state.error_occurred()) {
    CheckTally(state, db.get(), {"c"}, state.iterations() * n, 0);
  }
}

// Pairs are registered next to each other so a reader of the console output
// sees baseline and engine together.
// ---- the pending-operand bound (Options::max_pending_operands) ----
//
// RocksDB's max_successive_merges walks the key's pending operands before
// every merge, and folds them on the write path every Nth one; without it a
// read of a hot shard folds every operand in the memtable. These two show
// both sides of that trade on one hot single-shard counter.

Options HotOptions(int64_t pending) {
  Options o;
  o.max_pending_operands = static_cast<size_t>(pending);
  o.write_buffer_bytes = size_t{256} << 20;  // keep every operand in memory
  return o;
}

// Args: pending-operand bound, shards of the counter.
void BM_HotIncrement(benchmark::State& state) {
  TempDir dir;
  auto db = OpenTally(state, dir, HotOptions(state.range(0)));
  if (db == nullptr) return;
  const auto shards = static_cast<uint32_t>(state.range(1));
  if (!db->CreateCounter("hot", CounterSpec{shards}).ok()) {
    Fail(state, "create", "hot");
    return;
  }
  int64_t n = 0;
  for (auto _ : state) {
    Result<IncrementResult> r = db->Increment("hot", 1);
    if (!r.ok()) {
      Fail(state, "increment", r.status().ToString());
      break;
    }
    ++n;
  }
  state.SetItemsProcessed(n);
  Result<int64_t> total = db->ReadExact("hot");
  if (!total.ok() || *total != n) Fail(state, "hot total", "mismatch");
}

// The latency of one exact read of a hot counter right after a burst of
// 20,000 increments still in the memtable.
void BM_HotReadAfterBurst(benchmark::State& state) {
  constexpr int kBurst = 20000;
  TempDir dir;
  auto db = OpenTally(state, dir, HotOptions(state.range(0)));
  if (db == nullptr) return;
  if (!db->CreateCounter("hot", CounterSpec{1}).ok()) {
    Fail(state, "create", "hot");
    return;
  }
  for (int i = 0; i < kBurst; ++i) {
    if (!db->Increment("hot", 1).ok()) {
      Fail(state, "burst", "increment failed");
      return;
    }
  }
  for (auto _ : state) {
    Result<int64_t> r = db->ReadExact("hot");
    if (!r.ok() || *r != kBurst) {
      Fail(state, "read", r.ok() ? "wrong total" : r.status().ToString());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}

// Exact reads, issue 5's bounded read cost. Args: shards of the counter;
// 0 = a cold counter (written, then compacted; nobody writes it), 1 = the
// same read while a second thread increments that counter as fast as it
// can. Items are reads; read latency = 1 / items_per_second.
void BM_ReadExact(benchmark::State& state) {
  const auto shards = static_cast<uint32_t>(state.range(0));
  const bool hot = state.range(1) == 1;
  TempDir dir;
  auto db = OpenTally(state, dir);
  if (db == nullptr) return;
  if (!db->CreateCounter("c", CounterSpec{shards}).ok()) {
    Fail(state, "create", "c");
    return;
  }
  for (int i = 0; i < 10000; ++i) {
    if (!db->Increment("c", 1).ok()) {
      Fail(state, "fill", "increment");
      return;
    }
  }
  if (!tally::Compact(*db).ok()) {
    Fail(state, "compact", "c");
    return;
  }
  std::atomic<bool> stop{false};
  std::atomic<int64_t> written{0};
  std::thread writer;
  if (hot) {
    writer = std::thread([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        if (db->Increment("c", 1).ok()) written.fetch_add(1);
      }
    });
  }
  for (auto _ : state) {
    Result<int64_t> r = db->ReadExact("c");
    if (!r.ok() || *r < 10000) {
      Fail(state, "read", r.ok() ? "wrong total" : r.status().ToString());
      break;
    }
  }
  stop = true;
  if (writer.joinable()) writer.join();
  state.SetItemsProcessed(state.iterations());
  state.counters["writes_during"] = static_cast<double>(written.load());
}

// ReadCached during a write burst with the roll-up worker on (interval
// 100 ms): one Get per read. Reports the largest lag_ms seen, against the
// interval (issue 5: under 2 intervals).
void BM_ReadCachedDuringBurst(benchmark::State& state) {
  constexpr uint32_t kIntervalMs = 100;
  TempDir dir;
  Options o;
  o.rollup_interval_ms = kIntervalMs;
  auto db = OpenTally(state, dir, o);
  if (db == nullptr) return;
  if (!db->CreateCounter("c", CounterSpec{10}).ok()) {
    Fail(state, "create", "c");
    return;
  }
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      db->Increment("c", 1).status().IgnoreError();
    }
  });
  int64_t max_lag = 0;
  for (auto _ : state) {
    Result<CachedValue> r = db->ReadCached("c");
    if (!r.ok()) {
      Fail(state, "read cached", r.status().ToString());
      break;
    }
    max_lag = std::max(max_lag, r->lag_ms);
  }
  stop = true;
  writer.join();
  state.SetItemsProcessed(state.iterations());
  state.counters["max_lag_ms"] = static_cast<double>(max_lag);
  state.counters["interval_ms"] = kIntervalMs;
}

BENCHMARK(BM_ReadExact)
    ->ArgsProduct({{1, 10, 100, 1000}, {0, 1}})
    ->UseRealTime();
BENCHMARK(BM_ReadCachedDuringBurst)->UseRealTime();

BENCHMARK(BM_HotIncrement)->ArgsProduct({{0, 16, 64}, {1, 10}})->UseRealTime();
BENCHMARK(BM_HotReadAfterBurst)->Arg(0)->Arg(8)->Arg(16)->Arg(64);

BENCHMARK(BM_RawMerge)->UseRealTime();
BENCHMARK(BM_Increment)->UseRealTime();
BENCHMARK(BM_RawOnce)->UseRealTime();
BENCHMARK(BM_IncrementOnce)->UseRealTime();
BENCHMARK(BM_RawOnce_Dup50)->UseRealTime();
BENCHMARK(BM_IncrementOnce_Dup50)->UseRealTime();
BENCHMARK(BM_RawMergeBatch)->Arg(1000)->UseRealTime();
BENCHMARK(BM_IncrementBatch)->Arg(100)->Arg(1000)->UseRealTime();
BENCHMARK(BM_RawOnceBatch)->Arg(1000)->UseRealTime();
BENCHMARK(BM_IncrementOnceBatch)->Arg(100)->Arg(1000)->UseRealTime();

}  // namespace
}  // namespace tally::bench

int main(int argc, char** argv) {
  return tally::bench::RunBenchmarks(
      argc, argv,
      {{"tally_version", TALLY_VERSION_STRING},
       {"rocksdb_version", rocksdb::GetRocksVersionAsString()}});
}
