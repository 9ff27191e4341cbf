// tally::Verify: one pass over every column family of the table
// (engine/column_families.h) from one consistent view, checking each record
// by its family's decoders and the cross-record invariants (docs/format.md).

#include <rocksdb/iterator.h>

#include <map>
#include <set>

#include "engine/buckets.h"
#include "engine/coding.h"
#include "engine/column_families.h"
#include "engine/db_impl.h"
#include "engine/family_record.h"
#include "engine/format.h"
#include "engine/shard_picker.h"
#include "engine/validate.h"
#include "engine/writer_files.h"
#include "schema/records.h"
#include "tally/limits.h"
#include "util/rocks_status.h"

namespace tally::engine {
namespace {

struct CounterSums {
  const CounterInfo* info = nullptr;
  ExactSum shards;
  __int128 markers = 0;  // int64 deltas: 2^64 markers to leave 128 bits
  bool readable = true;  // every shard value decoded and in range
  // The counter's flags as its record in the snapshot has them (the
  // catalog's copy may be newer than the snapshot: a first plain increment
  // committing in between). No record seen: not judged.
  bool record_seen = false;
  uint32_t flags = 0;
};

class Findings {
 public:
  explicit Findings(VerifyReport* report) : report_(report) {}
  void Add(std::string problem) {
    if (report_->problems.size() < kMaxVerifyProblems) {
      report_->problems.push_back(std::move(problem));
    } else {
      ++report_->problems_dropped;
    }
  }

 private:
  VerifyReport* report_;
};

// A scan that stopped on damaged data is a finding (the message names the
// file); any other failure ends the check with an error.
Status ScanStatus(const rocksdb::Status& rs, const char* family,
                  Findings* findings, bool* stopped) {
  if (rs.IsCorruption()) {
    *stopped = true;
    findings->Add(std::string(family) + ": scan stopped: " + rs.ToString());
    return Status::OK();
  }
  return FromRocks(rs, std::string("verify ") + family);
}

// The record-level rule of every family is its decoders (the table's);
// on top, what one record says about another: shard and marker keys belong
// to a known counter (or an unfinished import), fit its shard count and
// buckets, and markers sit on their event's shard with the counter's
// expiry. Sums per counter for the shards == markers check.
class FamilyChecks {
 public:
  FamilyChecks(Findings* findings, VerifyReport* report)
      : findings_(findings), report_(report) {}

  void AddCounter(const CounterInfo& c) {
    ++report_->counters;
    by_id_[c.id].info = &c;
  }
  const std::map<uint64_t, CounterSums>& sums() const { return by_id_; }

  void Check(const ColumnFamily& f, std::string_view key,
             std::string_view value) {
    const std::string family = f.name;
    FamilyRecord rec;
    std::string bad = f.decode_key(key, &rec);
    if (rec.kind == RecordKind::kShard) ++report_->shard_keys;
    if (rec.kind == RecordKind::kMarker) ++report_->markers;
    if (!bad.empty()) {
      findings_->Add(family + ": malformed key " + HexKey(key) + ": " + bad);
      return;
    }
    // Ids of unfinished imports (Catalog::BeginImport): their keys belong
    // to a counter that has not appeared yet, or to an import that died and
    // the next read-write open removes. Not findings.
    if (rec.kind == RecordKind::kImportNote) importing_.insert(rec.counter_id);
    CounterSums* owner = nullptr;
    if (rec.kind == RecordKind::kShard || rec.kind == RecordKind::kMarker) {
      auto found = by_id_.find(rec.counter_id);
      if (found == by_id_.end()) {
        if (importing_.count(rec.counter_id) != 0) return;
        findings_->Add(family + ": key " + HexKey(key) +
                       " belongs to no counter (id " +
                       std::to_string(rec.counter_id) + ")");
        return;
      }
      owner = &found->second;
    }
    const std::string where =
        family + ": key " + HexKey(key) +
        (owner != nullptr ? " of counter " + Quote(owner->info->name) : "");
    bad = f.decode_value(value, &rec);
    if (!bad.empty()) {
      findings_->Add(where + ": " + bad);
      if (owner != nullptr) owner->readable = false;
      return;
    }
    switch (rec.kind) {
      case RecordKind::kCounter:
        SawRecord(rec.counter);
        break;
      case RecordKind::kShard:
        Shard(rec, where, owner);
        break;
      case RecordKind::kMarker:
        Marker(rec, where, owner);
        break;
      default:
        break;  // the decoders' rule is the whole check
    }
  }

 private:
  void SawRecord(const schema::CounterRecord& rec) {
    auto found = by_id_.find(rec.id);
    if (found != by_id_.end() && found->second.info->name == rec.name) {
      found->second.record_seen = true;
      found->second.flags = rec.flags;
    }
  }

  void Shard(const FamilyRecord& rec, const std::string& where,
             CounterSums* sums) {
    const CounterInfo& c = *sums->info;
    const int64_t width = BucketWidthMs(c.bucket);
    if ((rec.bucket_ms != kNoBucket) != (width != 0) ||
        (width != 0 && rec.bucket_ms % width != 0)) {
      findings_->Add(where + " does not fit its buckets (" +
                     BucketWidthName(c.bucket) + ")");
      return;
    }
    if (rec.shard >= c.shards) {
      findings_->Add(where + ": shard " + std::to_string(rec.shard) +
                     " >= shard count " + std::to_string(c.shards));
    }
    if (rec.shard_state == ShardValue::kOverflowed) {
      findings_->Add(where + ": overflowed (its value is unknown)");
      sums->readable = false;
      return;
    }
    sums->shards.Add(rec.shard_value);
  }

  void Marker(const FamilyRecord& rec, const std::string& where,
              CounterSums* sums) {
    const CounterInfo& c = *sums->info;
    const schema::MarkerRecord& m = rec.marker;
    // A pinned marker's shard came from an affinity key the marker does
    // not keep: only its range can be checked.
    if (m.shard >= c.shards ||
        (!m.pinned && m.shard != ShardOfKey(m.event_id, c.shards))) {
      findings_->Add(where + ": marker disagrees with its shard hash");
    }
    if ((m.expires_at_ms != 0) != (c.dedupe_window_ms != 0)) {
      findings_->Add(where + ": marker has expiry " +
                     std::to_string(m.expires_at_ms) +
                     ", which does not match the counter's dedupe window " +
                     std::to_string(c.dedupe_window_ms) + " ms");
    }
    sums->markers += m.delta;
  }

  Findings* findings_;
  VerifyReport* report_;
  std::map<uint64_t, CounterSums> by_id_;
  std::set<uint64_t> importing_;
};

}  // namespace

Status DbImpl::Verify(VerifyReport* report) {
  *report = VerifyReport();
  Status reads = CheckReads(kReadAll, "Verify");
  if (!reads.ok()) return reads;
  Findings findings(report);
  // Holding the catalog keeps creates and deletes out for the whole check,
  // so every key is judged against the counters of the snapshot's moment.
  Catalog::Reader catalog(catalog_.get());
  const std::vector<CounterInfo> counters = catalog.List();
  if (verify_hook_for_test_) verify_hook_for_test_();

  // One snapshot for all scans, so a concurrent batch is seen whole. A
  // read-only instance changes only on Refresh, which waits for this
  // check (it holds the catalog exclusively) and keeps every family at one
  // point (reader.cc): its reads are already one consistent point.
  rocksdb::ReadOptions ro;
  ro.total_order_seek = true;
  ro.verify_checksums = true;
  const rocksdb::Snapshot* snapshot =
      options_.read_only ? nullptr : db_->GetSnapshot();
  ro.snapshot = snapshot;
  struct Release {
    rocksdb::DB* db;
    const rocksdb::Snapshot* s;
    ~Release() {
      if (s != nullptr) db->ReleaseSnapshot(s);
    }
  } release{db_.get(), snapshot};

  // Every block of every table file, also those no scan below reads
  // (filters, indexes, blocks of deleted keys).
  rocksdb::Status files = db_->VerifyChecksum(ro);
  if (options_.read_only && files.IsPathNotFound()) {
    // The writer has compacted a table file away since this point; the
    // scans below still check every block they read from it.
    files = rocksdb::Status::OK();
  }
  if (options_.read_only && files.IsCorruption()) {
    // A whole-file check that failed while the writer changed its files
    // (a flush or compaction since this instance's point; seen once beside
    // a writer with 64 KiB write buffers as a 0-byte table file) is not
    // judged: the caller refreshes and verifies again. With the writer's
    // files unchanged, the finding stands.
    WriterFiles now;
    Status listed = ListWriterFiles(reader_options_.db.env, path_, &now);
    if (!listed.ok()) return listed;
    if (!SameManifest(reader_seen_, now)) {
      return Status::Busy("database " + path_ +
                          ": the writer changed its files while Verify "
                          "checked them (" + files.ToString() +
                          "); Refresh and verify again");
    }
  }
  if (files.IsCorruption()) {
    findings.Add("files: " + files.ToString());
  } else if (!files.ok()) {
    return FromRocks(files, "verify file checksums");
  }

  bool scan_stopped = false;
  FamilyChecks checks(&findings, report);
  for (const CounterInfo& c : counters) checks.AddCounter(c);
  // Every family of the table, meta first (the table's order): the counter
  // records and import notes it holds are what the other families' keys
  // are judged against.
  const FamilyHandles handles = HandlesOf(handles_);
  for (const ColumnFamily& f : ColumnFamilies()) {
    rocksdb::ColumnFamilyHandle* h = handles[f.index];
    if (h == nullptr) continue;  // read-only, and the database lacks it
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, h));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      checks.Check(f, it->key().ToStringView(), it->value().ToStringView());
    }
    Status scan = ScanStatus(it->status(), f.name, &findings, &scan_stopped);
    if (!scan.ok()) return scan;
  }

  // Cross-record invariant: shards == markers for once-only counters that
  // keep their markers and buckets forever (a dedupe window drops markers,
  // never their counts; a retention drops buckets, never their markers). Not
  // judged after a scan stopped on damage: its sums are partial.
  if (scan_stopped) return Status::OK();
  for (const auto& [id, sums] : checks.sums()) {
    const CounterInfo& c = *sums.info;
    if (!sums.record_seen || (sums.flags & kCounterFlagPlainIncrements) != 0 ||
        !sums.readable || c.dedupe_window_ms != 0 || c.retention_ms != 0) {
      continue;
    }
    ++report->sums_compared;
    if (!sums.shards.Fits() || sums.shards.value() != sums.markers) {
      findings.Add("counter " + Quote(c.name) + ": shard sum " +
                   (sums.shards.Fits() ? DecimalString(sums.shards.value())
                                       : std::string("beyond 128 bits")) +
                   " != marker delta sum " + DecimalString(sums.markers));
    }
  }
  return Status::OK();
}

}  // namespace tally::engine
