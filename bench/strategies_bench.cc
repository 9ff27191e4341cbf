// strategies_bench: ways to increment the same counter keys in raw
// RocksDB, configured as the engine configures it (engine::MakeRocksOptions:
// column families, Int64Add merge operator, max_successive_merges, block
// cache), so that the figures say what the merge operator buys tally and
// nothing else differs.
//
// Strategies (every increment is one operation in the batch; none of them
// folds a batch's increments per key, so a batch of N is N operations):
//   merge        one Merge(+1) per increment into a WriteBatch, one
//                DB::Write, with tally's DEFAULT bound on pending operands
//                (Options::max_pending_operands = 16, RocksDB
//                max_successive_merges = 16): before every Merge RocksDB
//                counts the key's pending operands in the memtable, and
//                every 16th Merge of a key reads and folds them.
//   merge_blind  the same with max_pending_operands = 0
//                (max_successive_merges = 0): a true blind write, never a
//                read on the write path; reads of a hot key then fold every
//                operand still in the memtable.
//   mutex_rmw    striped mutexes (1024, by the key's stable hash; a batch
//                locks its stripes in ascending order), then per increment a
//                read (WriteBatchWithIndex::GetFromBatchAndDB, so that a key
//                read twice in a batch sees the first write) and a Put; one
//                DB::Write.
//   txn_rmw      TransactionDB (pessimistic, default options): per increment
//                GetForUpdate + Put in one transaction, keys sorted so that
//                two threads take locks in the same order; Commit. A commit
//                refused with Busy/TimedOut is rolled back and retried
//                (counted as `retries`).
// Layouts (keys of the engine's shard key coding):
//   hot        one key.
//   shards10   a random one of 10 shard keys of one counter.
//   shards100  a random one of 100.
//   cold1m     a random one of 1,000,000 counters (one shard each), all
//              written and compacted into SST files before the run. It
//              simulates a device whose data does not fit in RAM: every
//              strategy opens it with use_direct_reads and
//              use_direct_io_for_flush_and_compaction (O_DIRECT: SST reads
//              bypass the OS page cache and go to the disk) and a 1 MiB
//              block cache, much smaller than the data (reported as data_mb,
//              cache_mb and direct_io). So a read-modify-write reads an SST
//              block from the disk for most increments, while a merge is a
//              blind write. Where the filesystem refuses O_DIRECT, the
//              layout falls back to buffered reads, says so on stderr and
//              reports direct_io = 0.
// Args: writes per WriteBatch (1, 10, 100, 1000) and threads (1, 2).
//
// Each benchmark runs a fixed number of increments (Iterations, scaled by
// $TALLY_BENCH_SCALE), opens its own database once, and after the loop
// checks that the keys sum to what was written (the cold layout: to what was
// written plus the 1,000,000 preloaded). items_per_second counts increments;
// p50_us/p99_us/max_us are per WriteBatch (per commit) latencies.

#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <rocksdb/db.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/utilities/transaction.h>
#include <rocksdb/utilities/transaction_db.h>
#include <rocksdb/utilities/write_batch_with_index.h>
#include <rocksdb/version.h>
#include <rocksdb/write_batch.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "bench/bench_util.h"
#include "bench/raw_util.h"
#include "engine/coding.h"
#include "engine/format.h"
#include "engine/rules.h"
#include "engine/rocksdb_options.h"
#include "tally/tally.h"

namespace tally::bench {
namespace {

enum class Strategy { kMerge, kMergeBlind, kMutexRmw, kTxnRmw };
enum class Layout { kHot, kShards10, kShards100, kCold };

constexpr uint32_t kColdCounters = 1000000;
constexpr size_t kColdCacheBytes = size_t{1} << 20;
constexpr uint32_t kStripes = 1024;
constexpr uint64_t kCounterId = engine::kFirstCounterId;

using Key = std::array<char, engine::kShardKeyBytes>;

// Names in the order of the enums.
constexpr const char* kStrategyNames[] = {"merge", "merge_blind", "mutex_rmw",
                                          "txn_rmw"};
constexpr const char* kLayoutNames[] = {"hot", "shards10", "shards100",
                                        "cold1m"};

const char* StrategyName(Strategy s) {
  return kStrategyNames[static_cast<int>(s)];
}
const char* LayoutName(Layout l) { return kLayoutNames[static_cast<int>(l)]; }

uint32_t LayoutShards(Layout l) {
  switch (l) {
    case Layout::kHot:
      return 1;
    case Layout::kShards10:
      return 10;
    case Layout::kShards100:
      return 100;
    case Layout::kCold:
      return 1;
  }
  return 1;
}

void PickKey(Layout l, Rng* rng, Key* key) {
  if (l == Layout::kCold) {
    engine::EncodeShardKey(kCounterId + rng->Uniform(kColdCounters), 0,
                           key->data());
  } else {
    engine::EncodeShardKey(kCounterId, rng->Uniform(LayoutShards(l)),
                           key->data());
  }
}

rocksdb::Slice AsSlice(const Key& k) { return {k.data(), k.size()}; }

bool IsMerge(Strategy s) {
  return s == Strategy::kMerge || s == Strategy::kMergeBlind;
}

// Whether O_DIRECT reads and writes work in `dir` (tmpfs, for one, refuses
// them with EINVAL): a 4 KiB aligned write, then a read of it.
bool DirectIoWorks(const std::string& dir) {
  const std::string path = dir + "/direct-io-probe";
  const int fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_DIRECT, 0600);
  if (fd < 0) return false;
  void* buf = nullptr;
  bool ok = ::posix_memalign(&buf, 4096, 4096) == 0;
  if (ok) {
    std::memset(buf, 'x', 4096);
    ok =
        ::pwrite(fd, buf, 4096, 0) == 4096 && ::pread(fd, buf, 4096, 0) == 4096;
  }
  std::free(buf);
  ::close(fd);
  ::unlink(path.c_str());
  return ok;
}

// The engine's RocksDB options for this strategy and layout: merge_blind
// turns the pending-operand bound off; the cold layout gets its small block
// cache and, where it works, direct I/O (the same for every strategy).
engine::RocksOptions MakeOptions(Strategy strategy, Layout layout,
                                 bool direct_io) {
  Options o;
  if (strategy == Strategy::kMergeBlind) o.max_pending_operands = 0;
  if (layout == Layout::kCold) o.block_cache_bytes = kColdCacheBytes;
  engine::RocksOptions ro = engine::MakeRocksOptions(o);
  if (layout == Layout::kCold && direct_io) {
    ro.db.use_direct_reads = true;
    ro.db.use_direct_io_for_flush_and_compaction = true;
  }
  return ro;
}

// The cold layout's data, written and compacted once per process; each
// cold benchmark opens a checkpoint of it (hard links), so it starts from
// the same SST files without paying the load again.
class ColdTemplate {
 public:
  rocksdb::Status Build() {
    if (db_ != nullptr) return rocksdb::Status::OK();
    if (!dir_.ok()) return rocksdb::Status::IOError("mkdtemp");
    Stopwatch load;
    direct_io_ = DirectIoWorks(dir_.path());
    if (!direct_io_) {
      std::fprintf(stderr,
                   "strategies_bench: O_DIRECT does not work in %s (the "
                   "filesystem refused it): the cold1m layout falls back to "
                   "buffered reads, so its read-modify-writes read SST blocks "
                   "from the OS page cache, not the disk (direct_io = 0)\n",
                   dir_.path().c_str());
    }
    ro_ = MakeOptions(Strategy::kMerge, Layout::kCold, direct_io_);
    rocksdb::DB* db = nullptr;
    rocksdb::Status s =
        rocksdb::DB::Open(ro_.db, dir_.Sub("db"), ro_.families, &handles_, &db);
    if (!s.ok()) return s;
    db_.reset(db);
    char value[engine::kValueBytes];
    engine::EncodeInt64(1, value);
    rocksdb::WriteBatch batch;
    for (uint32_t i = 0; i < kColdCounters && s.ok(); ++i) {
      Key key;
      engine::EncodeShardKey(kCounterId + i, 0, key.data());
      s = batch.Put(handles_[engine::kShards], AsSlice(key),
                    rocksdb::Slice(value, sizeof(value)));
      if (s.ok() && batch.Count() == 10000) {
        s = db_->Write(rocksdb::WriteOptions(), &batch);
        batch.Clear();
      }
    }
    if (s.ok() && batch.Count() > 0) {
      s = db_->Write(rocksdb::WriteOptions(), &batch);
    }
    if (s.ok()) {
      s = db_->CompactRange(rocksdb::CompactRangeOptions(),
                            handles_[engine::kShards], nullptr, nullptr);
    }
    if (s.ok()) {
      uint64_t bytes = 0;
      db_->GetIntProperty(handles_[engine::kShards],
                          "rocksdb.live-sst-files-size", &bytes);
      data_bytes_ = bytes;
    }
    load_seconds_ = static_cast<double>(load.Lap()) / 1e9;
    return s;
  }

  rocksdb::Status CheckpointTo(const std::string& path) {
    rocksdb::Checkpoint* cp = nullptr;
    rocksdb::Status s = rocksdb::Checkpoint::Create(db_.get(), &cp);
    if (!s.ok()) return s;
    std::unique_ptr<rocksdb::Checkpoint> owned(cp);
    return owned->CreateCheckpoint(path);
  }

  uint64_t data_bytes() const { return data_bytes_; }
  bool direct_io() const { return direct_io_; }
  double load_seconds() const { return load_seconds_; }

  ~ColdTemplate() { CloseRocks(db_.get(), handles_); }

 private:
  TempDir dir_;
  engine::RocksOptions ro_;
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  uint64_t data_bytes_ = 0;
  bool direct_io_ = false;
  double load_seconds_ = 0;
};

// Built on first use; main() destroys it (and its directory) after the run.
std::unique_ptr<ColdTemplate> g_cold;

ColdTemplate* Cold() {
  if (g_cold == nullptr) g_cold = std::make_unique<ColdTemplate>();
  return g_cold.get();
}

// One benchmark's database and shared state, set up by thread 0 before the
// loop (google-benchmark starts every thread's loop after a barrier) and
// torn down by thread 0 after it.
struct Run {
  TempDir dir;
  engine::RocksOptions ro;
  std::unique_ptr<rocksdb::DB> db;  // a plain DB or the TransactionDB
  rocksdb::TransactionDB* txdb = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  std::unique_ptr<std::mutex[]> stripes{new std::mutex[kStripes]};
  LatencyLog latency;
  std::atomic<uint64_t> retries{0};

  rocksdb::ColumnFamilyHandle* cf() { return handles[engine::kShards]; }

  ~Run() { CloseRocks(db.get(), handles); }
};

Run* g_run = nullptr;

rocksdb::Status OpenRun(Strategy strategy, Layout layout, Run* run) {
  if (!run->dir.ok()) return rocksdb::Status::IOError("mkdtemp");
  const std::string path = run->dir.Sub("db");
  if (layout == Layout::kCold) {
    rocksdb::Status s = Cold()->Build();
    if (s.ok()) s = Cold()->CheckpointTo(path);
    if (!s.ok()) return s;
  }
  run->ro = MakeOptions(strategy, layout,
                        layout == Layout::kCold && Cold()->direct_io());
  run->ro.db.create_if_missing = true;
  if (strategy == Strategy::kTxnRmw) {
    rocksdb::TransactionDB* txdb = nullptr;
    rocksdb::Status s = rocksdb::TransactionDB::Open(
        run->ro.db, rocksdb::TransactionDBOptions(), path, run->ro.families,
        &run->handles, &txdb);
    run->db.reset(txdb);
    run->txdb = txdb;
    return s;
  }
  rocksdb::DB* db = nullptr;
  rocksdb::Status s =
      rocksdb::DB::Open(run->ro.db, path, run->ro.families, &run->handles, &db);
  run->db.reset(db);
  return s;
}

// Sum of the layout's keys (cold: of every key, less the preload).
rocksdb::Status SumLayout(Run* run, Layout layout, int64_t* sum) {
  if (layout != Layout::kCold) {
    return SumShards(run->db.get(), run->cf(), kCounterId, LayoutShards(layout),
                     sum);
  }
  *sum = -static_cast<int64_t>(kColdCounters);
  std::unique_ptr<rocksdb::Iterator> it(
      run->db->NewIterator(rocksdb::ReadOptions(), run->cf()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    rocksdb::Status s = AddValue(it->value(), sum);
    if (!s.ok()) return s;
  }
  return it->status();
}

// Per-thread scratch of one strategy, reused across batches.
struct Worker {
  explicit Worker(int thread)
      : rng(0x9e3779b97f4a7c15ULL * (thread + 1)),
        // overwrite_key, as a Transaction's own index: a key written many
        // times in one batch keeps one index entry (all its Puts stay in
        // the batch), so a read of it does not walk every earlier write.
        wbwi(rocksdb::BytewiseComparator(), 0, /*overwrite_key=*/true) {
    engine::EncodeInt64(1, one);
  }
  Rng rng;
  std::vector<Key> keys;
  char one[engine::kValueBytes];
  rocksdb::WriteBatch batch;
  rocksdb::WriteBatchWithIndex wbwi;
  std::vector<uint32_t> stripes;
};

rocksdb::Status AddOne(const rocksdb::PinnableSlice& old, bool found,
                       char out[engine::kValueBytes]) {
  int64_t v = 0;
  if (found &&
      !engine::DecodeInt64(std::string_view(old.data(), old.size()), &v)) {
    return rocksdb::Status::Corruption("bad value");
  }
  engine::EncodeInt64(v + 1, out);
  return rocksdb::Status::OK();
}

rocksdb::Status WriteMerge(Run* run, Worker* w) {
  w->batch.Clear();
  rocksdb::Status s;
  for (const Key& k : w->keys) {
    s = w->batch.Merge(run->cf(), AsSlice(k), rocksdb::Slice(w->one, 8));
    if (!s.ok()) return s;
  }
  return run->db->Write(rocksdb::WriteOptions(), &w->batch);
}

rocksdb::Status WriteMutexRmw(Run* run, Worker* w) {
  w->stripes.clear();
  for (const Key& k : w->keys) {
    w->stripes.push_back(static_cast<uint32_t>(
        engine::StableHash(std::string_view(k.data(), k.size())) % kStripes));
  }
  std::sort(w->stripes.begin(), w->stripes.end());
  w->stripes.erase(std::unique(w->stripes.begin(), w->stripes.end()),
                   w->stripes.end());
  for (uint32_t i : w->stripes) run->stripes[i].lock();
  w->wbwi.Clear();
  rocksdb::Status s;
  for (const Key& k : w->keys) {
    rocksdb::PinnableSlice old;
    s = w->wbwi.GetFromBatchAndDB(run->db.get(), rocksdb::ReadOptions(),
                                  run->cf(), AsSlice(k), &old);
    if (!s.ok() && !s.IsNotFound()) break;
    char value[engine::kValueBytes];
    s = AddOne(old, s.ok(), value);
    if (s.ok())
      s = w->wbwi.Put(run->cf(), AsSlice(k), rocksdb::Slice(value, 8));
    if (!s.ok()) break;
  }
  if (s.ok())
    s = run->db->Write(rocksdb::WriteOptions(), w->wbwi.GetWriteBatch());
  for (uint32_t i : w->stripes) run->stripes[i].unlock();
  return s;
}

rocksdb::Status WriteTxnRmw(Run* run, Worker* w) {
  std::sort(w->keys.begin(), w->keys.end());
  for (;;) {
    // A new transaction per batch: a reused one would outlive its thread's
    // loop, and thread 0 closes the TransactionDB right after the loops.
    std::unique_ptr<rocksdb::Transaction> txn(run->txdb->BeginTransaction(
        rocksdb::WriteOptions(), rocksdb::TransactionOptions()));
    rocksdb::Status s;
    for (const Key& k : w->keys) {
      rocksdb::PinnableSlice old;
      s = txn->GetForUpdate(rocksdb::ReadOptions(), run->cf(), AsSlice(k),
                            &old);
      if (!s.ok() && !s.IsNotFound()) break;
      char value[engine::kValueBytes];
      s = AddOne(old, s.ok(), value);
      if (s.ok()) s = txn->Put(run->cf(), AsSlice(k), rocksdb::Slice(value, 8));
      if (!s.ok()) break;
    }
    if (s.ok()) s = txn->Commit();
    if (s.IsBusy() || s.IsTimedOut() || s.IsTryAgain()) {
      txn->Rollback().PermitUncheckedError();
      run->retries.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    return s;
  }
}

void BM_Strategy(benchmark::State& state, Strategy strategy, Layout layout,
                 int batch) {
  if (state.thread_index() == 0) {
    g_run = new Run();
    g_run->latency.Reset(state.threads(),
                         static_cast<size_t>(state.max_iterations));
    rocksdb::Status s = OpenRun(strategy, layout, g_run);
    if (!s.ok()) {
      Fail(state, "open", s.ToString());
      delete g_run;
      g_run = nullptr;
    }
  }
  Worker w(state.thread_index());
  w.keys.resize(static_cast<size_t>(batch));
  for (auto _ : state) {
    Run* run = g_run;
    if (run == nullptr) {
      Fail(state, "setup", "failed in thread 0");
      break;
    }
    for (Key& k : w.keys) PickKey(layout, &w.rng, &k);
    Stopwatch sw;
    rocksdb::Status s = IsMerge(strategy) ? WriteMerge(run, &w)
                        : strategy == Strategy::kMutexRmw
                            ? WriteMutexRmw(run, &w)
                            : WriteTxnRmw(run, &w);
    run->latency.Record(state.thread_index(), sw.Lap());
    if (!s.ok()) {
      Fail(state, "write", s.ToString());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * batch);
  if (state.thread_index() != 0 || g_run == nullptr) return;
  // Every thread has left its loop (google-benchmark's stop barrier).
  Run* run = g_run;
  if (!state.error_occurred()) {
    int64_t sum = 0;
    rocksdb::Status s = SumLayout(run, layout, &sum);
    const int64_t expected =
        static_cast<int64_t>(state.threads()) * state.max_iterations * batch;
    if (!s.ok()) {
      Fail(state, "sum", s.ToString());
    } else if (sum != expected) {
      Fail(state, "check",
           "sum " + std::to_string(sum) + " != written " +
               std::to_string(expected));
    }
  }
  run->latency.Report(state);
  state.counters["retries"] = static_cast<double>(run->retries.load());
  if (IsMerge(strategy)) {
    state.counters["max_successive_merges"] = static_cast<double>(
        run->ro.families[engine::kShards].options.max_successive_merges);
  }
  if (layout == Layout::kCold) {
    state.counters["data_mb"] =
        static_cast<double>(Cold()->data_bytes()) / 1048576.0;
    state.counters["cache_mb"] =
        static_cast<double>(kColdCacheBytes) / 1048576.0;
    state.counters["direct_io"] = Cold()->direct_io() ? 1 : 0;
    state.counters["cold_load_s"] = Cold()->load_seconds();
  }
  g_run = nullptr;
  delete run;
}

// Increments per benchmark at scale 1, by writes per batch: enough for a
// few tenths of a second each (docs/benchmarks.md, Machine). The cold layout
// runs fewer (its read-modify-writes read the disk; docs/benchmarks.md,
// "Figures behind code choices"): 10,000 per benchmark, 20,000 (20 batches)
// at 1000 writes per batch.
int64_t BaseIncrements(Layout layout, int batch) {
  if (layout == Layout::kCold) return batch == 1000 ? 20000 : 10000;
  switch (batch) {
    case 1:
      return 20000;
    case 10:
      return 40000;
    case 100:
      return 60000;
    default:
      return 100000;
  }
}

void RegisterAll() {
  for (Layout layout :
       {Layout::kHot, Layout::kShards10, Layout::kShards100, Layout::kCold}) {
    for (Strategy strategy : {Strategy::kMerge, Strategy::kMergeBlind,
                              Strategy::kMutexRmw, Strategy::kTxnRmw}) {
      for (int batch : {1, 10, 100, 1000}) {
        for (int threads : {1, 2}) {
          const std::string name =
              std::string("strategy/") + StrategyName(strategy) + "/" +
              LayoutName(layout) + "/batch:" + std::to_string(batch);
          const int64_t per_thread = std::max<int64_t>(
              1, Scaled(BaseIncrements(layout, batch)) / batch / threads);
          Register(name, per_thread, BM_Strategy, strategy, layout, batch)
              ->Threads(threads);
        }
      }
    }
  }
}

}  // namespace

// Outside the anonymous namespace only so that main() can release it.
void ReleaseColdTemplate() { g_cold.reset(); }

}  // namespace tally::bench

int main(int argc, char** argv) {
  tally::bench::RegisterAll();
  const int rc = tally::bench::RunBenchmarks(
      argc, argv,
      {{"tally_version", TALLY_VERSION_STRING},
       {"rocksdb_version", rocksdb::GetRocksVersionAsString()}});
  tally::bench::ReleaseColdTemplate();
  return rc;
}
