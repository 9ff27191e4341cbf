// tally::Verify: one pass over every column family from one consistent view,
// checking each record and the cross-record invariants (docs/format.md).

#include <rocksdb/iterator.h>

#include <map>
#include <set>

#include "engine/buckets.h"
#include "engine/coding.h"
#include "engine/db_impl.h"
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

std::string Hex(const rocksdb::Slice& key) {
  return HexKey(key.ToStringView());
}

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

}  // namespace

Status DbImpl::Verify(VerifyReport* report) {
  *report = VerifyReport();
  Findings findings(report);
  // Holding the catalog keeps creates and deletes out for the whole check,
  // so every key is judged against the counters of the snapshot's moment.
  Catalog::Reader catalog(catalog_.get());
  const std::vector<CounterInfo> counters = catalog.List();
  if (options_.read_only && !reader_at_point_.load()) {
    return Status::Busy("database " + path_ +
                        ": this read-only instance is not at one consistent "
                        "point (its last Refresh failed); Refresh again");
  }
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
  std::map<uint64_t, CounterSums> by_id;
  for (const CounterInfo& c : counters) {
    ++report->counters;
    by_id[c.id].info = &c;
  }
  // Ids of unfinished imports (Catalog::BeginImport): their keys belong to
  // a counter that has not appeared yet, or to an import that died and the
  // next read-write open removes. Not findings.
  std::set<uint64_t> importing;
  // Counter records: every meta key must decode (Load checked them once;
  // this catches what changed on disk since).
  {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, meta_));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const rocksdb::Slice key = it->key();
      if (key == rocksdb::Slice(kHeaderKey)) {
        schema::HeaderRecord h;
        Status s = schema::DecodeHeader(it->value().ToStringView(), &h);
        if (!s.ok()) findings.Add("meta: header: " + s.message());
        continue;
      }
      if (key == rocksdb::Slice(kOutboxAckedKey)) {
        if (key.size() != 1 || it->value().size() != 8) {
          findings.Add("meta: outbox cursor: malformed value (" +
                       std::to_string(it->value().size()) +
                       " bytes, expected 8)");
        }
        continue;
      }
      if (key == rocksdb::Slice(kTimeMarkKey)) {
        if (it->value().size() != 8) {
          findings.Add("meta: time mark: malformed value (" +
                       std::to_string(it->value().size()) +
                       " bytes, expected 8)");
        }
        continue;
      }
      uint64_t import_id = 0;
      if (DecodeImportMetaKey(key.ToStringView(), &import_id)) {
        importing.insert(import_id);
        continue;
      }
      schema::CounterRecord rec;
      Status s = schema::DecodeCounter(it->value().ToStringView(), &rec);
      if (!s.ok()) {
        findings.Add("meta key " + Hex(key) + ": " + s.message());
        continue;
      }
      auto found = by_id.find(rec.id);
      if (found != by_id.end() && found->second.info->name == rec.name) {
        found->second.record_seen = true;
        found->second.flags = rec.flags;
      }
    }
    Status scan = ScanStatus(it->status(), "meta", &findings, &scan_stopped);
    if (!scan.ok()) return scan;
  }
  // Shards.
  {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, shards_));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      ++report->shard_keys;
      const rocksdb::Slice key = it->key();
      uint64_t id;
      uint32_t shard;
      int64_t bucket = kNoBucket;  // a plain key leaves it
      if (!DecodeShardKey(key.ToStringView(), &id, &shard) &&
          !DecodeBucketShardKey(key.ToStringView(), &id, &bucket, &shard)) {
        findings.Add("shards: malformed key " + Hex(key));
        continue;
      }
      auto found = by_id.find(id);
      if (found == by_id.end() && importing.count(id) != 0) continue;
      if (found == by_id.end()) {
        findings.Add("shards: key " + Hex(key) + " belongs to no counter (id " +
                     std::to_string(id) + ")");
        continue;
      }
      CounterSums& sums = found->second;
      const std::string name = Quote(sums.info->name);
      const int64_t width = BucketWidthMs(sums.info->bucket);
      if ((bucket != kNoBucket) != (width != 0) ||
          (width != 0 && bucket % width != 0)) {
        findings.Add("shards: key " + Hex(key) + " of counter " + name +
                     " does not fit its buckets (" +
                     BucketWidthName(sums.info->bucket) + ")");
        continue;
      }
      if (shard >= sums.info->shards) {
        findings.Add("shards: key " + Hex(key) + " of counter " + name +
                     ": shard " + std::to_string(shard) + " >= shard count " +
                     std::to_string(sums.info->shards));
      }
      ShardSum v;
      switch (DecodeShardValue(it->value().ToStringView(), &v)) {
        case ShardValue::kMalformed:
          findings.Add("shards: key " + Hex(key) + " of counter " + name +
                       ": malformed value (" +
                       std::to_string(it->value().size()) +
                       " bytes, expected 8 or 16)");
          sums.readable = false;
          break;
        case ShardValue::kOverflowed:
          findings.Add("shards: key " + Hex(key) + " of counter " + name +
                       ": overflowed (its value is unknown)");
          sums.readable = false;
          break;
        case ShardValue::kExact:
          sums.shards.Add(v);
          break;
      }
    }
    Status scan = ScanStatus(it->status(), "shards", &findings, &scan_stopped);
    if (!scan.ok()) return scan;
  }

  // Markers.
  {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, events_));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      ++report->markers;
      const rocksdb::Slice key = it->key();
      uint64_t id;
      std::string_view event_id;
      if (!DecodeMarkerKey(key.ToStringView(), &id, &event_id)) {
        findings.Add("events: malformed key " + Hex(key));
        continue;
      }
      auto found = by_id.find(id);
      if (found == by_id.end() && importing.count(id) != 0) continue;
      if (found == by_id.end()) {
        findings.Add("events: marker " + Hex(key) +
                     " belongs to no counter (id " + std::to_string(id) + ")");
        continue;
      }
      CounterSums& sums = found->second;
      schema::MarkerRecord m;
      Status s = schema::DecodeMarker(it->value().ToStringView(), &m);
      if (!s.ok()) {
        findings.Add("events: marker " + Hex(key) + " of counter " +
                     Quote(sums.info->name) + ": " + s.message());
        sums.readable = false;
        continue;
      }
      // A pinned marker's shard came from an affinity key the marker does
      // not keep: only its range can be checked.
      if (m.counter_id != id || m.event_id != event_id ||
          m.shard >= sums.info->shards ||
          (!m.pinned && m.shard != ShardOfKey(event_id, sums.info->shards))) {
        findings.Add("events: marker " + Hex(key) + " of counter " +
                     Quote(sums.info->name) +
                     " disagrees with its key or its shard hash");
      }
      if ((m.expires_at_ms != 0) != (sums.info->dedupe_window_ms != 0)) {
        findings.Add("events: marker " + Hex(key) + " of counter " +
                     Quote(sums.info->name) + " has expiry " +
                     std::to_string(m.expires_at_ms) +
                     ", which does not match the counter's dedupe window " +
                     std::to_string(sums.info->dedupe_window_ms) + " ms");
      }
      sums.markers += m.delta;
    }
    Status scan = ScanStatus(it->status(), "events", &findings, &scan_stopped);
    if (!scan.ok()) return scan;
  }

  // Cross-record invariant: shards == markers for once-only counters that
  // keep their markers and buckets forever (a dedupe window drops markers,
  // never their counts; a retention drops buckets, never their markers). Not
  // judged after a scan stopped on damage: its sums are partial.
  if (scan_stopped) return Status::OK();
  for (const auto& [id, sums] : by_id) {
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
