// Maintenance: compaction, checkpoints and the pending-operand estimate.

#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/version.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <cstdlib>
#include <filesystem>

#include "engine/coding.h"
#include "engine/column_families.h"
#include "engine/counter_range.h"
#include "engine/db_impl.h"
#include "engine/rocksdb_options.h"
#include "engine/stats_file.h"
#include "engine/rules.h"
#include "util/rocks_status.h"

namespace tally::engine {

Result<uint64_t> DbImpl::PendingOperands(std::string_view counter) {
  Status reads = CheckReads(kReadValues, "PendingOperands");
  if (!reads.ok()) return reads;
  Catalog::Reader catalog(catalog_.get());
  const CounterInfo* c = catalog.Find(counter);
  if (c == nullptr) return CounterNotFound(counter);
  uint64_t pending = 0;
  rocksdb::PinnableSlice one;
  rocksdb::GetMergeOperandsOptions opts;
  opts.expected_max_number_of_operands = 1;
  auto count = [&](const rocksdb::Slice& key) -> Status {
    int n = 0;
    rocksdb::Status rs = db_->GetMergeOperands(rocksdb::ReadOptions(), shards_,
                                               key, &one, &opts, &n);
    one.Reset();
    if (rs.IsNotFound()) return Status::OK();
    if (!rs.ok() && !rs.IsIncomplete()) {
      return FromRocks(rs, "count pending operands");
    }
    // n counts the stored entries a read folds; one per key is the floor.
    if (n > 1) pending += static_cast<uint64_t>(n - 1);
    return Status::OK();
  };
  if (c->bucket != BucketWidth::kNone || c->keyed) {
    // Every stored (key, bucket, shard) key of the counter: a keyed
    // counter's count is a scan of all its keys.
    CounterRange range(c->id);
    std::unique_ptr<rocksdb::Iterator> it =
        range.NewIterator(db_.get(), shards_);
    for (it->Seek(range.begin()); it->Valid(); it->Next()) {
      Status s = count(it->key());
      if (!s.ok()) return s;
    }
    Status s = FromRocks(it->status(), "count pending operands");
    if (!s.ok()) return s;
    return pending;
  }
  for (uint32_t shard = 0; shard < c->shards; ++shard) {
    char key[kShardKeyBytes];
    EncodeShardKey(c->id, shard, key);
    Status s = count(rocksdb::Slice(key, sizeof key));
    if (!s.ok()) return s;
  }
  return pending;
}

namespace {

uint64_t IntProperty(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* family,
                     const std::string& name) {
  uint64_t v = 0;
  // A property this RocksDB does not know leaves 0: figures are advisory.
  if (!db->GetIntProperty(family, name, &v)) v = 0;
  return v;
}

}  // namespace

FamilyStats FamilyFigures(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* f) {
  FamilyStats out;
  out.sst_bytes = IntProperty(db, f, "rocksdb.live-sst-files-size");
  out.memtable_bytes = IntProperty(db, f, "rocksdb.cur-size-all-mem-tables");
  out.estimated_keys = IntProperty(db, f, "rocksdb.estimate-num-keys");
  std::string l0;
  if (db->GetProperty(f, "rocksdb.num-files-at-level0", &l0)) {
    out.l0_files = std::strtoull(l0.c_str(), nullptr, 10);
  }
  return out;
}

EngineStats DbImpl::GetStats() const {
  if (options_.read_only) {
    EngineStats out = ReadStatsFile(stats_env_, path_, clock_->NowMillis());
    out.reader_rejected = stats_.rejected.load(std::memory_order_relaxed);
    return out;
  }
  return OwnStats();
}

EngineStats DbImpl::OwnStats() const {
  EngineStats out;
  out.applied = stats_.applied.load(std::memory_order_relaxed);
  out.duplicates = stats_.duplicates.load(std::memory_order_relaxed);
  out.conflicts = stats_.conflicts.load(std::memory_order_relaxed);
  out.outside_window = stats_.outside_window.load(std::memory_order_relaxed);
  out.refused = stats_.refused.load(std::memory_order_relaxed);
  out.rejected = stats_.rejected.load(std::memory_order_relaxed);
  const int64_t now = clock_->NowMillis();
  {
    Catalog::Reader catalog(catalog_.get());
    catalog.ForEach([&](const Catalog::Entry& c) {
      const uint64_t applied = c.applied.load(std::memory_order_relaxed);
      const uint64_t at = c.rolled_up_at.load(std::memory_order_relaxed);
      const bool never = at == Catalog::Entry::kNever;
      const uint64_t behind = never ? applied : applied - at;
      if (behind == 0) return;
      ++out.rollups_behind;
      out.rollup_lag_increments = std::max(out.rollup_lag_increments, behind);
      const int64_t since =
          never ? std::max(opened_ms_, c.created_at_ms)
                : c.rolled_up_ms.load(std::memory_order_relaxed);
      out.rollup_lag_ms = std::max(out.rollup_lag_ms, now - since);
    });
  }
  const wal::GroupCommitStats groups = commit_->GroupStats();
  out.group_commits = groups.groups;
  out.group_members = groups.commits;
  out.group_largest = groups.largest_group;
  out.pending_operands =
      IntProperty(db_.get(), shards_, "rocksdb.num-entries-active-mem-table") +
      IntProperty(db_.get(), shards_, "rocksdb.num-entries-imm-mem-tables");
  out.origin.source = StatsSource::kThisProcess;
  out.origin.writer_pid = ThisProcess().pid;
  out.origin.writer_started_ms = opened_ms_;
  out.origin.as_of_ms = now;
  out.origin.publish_interval_ms = options_.stats_publish_interval_ms;
  out.origin.live = true;
  return out;
}

Result<DbStats> DbImpl::GetDbStats() {
  Status reads = CheckReads(kReadAll, "GetDbStats");
  if (!reads.ok()) return reads;
  Catalog::Reader view(catalog_.get());  // read-only: Refresh may swap db_
  DbStats out;
  out.engine = GetStats();
  const FamilyHandles handles = HandlesOf(handles_);
  for (const ColumnFamily& f : ColumnFamilies()) {
    if (handles[f.index] == nullptr) continue;  // read-only, not in the db
    out.families.push_back(FamilyFigures(db_.get(), handles[f.index]));
    out.families.back().name = f.name;
  }
  // The block cache is shared by all families: ask one.
  out.block_cache_usage_bytes =
      IntProperty(db_.get(), shards_, "rocksdb.block-cache-usage");
  out.block_cache_capacity_bytes =
      IntProperty(db_.get(), shards_, "rocksdb.block-cache-capacity");
  out.delayed_write_rate =
      IntProperty(db_.get(), db_->DefaultColumnFamily(),
                  "rocksdb.actual-delayed-write-rate");
  out.writes_stopped = IntProperty(db_.get(), db_->DefaultColumnFamily(),
                                   "rocksdb.is-write-stopped") != 0;
  out.background_errors = IntProperty(db_.get(), db_->DefaultColumnFamily(),
                                      "rocksdb.background-errors");
  out.latched_error = commit_->LatchedError().ToString();
  if (out.latched_error == "OK") out.latched_error.clear();
  Status s = KeyedCounterFigures(view, &out.keyed_counters);
  if (!s.ok()) return s;
  return out;
}

Status DbImpl::KeyedCounterFigures(const Catalog::Reader& catalog,
                                   std::vector<KeyedCounterStats>* out) {
  const int64_t now = clock_->NowMillis();
  Status first;
  catalog.ForEach([&](const Catalog::Entry& c) {
    if (!c.keyed || !first.ok()) return;
    KeyedCounterStats k;
    k.name = c.name;
    TopKeysResult top;
    Status s = ReadTopList(c, &top);
    if (!s.ok() && !s.IsNotFound()) {
      first = s;
      return;
    }
    if (s.ok()) {
      k.rolled_up = true;
      k.keys = top.key_count;
      k.as_of_ms = top.as_of_ms;
      k.lag_ms = std::max<int64_t>(0, now - top.as_of_ms);
      const uint64_t at = c.rolled_up_at.load(std::memory_order_relaxed);
      if (!options_.read_only && at != Catalog::Entry::kNever) {
        k.changes_since_known = true;
        k.changes_since = c.applied.load(std::memory_order_relaxed) - at;
      }
    }
    out->push_back(std::move(k));
  });
  std::sort(out->begin(), out->end(),
            [](const KeyedCounterStats& a, const KeyedCounterStats& b) {
              return a.name < b.name;
            });
  return first;
}

Status DbImpl::Compact(const ProgressFn& progress) {
  Status s = CheckWritable();
  // The filters judge expiry by the durable mark: make it the engine's now.
  if (s.ok()) s = AdvanceTimeMark();
  if (!s.ok()) return s;
  rocksdb::CompactRangeOptions co;
  co.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  const FamilyHandles handles = HandlesOf(handles_);
  // Progress in bytes: each family's SST and memtable bytes as it stood
  // before, counted done once that family is compacted.
  std::array<uint64_t, kFamilyCount> bytes{};
  ProgressReport report;
  report.unit = "bytes";
  if (progress) {
    for (const ColumnFamily& f : ColumnFamilies()) {
      const FamilyStats figures = FamilyFigures(db_.get(), handles[f.index]);
      bytes[f.index] = figures.sst_bytes + figures.memtable_bytes;
      report.total += bytes[f.index];
    }
    progress(report);
  }
  for (const ColumnFamily& f : ColumnFamilies()) {
    // A writer opens (or creates) every family of the table.
    rocksdb::ColumnFamilyHandle* h = handles[f.index];
    assert(h != nullptr);
    s = FromRocks(db_->CompactRange(co, h, nullptr, nullptr),
                  std::string("compact ") + f.name);
    if (!s.ok()) return s;
    if (progress) {
      report.done += bytes[f.index];
      progress(report);
    }
  }
  return Status::OK();
}

Status DbImpl::CheckpointOnce(const std::string& dir) {
  rocksdb::Checkpoint* raw = nullptr;
  rocksdb::Status rs = rocksdb::Checkpoint::Create(db_.get(), &raw);
  std::unique_ptr<rocksdb::Checkpoint> cp(raw);
  if (!rs.ok()) return FromRocks(rs, "checkpoint " + dir);
  return FromRocks(cp->CreateCheckpoint(dir), "checkpoint " + dir);
}

namespace {

// The last sequence number a closed copy recovers to; 0 if it cannot open.
uint64_t RecoveredSequence(const std::string& dir) {
  RocksOptions ro = MakeRocksOptions(Options());
  ro.db.create_if_missing = false;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  if (!rocksdb::DB::OpenForReadOnly(ro.db, dir, ro.families, &handles, &raw)
           .ok()) {
    return 0;
  }
  const uint64_t seq = raw->GetLatestSequenceNumber();
  for (auto* h : handles) raw->DestroyColumnFamilyHandle(h).PermitUncheckedError();
  delete raw;
  return seq;
}

}  // namespace

Status DbImpl::Checkpoint(const std::string& dir) {
  Status reads = CheckReads(kReadAll, "Checkpoint");
  if (!reads.ok()) return reads;
  if (dir.empty()) return Status::InvalidArgument("checkpoint directory is empty");
  if (!options_.read_only) return CheckpointOnce(dir);
  // A read-only instance copies the files the writer has now. If the writer
  // flushed (and deleted WAL files) after this instance last caught up, the
  // copy would pair an old MANIFEST with newer WALs and silently lose data.
  // So: catch up first, then check that the copy recovers at least to the
  // point this instance saw; retry a few times if the writer raced us.
  constexpr int kAttempts = 3;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    Status s = Refresh();
    if (!s.ok()) return s;
    uint64_t expected;
    {
      Catalog::Reader view(catalog_.get());  // no Refresh moves db_ meanwhile
      expected = db_->GetLatestSequenceNumber();
      s = CheckpointOnce(dir);
    }
    if (!s.ok()) return s;
    if (RecoveredSequence(dir) >= expected) return Status::OK();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  return Status::Busy("checkpoint " + dir + ": the writer kept replacing its "
                      "files while they were copied; retry, or take the "
                      "checkpoint from the writing process");
}

}  // namespace tally::engine

namespace tally {

const char* StorageEngineVersion() {
#define TALLY_STR2(x) #x
#define TALLY_STR(x) TALLY_STR2(x)
  return "RocksDB " TALLY_STR(ROCKSDB_MAJOR) "." TALLY_STR(
      ROCKSDB_MINOR) "." TALLY_STR(ROCKSDB_PATCH);
#undef TALLY_STR
#undef TALLY_STR2
}

}  // namespace tally
