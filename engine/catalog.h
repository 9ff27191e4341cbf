// Catalog: the counters of one database, keyed by name, kept in memory and
// persisted in the meta column family with the database header.
//
// Names are not keys: each creation gets a new numeric id from the header's
// next_counter_id (persisted in the same write), and shard and marker keys
// carry the id. Deleting a counter and creating one with the same name
// therefore can never resurrect old shards or markers.
//
// Locking protocol: increments hold a Reader for the whole operation,
// including their commit, so a concurrent DeleteCounter (which takes the
// lock exclusively) cannot interleave its range deletions with an in-flight
// increment of the deleted counter. The exception is IncrementAsync on a
// durable pipeline: under the Reader it counts its commit in AsyncCommits,
// then queues it after the Reader is released; DeleteCounter, holding the
// lock, waits until every counted commit is written (not called back)
// before it deletes anything. No user callback ever runs under the lock.
//
// Ownership: owned by DbImpl; does not own the rocksdb::DB, the column
// family handles, the commit pipeline, the clock or the retention rules,
// which outlive it; it keeps the rules in step with its counters.
// Thread safety: all methods are safe to call concurrently.

#ifndef TALLY_ENGINE_CATALOG_H_
#define TALLY_ENGINE_CATALOG_H_

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/bucket_retention.h"
#include "engine/column_families.h"
#include "engine/format.h"
#include "schema/records.h"
#include "tally/options.h"
#include "tally/status.h"
#include "tally/types.h"
#include "wal/commit_pipeline.h"
#include "util/mutex.h"

namespace tally::engine {

class Catalog {
 public:
  // `families`: the instance's handles by Family (null for one it lacks).
  Catalog(rocksdb::DB* db, const FamilyHandles& families,
          wal::CommitPipeline* commit, const Clock* clock,
          RetentionRules* retention);
  Catalog(const Catalog&) = delete;
  Catalog& operator=(const Catalog&) = delete;

  // Reads (or, for an empty writable database, writes) the header and
  // (re)loads every counter. NotSupported for a newer format; Corruption for
  // a bad record.
  Status Load(const std::string& path, bool read_only) TALLY_EXCLUDES(lock_);

  // A counter as the write path sees it.
  struct Entry : CounterInfo {
    explicit Entry(const CounterInfo& info)
        : CounterInfo(info),
          plain_recorded((info.flags & kCounterFlagPlainIncrements) != 0) {}
    // Whether kCounterFlagPlainIncrements is already stored; the first plain
    // increment adds the flagged record to its own WriteBatch.
    mutable std::atomic<bool> plain_recorded;
    // Increments applied in this process (bumped after each commit), and
    // the value it had when this process last rolled the counter up
    // (kNever: not yet). Their difference is ReadCached's lag_increments.
    static constexpr uint64_t kNever = ~uint64_t{0};
    mutable std::atomic<uint64_t> applied{0};
    mutable std::atomic<uint64_t> rolled_up_at{kNever};
    // Options::clock when this process last rolled the counter up (with
    // rolled_up_at; 0: not yet), for EngineStats::rollup_lag_ms.
    mutable std::atomic<int64_t> rolled_up_ms{0};
    // The snapshot sequence of the last roll-up this process wrote (0: not
    // yet); a roll-up read from an older snapshot is not written
    // (engine/rollups.cc, CommitRollup; under DbImpl::rollup_write_mu_).
    mutable std::atomic<uint64_t> rollup_sequence{0};
    // Keyed counters: how long this process's last roll-up scan took, in
    // ms of the steady clock; the worker waits nine times that between
    // scans (engine/rollups.cc).
    mutable std::atomic<int64_t> scan_ms{0};
    mutable std::atomic<int64_t> scan_started_ms{0};
    // Strict counters with a minimum: whether the holds family may hold a
    // reservation of the counter (DbImpl::MayHoldUnits): kHoldsUnknown
    // until a write probes it, kHoldsNone (a write then reads no holds),
    // kHoldsMaybe once one was seen or a Reserve is about to write one.
    static constexpr int kHoldsUnknown = 0, kHoldsNone = 1, kHoldsMaybe = 2;
    mutable std::atomic<int> holds{kHoldsUnknown};
  };

  // A shared hold on the catalog; Find() results stay valid while it lives.
  // Its accessors read the catalog's guarded fields: they tell the analysis
  // the hold is there (AssertReaderHeld), which it cannot see through an
  // object (it tracks scopes).
  class TALLY_SCOPED_CAPABILITY Reader {
   public:
    explicit Reader(Catalog* c) TALLY_ACQUIRE_SHARED(c->lock_) : c_(c) {
      c->lock_.LockShared();
    }
    ~Reader() TALLY_RELEASE() { c_->lock_.UnlockShared(); }
    Reader(const Reader&) = delete;
    Reader& operator=(const Reader&) = delete;

    const Entry* Find(std::string_view name) const {
      c_->AssertReaderHeld();
      auto it = c_->by_name_.find(name);
      return it == c_->by_name_.end() ? nullptr : it->second.get();
    }
    // All counters, ordered by name (the lock is not taken again: the
    // writer-preferring lock must never be read-locked recursively).
    std::vector<CounterInfo> List() const {
      c_->AssertReaderHeld();
      return c_->ListLocked();
    }
    // Calls f(const Entry&) for every counter, in no particular order.
    template <typename F>
    void ForEach(F f) const {
      c_->AssertReaderHeld();
      for (const auto& [name, entry] : c_->by_name_) f(*entry);
    }
    // The database header as of this hold.
    const schema::HeaderRecord& header() const {
      c_->AssertReaderHeld();
      return c_->header_;
    }

   private:
    Catalog* const c_;
  };

  Status Create(std::string_view name, const CounterSpec& spec)
      TALLY_EXCLUDES(lock_);

  // Import (DbImpl::ImportCounter) makes a counter appear whole or not at
  // all. BeginImport checks that `name` is free, allocates the counter's id
  // and records the unfinished import (ImportMetaKey) in the same write;
  // the caller then writes the counter's shards and markers under that id,
  // which no counter record names, so no read, increment or Verify sees
  // them. FinishImport adds the counter record (with `created_at_ms` and
  // `flags`) and drops the note in one durable write; AlreadyExists if the
  // name was taken meanwhile (the caller then abandons the import).
  // AbandonImport deletes every key of the id and the note. Load of a
  // writable database abandons every import it finds noted (one that died).
  Result<uint64_t> BeginImport(std::string_view name, const CounterSpec& spec)
      TALLY_EXCLUDES(lock_);
  Status FinishImport(uint64_t id, std::string_view name,
                      const CounterSpec& spec, int64_t created_at_ms,
                      uint32_t flags) TALLY_EXCLUDES(lock_);
  Status AbandonImport(uint64_t id);
  // `quiesce`, when given, runs once the catalog is held exclusively and
  // before anything is deleted (DbImpl waits for async commits there).
  Status Delete(std::string_view name,
                const std::function<void()>& quiesce = nullptr)
      TALLY_EXCLUDES(lock_);
  Result<CounterInfo> Describe(std::string_view name) TALLY_EXCLUDES(lock_);
  std::vector<CounterInfo> List() TALLY_EXCLUDES(lock_);

  // Raises the header's format version to `version` (synced) unless it is
  // there already: before the first record that needs it is written.
  Status RequireFormat(uint32_t version) TALLY_EXCLUDES(lock_);
  // Whether the header is at `version` or above already.
  bool HasFormat(uint32_t version) TALLY_EXCLUDES(lock_);

  // The RocksDB instance the catalog reads and writes through.
  struct Binding {
    rocksdb::DB* db;
    FamilyHandles families;
  };
  // Read-only databases: runs `move` with the catalog held exclusively, so
  // no read holding a Reader sees it half done, then reloads every counter.
  // `move` catches the instance up, or replaces it and says so in *binding.
  Status MoveTo(const std::function<Status(Binding*)>& move,
                const std::string& path) TALLY_EXCLUDES(lock_);
  // Whether a thread holds the catalog exclusively or waits to (tests).
  bool WriterPending() TALLY_EXCLUDES(lock_) { return lock_.WriterPending(); }
  // Commits `wb` durably, adding the header raised to format `version` when
  // it is below (a record using a newer format feature goes with the raise).
  Status CommitRaisingFormat(uint32_t version, rocksdb::WriteBatch* wb)
      TALLY_EXCLUDES(lock_);

  // The meta key and value of `entry` with kCounterFlagPlainIncrements set,
  // for the write path to add to a batch.
  static void FlaggedRecord(const CounterInfo& entry, std::string* key,
                            std::string* value);

 private:
  // Tells the analysis a Reader holds lock_ (it cannot follow the hold
  // into the Reader's accessors); checks nothing at run time.
  void AssertReaderHeld() const TALLY_ASSERT_SHARED_CAPABILITY(lock_) {}

  Status WriteFreshHeader() TALLY_REQUIRES(lock_);
  Status LoadLocked(const std::string& path, bool read_only)
      TALLY_REQUIRES(lock_);
  // Name and size checks of a new counter.
  Status CheckNewCounter(std::string_view name, const CounterSpec& spec) const
      TALLY_REQUIRES_SHARED(lock_);
  // Adds the header `next` (raised to the format `info` needs) and the
  // record of `info` to `wb`, commits it durably and installs the counter
  // (lock_ held exclusively).
  Status CommitCounter(const CounterInfo& info, schema::HeaderRecord next,
                       rocksdb::WriteBatch* wb) TALLY_REQUIRES(lock_);
  // One durable write deleting every key of the counters `ids` and their
  // import notes (no lock needed: no counter record names them).
  Status DropImports(const std::vector<uint64_t>& ids);
  // Installs the retention rules of the counters now in by_name_ (lock_
  // held exclusively, so two installs cannot interleave).
  void PublishRetention() TALLY_REQUIRES(lock_);
  std::vector<CounterInfo> ListLocked() const TALLY_REQUIRES_SHARED(lock_);

  // Replaced only by MoveTo (lock_ held exclusively).
  rocksdb::DB* db_;
  FamilyHandles families_;
  rocksdb::ColumnFamilyHandle* meta_;  // families_[kMeta]
  wal::CommitPipeline* const commit_;
  const Clock* const clock_;
  RetentionRules* const retention_;  // not owned

  mutable RwLock lock_;
  schema::HeaderRecord header_ TALLY_GUARDED_BY(lock_);
  // Keys view the CounterInfo::name they map to.
  std::unordered_map<std::string_view, std::unique_ptr<Entry>> by_name_
      TALLY_GUARDED_BY(lock_);
};

}  // namespace tally::engine

#endif  // TALLY_ENGINE_CATALOG_H_
