// Roll-ups: each counter's cached total in the rollups column family, kept
// fresh by a background thread (Options::rollup_interval_ms) and by
// RollupNow, read by ReadCached with its age and lag.
//
// A roll-up never takes a lock an increment waits on: it holds the catalog
// shared (as increments do), reads the shards from a snapshot and writes one
// record. Its lag in increments comes from Catalog::Entry::applied, which
// increments bump after their commit: `applied` is read before the snapshot
// is taken, so every increment it counts is in the snapshot, and the lag it
// reports is never less than the truth.

#include <rocksdb/db.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "engine/coding.h"
#include "engine/db_impl.h"
#include "engine/snapshot_hold.h"
#include "engine/top_keys.h"
#include "engine/rules.h"
#include "tally/limits.h"
#include "util/rocks_status.h"

namespace tally::engine {

namespace {

int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

// A keyed counter's roll-up scans every key: the worker waits nine times
// the last scan's duration between scans, so roll-ups take at most a tenth
// of one core however many keys there are. The scan runs outside the
// catalog hold (a waiting CreateCounter would otherwise hold every
// increment up for the scan's duration); the records are written under it,
// only if the counter is still the one scanned.
Status DbImpl::RollupKeyed(std::string_view name, bool force) {
  CounterInfo info;
  uint64_t applied = 0;
  {
    Catalog::Reader catalog(catalog_.get());
    const Catalog::Entry* c = catalog.Find(name);
    if (c == nullptr) return CounterNotFound(name);
    assert(c->keyed);
    applied = c->applied.load(std::memory_order_acquire);
    if (!force) {
      if (c->rolled_up_at.load(std::memory_order_relaxed) == applied) {
        return Status::OK();
      }
      const int64_t since =
          SteadyMs() - c->scan_started_ms.load(std::memory_order_relaxed);
      if (c->rolled_up_at.load(std::memory_order_relaxed) !=
              Catalog::Entry::kNever &&
          since < 10 * c->scan_ms.load(std::memory_order_relaxed)) {
        return Status::OK();
      }
    }
    info = *c;
  }
  const int64_t started = SteadyMs();
  TopKeysResult top;
  Status s = ScanTop(info, kMaxTopKeys, &top);
  if (!s.ok()) return s;
  if (rollup_hook_for_test_) rollup_hook_for_test_();
  RollupRecord r;
  r.value = top.total;
  r.sequence = top.sequence;
  r.as_of_ms = top.as_of_ms;
  std::string list;
  EncodeTopList(top, &list);
  Catalog::Reader catalog(catalog_.get());
  const Catalog::Entry* c = catalog.Find(name);
  if (c == nullptr || c->id != info.id) return Status::OK();  // deleted
  bool wrote = false;
  s = CommitRollup(*c, applied, &r, &list, &wrote);
  if (!s.ok() || !wrote) return s;
  c->scan_started_ms.store(started, std::memory_order_relaxed);
  c->scan_ms.store(SteadyMs() - started, std::memory_order_relaxed);
  return Status::OK();
}

Status DbImpl::RollupOne(const Catalog::Entry& c, bool force) {
  assert(!c.keyed);
  const uint64_t applied = c.applied.load(std::memory_order_acquire);
  if (!force && c.rolled_up_at.load(std::memory_order_relaxed) == applied) {
    return Status::OK();  // nothing changed since this process's last one
  }
  RollupRecord r;
  Status s;
  {
    const SnapshotHold snapshot(db_.get(), /*read_only=*/false);
    rocksdb::ReadOptions ro;
    ro.snapshot = snapshot.get();
    r.sequence = snapshot.get()->GetSequenceNumber();
    r.as_of_ms = clock_->NowMillis();
    s = SumShards(c, {}, ro, &r.value);
  }
  if (!s.ok()) return s;
  if (rollup_hook_for_test_) rollup_hook_for_test_();
  bool wrote = false;
  return CommitRollup(c, applied, &r, nullptr, &wrote);
}

// Two roll-ups of one counter (the worker's and a RollupNow, or two
// RollupNow calls) may read in one order and write in the other: the one
// that read the older snapshot is dropped here, so the stored total never
// replaces a newer one. Its as_of is raised to the stored one's at least:
// the clock is read after the snapshot, so two roll-ups can read the clock
// in the other order than their snapshots.
Status DbImpl::CommitRollup(const Catalog::Entry& c, uint64_t applied,
                            RollupRecord* r, const std::string* top_list,
                            bool* wrote) {
  *wrote = false;
  MutexLock lock(&rollup_write_mu_);
  if (r->sequence < c.rollup_sequence.load(std::memory_order_relaxed)) {
    return Status::OK();
  }
  r->as_of_ms =
      std::max(r->as_of_ms, c.rolled_up_ms.load(std::memory_order_relaxed));
  char key[kTopListKeyBytes];
  char value[kRollupBytes];
  EncodeCounterPrefix(c.id, key);
  EncodeRollup(*r, value);
  rocksdb::WriteBatch wb;
  rocksdb::Status rs = wb.Put(rollups_, rocksdb::Slice(key, kCounterIdBytes),
                              rocksdb::Slice(value, sizeof value));
  if (rs.ok() && top_list != nullptr) {
    key[kCounterIdBytes] = kTopListTag;
    rs = wb.Put(rollups_, rocksdb::Slice(key, sizeof key), *top_list);
  }
  if (!rs.ok()) return FromRocks(rs, "roll up");
  Status s = commit_->Commit(&wb);
  if (!s.ok()) return s;
  c.rollup_sequence.store(r->sequence, std::memory_order_relaxed);
  c.rolled_up_at.store(applied, std::memory_order_relaxed);
  c.rolled_up_ms.store(r->as_of_ms, std::memory_order_relaxed);
  *wrote = true;
  return Status::OK();
}

Status DbImpl::RollupNow(std::string_view counter) {
  Status s = CheckWritable();
  if (!s.ok()) return s;
  if (!counter.empty()) {
    Catalog::Reader catalog(catalog_.get());
    const Catalog::Entry* c = catalog.Find(counter);
    if (c == nullptr) return CounterNotFound(counter);
    if (!c->keyed) return RollupOne(*c, /*force=*/true);
  }
  if (!counter.empty()) return RollupKeyed(counter, /*force=*/true);
  // The changed counters, under one short hold of the catalog; then each
  // under its own, so a waiting DeleteCounter (and the increments queued
  // behind it by the writer-preferring lock) waits for one roll-up at most.
  std::vector<std::string> changed;
  {
    Catalog::Reader catalog(catalog_.get());
    catalog.ForEach([&changed](const Catalog::Entry& c) {
      if (c.rolled_up_at.load(std::memory_order_relaxed) !=
          c.applied.load(std::memory_order_relaxed)) {
        changed.push_back(c.name);
      }
    });
  }
  // One bad counter (an overflowed shard) does not stop the others.
  Status first;
  for (const std::string& name : changed) {
    Status one;
    bool keyed = false;
    {
      Catalog::Reader catalog(catalog_.get());
      const Catalog::Entry* c = catalog.Find(name);
      if (c == nullptr) continue;  // deleted meanwhile
      keyed = c->keyed;
      if (!keyed) one = RollupOne(*c, /*force=*/false);
    }
    if (keyed) {
      one = RollupKeyed(name, /*force=*/false);
      if (one.IsNotFound()) one = Status::OK();  // deleted meanwhile
    }
    if (!one.ok() && first.ok()) first = one;
  }
  return first;
}

Status DbImpl::RollUpKeyedOnce(std::string_view counter) {
  bool first_keyed = false;  // a keyed counter never rolled up
  {
    Catalog::Reader catalog(catalog_.get());
    const Catalog::Entry* c = catalog.Find(counter);
    if (c == nullptr) return CounterNotFound(counter);
    if (c->keyed && !options_.read_only) {
      TopKeysResult top;
      Status s = ReadTopList(*c, &top);
      if (!s.ok() && !s.IsNotFound()) return s;
      first_keyed = s.IsNotFound();
    }
  }
  // Its scan runs outside the catalog hold.
  return first_keyed ? RollupKeyed(counter, /*force=*/true) : Status::OK();
}

Status DbImpl::ReadRollupRecord(const Catalog::Entry& c,
                                const rocksdb::ReadOptions& ro,
                                RollupRecord* r) {
  char key[kCounterIdBytes];
  EncodeCounterPrefix(c.id, key);
  rocksdb::PinnableSlice found;
  const auto get = [&] {
    found.Reset();
    return rollups_ == nullptr ? rocksdb::Status::NotFound()
                               : db_->Get(ro, rollups_,
                                          rocksdb::Slice(key, sizeof key),
                                          &found);
  };
  rocksdb::Status rs = get();
  if (rs.IsNotFound()) {
    if (options_.read_only) {
      return NoRollupYet(c);
    }
    if (c.keyed) {
      return Status::NotFound("counter " + Quote(c.name) +
                              " has no roll-up: it was deleted and created "
                              "again meanwhile");
    }
    // Then the stored record is read: this one, or a newer one written
    // meanwhile (CommitRollup).
    Status s = RollupOne(c, /*force=*/true);
    if (!s.ok()) return s;
    rs = get();
  }
  if (!rs.ok()) return FromRocks(rs, "read roll-up");
  if (!DecodeRollup(found.ToStringView(), r)) {
    return Status::Corruption(
        "roll-up of counter " + Quote(c.name) + " at key " +
        HexKey(std::string_view(key, sizeof key)) + " is malformed (" +
        std::to_string(found.size()) + " bytes, expected 24)");
  }
  return Status::OK();
}

Result<CachedValue> DbImpl::ReadCached(std::string_view counter) {
  Status s = CheckReads(kReadRollups, "ReadCached");
  if (s.ok()) s = RollUpKeyedOnce(counter);
  if (!s.ok()) return s;
  Catalog::Reader catalog(catalog_.get());
  const Catalog::Entry* c = catalog.Find(counter);
  if (c == nullptr) return CounterNotFound(counter);
  // A keyed counter's total and top list are read at one point: the list
  // says whether out-of-range keys were left out of the total.
  std::unique_ptr<SnapshotHold> snapshot;
  rocksdb::ReadOptions ro;
  if (c->keyed) {
    snapshot = std::make_unique<SnapshotHold>(db_.get(), options_.read_only);
    ro.snapshot = snapshot->get();
    TopKeysResult top;
    s = ReadTopList(*c, &top, ro);
    if (!s.ok() && !s.IsNotFound()) return s;
    if (s.ok() && top.out_of_range_keys != 0) return OutOfRangeKeys(*c, top);
  }
  RollupRecord r;
  s = ReadRollupRecord(*c, ro, &r);
  if (!s.ok()) return s;
  CachedValue out;
  out.value = r.value;
  out.as_of_ms = r.as_of_ms;
  out.sequence = r.sequence;
  out.lag_ms = std::max<int64_t>(0, clock_->NowMillis() - r.as_of_ms);
  const uint64_t at = c->rolled_up_at.load(std::memory_order_relaxed);
  if (!options_.read_only && at != Catalog::Entry::kNever) {
    out.lag_increments_known = true;
    out.lag_increments = c->applied.load(std::memory_order_relaxed) - at;
  }
  return out;
}

}  // namespace tally::engine
