// tally::Verify: one pass over every column family of the table
// (engine/column_families.h) from one consistent view, checking each record
// by its family's decoders and the cross-record invariants (docs/format.md).

#include <rocksdb/iterator.h>

#include <cassert>
#include <map>
#include <set>

#include "core/findings.h"
#include "engine/coding.h"
#include "engine/column_families.h"
#include "engine/db_impl.h"
#include "engine/family_record.h"
#include "engine/format.h"
#include "engine/rules.h"
#include "engine/snapshot_hold.h"
#include "engine/writer_files.h"
#include "schema/records.h"
#include "tally/limits.h"
#include "util/rocks_status.h"

namespace tally::engine {
namespace {

// What one counter, or one key of a keyed counter, holds: its shard sum and
// its markers' delta sum.
struct Sums {
  ExactSum shards;
  __int128 markers = 0;  // int64 deltas: 2^64 markers to leave 128 bits
  bool readable = true;  // every shard value decoded and in range
};

struct CounterSums {
  const CounterInfo* info = nullptr;
  Sums sums;  // a named counter's; a keyed counter's are per key (KeySums)
  // The counter's flags as its record in the snapshot has them (the
  // catalog's copy may be newer than the snapshot: a first plain increment
  // committing in between). No record seen: not judged.
  bool record_seen = false;
  uint32_t flags = 0;
};

// Shards == markers is judged for once-only counters that keep their
// markers and buckets forever (a dedupe window drops markers, never their
// counts; a retention drops buckets, never their markers).
bool Judged(const CounterSums& c) {
  return c.record_seen && (c.flags & kCounterFlagPlainIncrements) == 0 &&
         c.info->dedupe_window_ms == 0 && c.info->retention_ms == 0;
}

// "" when the shard sum equals the marker delta sum, else the finding's
// text after the counter (or key) it names.
std::string SumMismatch(const Sums& s) {
  if (s.shards.Fits() && s.shards.value() == s.markers) return "";
  return ": shard sum " +
         (s.shards.Fits() ? DecimalString(s.shards.value())
                          : std::string("beyond 128 bits")) +
         " != marker delta sum " + DecimalString(s.markers);
}

using core::Findings;

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

// Names the record a finding is about ("events: key 0a0b.. of counter
// "c" key "k""). Built only for a finding: Verify checks every record, and
// building it for each cost about a quarter of a clean Verify's time.
struct Where {
  const char* family;
  std::string_view key;
  const CounterInfo* counter;      // null until the key's counter is known
  const std::string* counter_key;  // null for a key of no keyed counter

  std::string operator()() const {
    std::string s = std::string(family) + ": key " + HexKey(key);
    if (counter != nullptr) s += " of counter " + Quote(counter->name);
    if (counter_key != nullptr) s += " key " + Quote(*counter_key);
    return s;
  }
};

// The record-level rule of every family is its decoders (the table's);
// on top, what one record says about another: shard and marker keys belong
// to a known counter (or an unfinished import), carry a key exactly when
// their counter is keyed, fit its shard count and buckets, and markers sit
// on their event's shard with the counter's expiry. Sums per named counter,
// and per key of a keyed counter, for the shards == markers check.
//
// A keyed counter's keys are judged one at a time: the shards and events
// families both sort by (counter id, key), and Verify walks them merged in
// that order (MergedWalk), so the sums of the current key are all the
// per-key state there is; a key is judged when the walk moves past it.
class FamilyChecks {
 public:
  FamilyChecks(Findings* findings, VerifyReport* report)
      : findings_(findings), report_(report) {}

  void AddCounter(const CounterInfo& c) {
    ++report_->counters;
    by_id_[c.id].info = &c;
  }
  const std::map<uint64_t, CounterSums>& sums() const { return by_id_; }

  // Reports every kProgressEvery records to `progress` (not owned; may be
  // empty), of `estimated_total`.
  void set_progress(const ProgressFn* progress, uint64_t estimated_total) {
    progress_ = progress;
    progress_report_.unit = "records";
    progress_report_.total = estimated_total;
    progress_report_.estimated = true;
  }
  void ReportProgress() {
    if (progress_ != nullptr && *progress_) (*progress_)(progress_report_);
  }

  void Check(const ColumnFamily& f, std::string_view key,
             std::string_view value) {
    FamilyRecord rec;
    const std::string bad = f.decode_key(key, &rec);
    CheckDecoded(f, key, value, bad, &rec);
  }

  // Check, with `rec` and `bad` from f.decode_key(key).
  void CheckDecoded(const ColumnFamily& f, std::string_view key,
                    std::string_view value, const std::string& bad_key,
                    FamilyRecord* rec) {
    if (++progress_report_.done % kProgressEvery == 0) ReportProgress();
    if (rec->kind == RecordKind::kShard) ++report_->shard_keys;
    if (rec->kind == RecordKind::kMarker) ++report_->markers;
    if (!bad_key.empty()) {
      findings_->Add(std::string(f.name) + ": malformed key " + HexKey(key) +
                     ": " + bad_key);
      return;
    }
    // Ids of unfinished imports (Catalog::BeginImport): their keys belong
    // to a counter that has not appeared yet, or to an import that died and
    // the next read-write open removes. Not findings.
    if (rec->kind == RecordKind::kImportNote)
      importing_.insert(rec->counter_id);
    CounterSums* owner = nullptr;
    Sums* sums = nullptr;
    Where where{f.name, key, nullptr, nullptr};
    if (rec->kind == RecordKind::kShard || rec->kind == RecordKind::kMarker ||
        rec->kind == RecordKind::kHold) {
      auto found = by_id_.find(rec->counter_id);
      if (found == by_id_.end()) {
        if (importing_.count(rec->counter_id) != 0) return;
        findings_->Add(where() + " belongs to no counter (id " +
                       std::to_string(rec->counter_id) + ")");
        return;
      }
      owner = &found->second;
      where.counter = owner->info;
      const bool has_key = !rec->counter_key.empty();
      if (has_key != owner->info->keyed) {
        // Counted in no sum: it follows the other kind's grammar, so the
        // sums it would join are not the ones it was written for.
        findings_->Add(where() +
                       (has_key ? " carries key " + Quote(rec->counter_key) +
                                      ", but the counter is not keyed"
                                : " carries no key, but the counter "
                                  "is keyed"));
        return;
      }
      if (has_key) where.counter_key = &rec->counter_key;
      if (rec->kind != RecordKind::kHold) {
        sums = has_key ? &KeyOf(owner, rec->counter_key) : &owner->sums;
      }
    }
    const std::string bad = f.decode_value(value, rec);
    if (!bad.empty()) {
      findings_->Add(where() + ": " + bad);
      if (sums != nullptr) sums->readable = false;
      return;
    }
    switch (rec->kind) {
      case RecordKind::kCounter:
        SawRecord(rec->counter);
        break;
      case RecordKind::kShard:
        Shard(*rec, where, *owner->info, sums);
        break;
      case RecordKind::kMarker:
        Marker(*rec, where, *owner->info, sums);
        break;
      case RecordKind::kHold:
        Hold(*rec, where, *owner->info);
        break;
      default:
        break;  // the decoders' rule is the whole check
    }
  }

  // Judges the key the walk is on; call when the walk ends.
  void FinishKeys() {
    if (key_owner_ == nullptr) return;
    const CounterSums& owner = *key_owner_;
    key_owner_ = nullptr;
    if (!judge_keys_ || !Judged(owner) || !key_sums_.readable) return;
    ++report_->keys_compared;
    const std::string mismatch = SumMismatch(key_sums_);
    if (!mismatch.empty()) {
      findings_->Add("counter " + Quote(owner.info->name) + " key " +
                     Quote(key_) + mismatch);
    }
  }

  // A scan stopped on damage: the sums of the key it was on and of every
  // later key are partial, so none of them is judged.
  void StopJudgingKeys() { judge_keys_ = false; }

 private:
  // Often enough to redraw a progress line several times a second, rarely
  // enough to cost nothing next to decoding the records.
  static constexpr uint64_t kProgressEvery = 4096;
  const ProgressFn* progress_ = nullptr;
  ProgressReport progress_report_;
  // The sums of key `key` of keyed counter `owner`, judging the previous
  // key first when this is another one.
  Sums& KeyOf(CounterSums* owner, const std::string& key) {
    if (owner != key_owner_ || key != key_) {
      FinishKeys();
      key_owner_ = owner;
      key_ = key;
      key_sums_ = Sums();
    }
    return key_sums_;
  }

  void SawRecord(const schema::CounterRecord& rec) {
    auto found = by_id_.find(rec.id);
    if (found != by_id_.end() && found->second.info->name == rec.name) {
      found->second.record_seen = true;
      found->second.flags = rec.flags;
    }
  }

  void Shard(const FamilyRecord& rec, const Where& where, const CounterInfo& c,
             Sums* sums) {
    const int64_t width = BucketWidthMs(c.bucket);
    if ((rec.bucket_ms != kNoBucket) != (width != 0) ||
        (width != 0 && rec.bucket_ms % width != 0)) {
      findings_->Add(where() + " does not fit its buckets (" +
                     BucketWidthName(c.bucket) + ")");
      return;
    }
    if (rec.shard >= c.shards) {
      findings_->Add(where() + ": shard " + std::to_string(rec.shard) +
                     " >= shard count " + std::to_string(c.shards));
    }
    if (rec.shard_state == ShardValue::kOverflowed) {
      findings_->Add(where() + ": overflowed (its value is unknown)");
      sums->readable = false;
      return;
    }
    sums->shards.Add(rec.shard_value);
    // A strict counter's one shard is its (key's) value.
    const CounterBounds& b = c.bounds;
    if (!WithinBounds(b, rec.shard_value)) {
      findings_->Add(where() + ": value " + DecimalString(rec.shard_value) +
                     " is outside the strict counter's bounds " +
                     (b.has_min ? std::to_string(b.min) : std::string()) +
                     ".." +
                     (b.has_max ? std::to_string(b.max) : std::string()));
    }
  }

  void Marker(const FamilyRecord& rec, const Where& where, const CounterInfo& c,
              Sums* sums) {
    const schema::MarkerRecord& m = rec.marker;
    // A pinned marker's shard came from an affinity key the marker does
    // not keep: only its range can be checked.
    if (m.shard >= c.shards ||
        (!m.pinned && m.shard != ShardOfKey(m.event_id, c.shards))) {
      findings_->Add(where() + ": marker disagrees with its shard hash");
    }
    if ((m.expires_at_ms != 0) != (c.dedupe_window_ms != 0)) {
      findings_->Add(where() + ": marker has expiry " +
                     std::to_string(m.expires_at_ms) +
                     ", which does not match the counter's dedupe window " +
                     std::to_string(c.dedupe_window_ms) + " ms");
    }
    // A reset's marker holds its answer on any counter (format 7).
    if (m.strict != c.bounds.any() && !m.answer.reset) {
      findings_->Add(where() + (m.strict
                                    ? ": a strict marker, but the counter "
                                      "has no bounds"
                                    : ": a sharded marker, but the counter "
                                      "is strict"));
    } else if (m.strict && m.answer.refused && m.delta != 0) {
      findings_->Add(where() + ": a refused event's marker counts delta " +
                     std::to_string(m.delta));
    }
    sums->markers += m.delta;
  }

  void Hold(const FamilyRecord& rec, const Where& where, const CounterInfo& c) {
    ++report_->reservations;
    if (!c.bounds.has_min || c.bucket != BucketWidth::kNone) {
      findings_->Add(where() +
                     ": a reservation, but the counter takes none "
                     "(not strict with a minimum, or bucketed)");
      return;
    }
    if (rec.hold_tag != kOpenHoldTag || now_ >= rec.hold.expires_at_ms) return;
    held_[{c.id, rec.counter_key}] += rec.hold.units;
  }

 public:
  // The time holds are judged by (Verify's now), and the units open holds
  // hold now per (counter id, key): each key's value must cover them above
  // its minimum (DbImpl::VerifyHolds' check).
  void set_now(int64_t now) { now_ = now; }
  const std::map<std::pair<uint64_t, std::string>, __int128>& held() const {
    return held_;
  }

 private:
  Findings* findings_;
  VerifyReport* report_;
  int64_t now_ = 0;
  std::map<std::pair<uint64_t, std::string>, __int128> held_;
  std::map<uint64_t, CounterSums> by_id_;
  std::set<uint64_t> importing_;
  // The key of a keyed counter the walk is on (none: key_owner_ null).
  CounterSums* key_owner_ = nullptr;
  std::string key_;
  Sums key_sums_;
  bool judge_keys_ = true;
};

// One family's iterator in a merged walk, with its current key decoded.
struct WalkSide {
  const ColumnFamily* family = nullptr;
  std::unique_ptr<rocksdb::Iterator> it;
  FamilyRecord rec;
  std::string bad;  // why the current key is malformed, or ""

  bool Valid() const { return it != nullptr && it->Valid(); }
  void Decode() {
    if (!Valid()) return;
    rec = FamilyRecord();
    bad = family->decode_key(it->key().ToStringView(), &rec);
  }
  // Where the current record sorts in (counter id, key) order; a malformed
  // key's parts are as far as its decoder got.
  std::pair<uint64_t, std::string_view> Position() const {
    return {rec.counter_id, rec.counter_key};
  }
};

// Walks families `a` and `b` (shards and events) as one sequence in
// (counter id, key) order, so each key of a keyed counter is complete when
// the walk leaves it. Both families sort that way: a keyed key is u64be(id)
// + key + 0x00 + ..., and keys hold no 0 byte, so the byte order of keys
// is the order of their records. Returns the scans' status.
Status MergedWalk(rocksdb::DB* db, const rocksdb::ReadOptions& ro,
                  const FamilyHandles& handles, const ColumnFamily& a,
                  const ColumnFamily& b, FamilyChecks* checks,
                  Findings* findings, bool* scan_stopped) {
  WalkSide sides[2];
  const ColumnFamily* families[2] = {&a, &b};
  for (int i = 0; i < 2; ++i) {
    sides[i].family = families[i];
    rocksdb::ColumnFamilyHandle* h = handles[families[i]->index];
    if (h == nullptr) continue;  // read-only, and the database lacks it
    sides[i].it.reset(db->NewIterator(ro, h));
    sides[i].it->SeekToFirst();
    sides[i].Decode();
  }
  while (sides[0].Valid() || sides[1].Valid()) {
    const int next =
        !sides[1].Valid() ||
                (sides[0].Valid() && sides[0].Position() <= sides[1].Position())
            ? 0
            : 1;
    WalkSide& s = sides[next];
    checks->CheckDecoded(*s.family, s.it->key().ToStringView(),
                         s.it->value().ToStringView(), s.bad, &s.rec);
    s.it->Next();
    // A side that stopped on damage leaves every later key partial.
    if (!s.it->Valid() && !s.it->status().ok()) checks->StopJudgingKeys();
    s.Decode();
  }
  checks->FinishKeys();
  for (WalkSide& s : sides) {
    if (s.it == nullptr) continue;
    Status scan =
        ScanStatus(s.it->status(), s.family->name, findings, scan_stopped);
    if (!scan.ok()) return scan;
  }
  return Status::OK();
}

}  // namespace

namespace {

// Every family of the table, meta first (the table's order): the counter
// records and import notes it holds are what the other families' keys are
// judged against. *stopped when a scan stopped on damage (reported).
Status ScanFamilies(rocksdb::DB* db, const rocksdb::ReadOptions& ro,
                    const FamilyHandles& handles, FamilyChecks* checks,
                    Findings* findings, bool* stopped) {
  const auto& table = ColumnFamilies();
  for (const ColumnFamily& f : table) {
    if (f.index == kEvents) continue;  // walked with shards
    if (f.index == kShards) {
      assert(table[kEvents - 1].index == kEvents);
      Status walk = MergedWalk(db, ro, handles, f, table[kEvents - 1], checks,
                               findings, stopped);
      if (!walk.ok()) return walk;
      continue;
    }
    rocksdb::ColumnFamilyHandle* h = handles[f.index];
    if (h == nullptr) continue;  // read-only, and the database lacks it
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(ro, h));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      checks->Check(f, it->key().ToStringView(), it->value().ToStringView());
    }
    Status scan = ScanStatus(it->status(), f.name, findings, stopped);
    if (!scan.ok()) return scan;
  }
  return Status::OK();
}

// Cross-record invariant: each key's value covers what its open
// reservations hold, above its minimum (value - held >= min). `read`
// reads a strict key's value at the scans' snapshot.
template <typename ReadValue>
Status CheckHeldCovered(const std::vector<CounterInfo>& counters,
                        const FamilyChecks& checks, const ReadValue& read,
                        Findings* findings) {
  for (const auto& [at, held] : checks.held()) {
    const CounterInfo* c = nullptr;
    for (const CounterInfo& info : counters) {
      if (info.id == at.first) c = &info;
    }
    if (c == nullptr) continue;  // reported as a hold of no counter
    int64_t value = 0;
    Status s = read(*c, at.second, &value);
    if (s.IsCorruption() || s.IsOutOfRange()) continue;  // reported
    if (!s.ok()) return s;
    if (static_cast<__int128>(value) - held < c->bounds.min) {
      findings->Add(CounterKeyNaming(c->name, at.second) + ": value " +
                    std::to_string(value) + " does not cover the " +
                    DecimalString(held) +
                    " units its open reservations hold above its minimum " +
                    std::to_string(c->bounds.min));
    }
  }
  return Status::OK();
}

// Cross-record invariant: shards == markers for once-only counters that
// keep their markers and buckets forever (Judged); a keyed counter's keys
// were judged one by one in the walk.
void CompareSums(const FamilyChecks& checks, VerifyReport* report,
                 Findings* findings) {
  for (const auto& [id, sums] : checks.sums()) {
    const CounterInfo& c = *sums.info;
    if (!Judged(sums) || !sums.sums.readable) continue;
    ++report->sums_compared;
    if (c.keyed) continue;
    const std::string mismatch = SumMismatch(sums.sums);
    if (!mismatch.empty()) findings->Add("counter " + Quote(c.name) + mismatch);
  }
}

}  // namespace

Status DbImpl::VerifyFileChecksums(const rocksdb::ReadOptions& ro,
                                   std::string* finding) {
  // Every block of every table file, also those no scan reads (filters,
  // indexes, blocks of deleted keys).
  rocksdb::Status files = db_->VerifyChecksum(ro);
  if (options_.read_only && files.IsPathNotFound()) {
    // The writer has compacted a table file away since this point; the
    // scans still check every block they read from it.
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
                          "checked them (" +
                          files.ToString() + "); Refresh and verify again");
    }
  }
  if (files.IsCorruption()) {
    *finding = "files: " + files.ToString();
    return Status::OK();
  }
  return files.ok() ? Status::OK() : FromRocks(files, "verify file checksums");
}

Status DbImpl::Verify(VerifyReport* report, const ProgressFn& progress) {
  *report = VerifyReport();
  Status s = CheckReads(kReadAll, "Verify");
  if (!s.ok()) return s;
  Findings findings(report);
  // Holding the catalog keeps creates and deletes out for the whole check,
  // so every key is judged against the counters of the snapshot's moment.
  Catalog::Reader catalog(catalog_.get());
  const std::vector<CounterInfo> counters = catalog.List();
  if (verify_hook_for_test_) verify_hook_for_test_();

  // One snapshot for all scans, so a concurrent batch is seen whole. A
  // read-only instance changes only on Refresh, which waits for this
  // check (it holds the catalog exclusively) and keeps every family at one
  // point (secondaries.cc): its reads are already one consistent point.
  rocksdb::ReadOptions ro;
  ro.total_order_seek = true;
  ro.verify_checksums = true;
  const SnapshotHold snapshot(db_.get(), options_.read_only);
  ro.snapshot = snapshot.get();
  std::string files;
  s = VerifyFileChecksums(ro, &files);
  if (!s.ok()) return s;
  if (!files.empty()) findings.Add(files);

  FamilyChecks checks(&findings, report);
  checks.set_now(clock_->NowMillis());
  const FamilyHandles handles = HandlesOf(handles_);
  if (progress) {
    uint64_t estimated = 0;
    for (rocksdb::ColumnFamilyHandle* h : handles) {
      if (h != nullptr) estimated += FamilyFigures(db_.get(), h).estimated_keys;
    }
    checks.set_progress(&progress, estimated);
    checks.ReportProgress();
  }
  for (const CounterInfo& c : counters) checks.AddCounter(c);
  bool scan_stopped = false;
  s = ScanFamilies(db_.get(), ro, handles, &checks, &findings, &scan_stopped);
  if (!s.ok()) return s;
  checks.ReportProgress();  // the last records

  auto read_value = [&](const CounterInfo& c, std::string_view key,
                        int64_t* value) {
    std::vector<int64_t> values;
    Status r = ReadStrictValues(c, {StrictSlot{key, kNoBucket}}, &values, ro);
    if (r.ok()) *value = values[0];
    return r;
  };
  s = CheckHeldCovered(counters, checks, read_value, &findings);
  // Not judged after a scan stopped on damage: its sums are partial.
  if (s.ok() && !scan_stopped) CompareSums(checks, report, &findings);
  return s;
}

}  // namespace tally::engine
