#include "engine/catalog.h"

#include <rocksdb/write_batch.h>

#include <algorithm>
#include <cassert>

#include "engine/rules.h"
#include "engine/coding.h"
#include "engine/counter_range.h"
#include "engine/format.h"
#include "util/random_id.h"
#include "tally/limits.h"
#include "util/rocks_status.h"

namespace tally::engine {
namespace {

// The format-1 fields of a counter record decode as in format 1; the
// format-2 fields default to 0 (no window, no buckets) in older records.
CounterInfo InfoOf(const schema::CounterRecord& rec) {
  CounterInfo info;
  info.name = rec.name;
  info.id = rec.id;
  info.shards = rec.shard_count;
  info.policy = static_cast<ShardPolicy>(rec.policy);
  info.schema_version = rec.schema_version;
  info.created_at_ms = rec.created_at_ms;
  info.flags = rec.flags;
  info.dedupe_window_ms = rec.dedupe_window_ms;
  info.bucket = static_cast<BucketWidth>(rec.bucket);
  info.retention_ms = rec.retention_ms;
  info.outbox = rec.outbox;
  info.keyed = rec.keyed;
  info.sliding = rec.sliding;
  info.bounds = CounterBounds{rec.has_min, rec.min_value, rec.has_max,
                              rec.max_value};
  return info;
}

// The inverse of InfoOf: the stored record of a counter.
schema::CounterRecord RecordOf(const CounterInfo& info) {
  schema::CounterRecord rec;
  rec.id = info.id;
  rec.name = info.name;
  rec.shard_count = info.shards;
  rec.policy = static_cast<uint8_t>(info.policy);
  rec.schema_version = info.schema_version;
  rec.created_at_ms = info.created_at_ms;
  rec.flags = info.flags;
  rec.dedupe_window_ms = info.dedupe_window_ms;
  rec.bucket = static_cast<uint8_t>(info.bucket);
  rec.retention_ms = info.retention_ms;
  rec.outbox = info.outbox;
  rec.keyed = info.keyed;
  rec.sliding = info.sliding;
  rec.has_min = info.bounds.has_min;
  rec.min_value = info.bounds.min;
  rec.has_max = info.bounds.has_max;
  rec.max_value = info.bounds.max;
  return rec;
}

// Pair assertions: what was encoded decodes to what was meant (debug builds).
[[maybe_unused]] bool HeaderReadsBack(const std::string& value,
                                      const schema::HeaderRecord& want) {
  schema::HeaderRecord got;
  return schema::DecodeHeader(value, &got).ok() &&
         got.format_version == want.format_version &&
         got.next_counter_id == want.next_counter_id;
}
[[maybe_unused]] bool CounterReadsBack(const std::string& value,
                                       const CounterInfo& want) {
  schema::CounterRecord got;
  return schema::DecodeCounter(value, &got).ok() && got.id == want.id &&
         got.name == want.name && got.shard_count == want.shards &&
         got.flags == want.flags;
}

}  // namespace

Catalog::Catalog(rocksdb::DB* db, const FamilyHandles& families,
                 wal::CommitPipeline* commit, const Clock* clock,
                 RetentionRules* retention)
    : db_(db),
      families_(families),
      meta_(families[kMeta]),
      commit_(commit),
      clock_(clock),
      retention_(retention) {}

void Catalog::PublishRetention() {
  RetentionRules::Map rules;
  for (const auto& [name, entry] : by_name_) {
    if (entry->bucket != BucketWidth::kNone && entry->retention_ms != 0) {
      rules.emplace(entry->id, RetentionRules::Rule{BucketWidthMs(entry->bucket),
                                                    entry->retention_ms});
    }
  }
  assert(rules.size() <= by_name_.size());
  retention_->Replace(std::move(rules));
}

Status Catalog::WriteFreshHeader() {
  assert(by_name_.empty());
  header_ = schema::HeaderRecord{kBaseFormatVersion, kFirstCounterId,
                                 clock_->NowMillis(), RandomHexId()};
  std::string value;
  schema::EncodeHeader(header_, &value);
  assert(HeaderReadsBack(value, header_));
  rocksdb::WriteBatch wb;
  rocksdb::Status rs = wb.Put(meta_, kHeaderKey, value);
  if (!rs.ok()) return FromRocks(rs, "write database header");
  return commit_->CommitDurable(&wb);
}

bool Catalog::HasFormat(uint32_t version) {
  ReaderLock guard(&lock_);
  return header_.format_version >= version;
}

Status Catalog::RequireFormat(uint32_t version) {
  if (HasFormat(version)) return Status::OK();  // the usual case, shared
  rocksdb::WriteBatch wb;
  return CommitRaisingFormat(version, &wb);
}

Status Catalog::Load(const std::string& path, bool read_only) {
  WriterLock guard(&lock_);
  return LoadLocked(path, read_only);
}

Status Catalog::MoveTo(const std::function<Status(Binding*)>& move,
                       const std::string& path) {
  WriterLock guard(&lock_);
  Binding b{db_, families_};
  Status s = move(&b);
  db_ = b.db;
  families_ = b.families;
  meta_ = families_[kMeta];
  if (!s.ok()) return s;
  assert(db_ != nullptr && families_[kMeta] != nullptr);
  return LoadLocked(path, /*read_only=*/true);
}

Status Catalog::LoadLocked(const std::string& path, bool read_only) {
  assert(db_ != nullptr && meta_ != nullptr);
  by_name_.clear();
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), meta_));
  it->SeekToFirst();
  if (!it->Valid()) {
    if (!it->status().ok()) return FromRocks(it->status(), "read meta");
    if (read_only) {
      return Status::NotFound("database " + path +
                              " has no header yet (still being created)");
    }
    return WriteFreshHeader();  // a new database
  }
  if (it->key() != rocksdb::Slice(kHeaderKey)) {
    return Status::Corruption("database " + path +
                              " has counter metadata but no header");
  }
  Status s = schema::DecodeHeader(it->value().ToStringView(), &header_);
  if (!s.ok()) return Status::Corruption("database " + path + ": " + s.message());
  if (header_.format_version > kFormatVersion) {
    return Status::NotSupported(
        "database " + path + " has format version " +
        std::to_string(header_.format_version) + "; this build of tally reads " +
        "versions up to " + std::to_string(kFormatVersion) + ": upgrade tally");
  }
  std::vector<uint64_t> unfinished_imports;
  for (it->Next(); it->Valid(); it->Next()) {
    const rocksdb::Slice key = it->key();
    // DbImpl reads these.
    if (key == rocksdb::Slice(kOutboxAckedKey)) continue;
    if (key == rocksdb::Slice(kTimeMarkKey)) continue;
    uint64_t import_id = 0;
    if (DecodeImportMetaKey(key.ToStringView(), &import_id)) {
      unfinished_imports.push_back(import_id);
      continue;
    }
    if (key.empty() || key[0] != kCounterKeyTag) {
      return Status::Corruption("database " + path + ": unknown meta key " +
                                HexKey(key.ToStringView()));
    }
    schema::CounterRecord rec;
    s = schema::DecodeCounter(it->value().ToStringView(), &rec);
    if (!s.ok()) {
      return Status::Corruption("database " + path + ": meta key " +
                                HexKey(key.ToStringView()) + ": " + s.message());
    }
    if (rec.name != key.ToStringView().substr(1) || rec.shard_count == 0 ||
        rec.shard_count > kMaxShards || rec.id == 0 ||
        rec.id >= header_.next_counter_id ||
        !ValidateSpec(SpecOf(InfoOf(rec))).ok()) {
      return Status::Corruption("database " + path + ": counter record " +
                                Quote(rec.name) + " is inconsistent");
    }
    auto entry = std::make_unique<Entry>(InfoOf(rec));
    assert(entry->id == rec.id && entry->name == rec.name);
    std::string_view view = entry->name;
    by_name_.emplace(view, std::move(entry));
  }
  assert(by_name_.empty() || header_.next_counter_id > kFirstCounterId);
  PublishRetention();
  s = FromRocks(it->status(), "read meta");
  // An import that died before its counter record: its counter never
  // appeared; drop what it wrote. (A read-only open leaves it to the writer.)
  if (s.ok() && !read_only && !unfinished_imports.empty()) {
    s = DropImports(unfinished_imports);
  }
  return s;
}

// The counter `info` describes, as created now.
CounterInfo NewInfo(std::string_view name, uint64_t id, const CounterSpec& spec,
                    int64_t created_at_ms, uint32_t flags) {
  CounterInfo info;
  info.name = std::string(name);
  info.id = id;
  info.shards = spec.shards;
  info.policy = spec.policy;
  info.schema_version = kCounterSchemaVersion;
  info.created_at_ms = created_at_ms;
  info.flags = flags;
  info.dedupe_window_ms = spec.dedupe_window_ms;
  info.bucket = spec.bucket;
  info.retention_ms = spec.retention_ms;
  info.outbox = spec.outbox;
  info.keyed = spec.keyed;
  info.sliding = spec.sliding;
  info.bounds = spec.bounds;
  return info;
}

Status Catalog::CheckNewCounter(std::string_view name,
                                const CounterSpec& spec) const {
  Status s = ValidateCounterName(name);
  if (s.ok()) s = ValidateSpec(spec);
  if (!s.ok()) return s;
  if (by_name_.count(name) != 0) {
    return Status::AlreadyExists("counter " + Quote(name) + " already exists");
  }
  if (by_name_.size() >= kMaxCounters) {
    return Status::InvalidArgument("the database holds " +
                                   std::to_string(by_name_.size()) +
                                   " counters, the limit (kMaxCounters)");
  }
  assert(!name.empty() && by_name_.size() < kMaxCounters);
  return Status::OK();
}

Status Catalog::CommitCounter(const CounterInfo& info,
                              schema::HeaderRecord next,
                              rocksdb::WriteBatch* wb) {
  // A fresh id, below the header's next one: no two counters share it.
  assert(info.id >= kFirstCounterId && info.id < next.next_counter_id);
  assert(by_name_.count(info.name) == 0);
  if (info.dedupe_window_ms != 0 || info.bucket != BucketWidth::kNone) {
    next.format_version = std::max(next.format_version, kFormatWindows);
  }
  if (info.outbox) {
    next.format_version = std::max(next.format_version, kFormatOutboxIdentity);
  }
  if (info.keyed) {
    next.format_version = std::max(next.format_version, kFormatKeyed);
  }
  if (info.bounds.any()) {
    next.format_version = std::max(next.format_version, kFormatStrict);
  }
  if (info.bounds.any() && info.bucket != BucketWidth::kNone) {
    next.format_version = std::max(next.format_version, kFormatQuota);
  }
  std::string header_value, counter_value;
  schema::EncodeHeader(next, &header_value);
  schema::EncodeCounter(RecordOf(info), &counter_value);
  assert(HeaderReadsBack(header_value, next));
  assert(CounterReadsBack(counter_value, info));
  rocksdb::Status rs = wb->Put(meta_, kHeaderKey, header_value);
  if (rs.ok()) rs = wb->Put(meta_, CounterMetaKey(info.name), counter_value);
  if (!rs.ok()) return FromRocks(rs, "create counter");
  Status s = commit_->CommitDurable(wb);
  if (!s.ok()) return s;

  header_ = std::move(next);
  auto entry = std::make_unique<Entry>(info);
  std::string_view view = entry->name;
  [[maybe_unused]] const bool added =
      by_name_.emplace(view, std::move(entry)).second;
  assert(added && by_name_.find(info.name)->second->id == info.id);
  if (info.retention_ms != 0) PublishRetention();
  return Status::OK();
}

Status Catalog::CommitRaisingFormat(uint32_t version, rocksdb::WriteBatch* wb) {
  WriterLock guard(&lock_);
  schema::HeaderRecord next = header_;
  if (next.format_version >= version && wb->Count() == 0) return Status::OK();
  if (next.format_version < version) {
    next.format_version = version;
    std::string value;
    schema::EncodeHeader(next, &value);
    rocksdb::Status rs = wb->Put(meta_, kHeaderKey, value);
    if (!rs.ok()) return FromRocks(rs, "raise the format version");
  }
  Status s = commit_->CommitDurable(wb);
  if (s.ok()) header_ = std::move(next);
  assert(!s.ok() || header_.format_version >= version);
  return s;
}

Status Catalog::Create(std::string_view name, const CounterSpec& spec) {
  WriterLock guard(&lock_);
  Status s = CheckNewCounter(name, spec);
  if (!s.ok()) return s;
  const CounterInfo info =
      NewInfo(name, header_.next_counter_id, spec, clock_->NowMillis(), 0);
  schema::HeaderRecord next = header_;
  next.next_counter_id = info.id + 1;
  // The id allocation and the counter record commit together: a crash can
  // never hand one id to two counters.
  rocksdb::WriteBatch wb;
  s = CommitCounter(info, std::move(next), &wb);
  assert(!s.ok() || header_.next_counter_id == info.id + 1);
  return s;
}

Result<uint64_t> Catalog::BeginImport(std::string_view name,
                                      const CounterSpec& spec) {
  WriterLock guard(&lock_);
  Status s = CheckNewCounter(name, spec);
  if (!s.ok()) return s;
  const uint64_t id = header_.next_counter_id;
  schema::HeaderRecord next = header_;
  next.next_counter_id = id + 1;
  std::string header_value;
  schema::EncodeHeader(next, &header_value);
  // The note commits with the allocation, and before any key of the id: a
  // crash leaves no key of the id without its note.
  rocksdb::WriteBatch wb;
  rocksdb::Status rs = wb.Put(meta_, kHeaderKey, header_value);
  if (rs.ok()) rs = wb.Put(meta_, ImportMetaKey(id), name);
  if (!rs.ok()) return FromRocks(rs, "begin import");
  s = commit_->Commit(&wb);
  if (!s.ok()) return s;
  header_ = std::move(next);
  assert(header_.next_counter_id == id + 1);
  return id;
}

Status Catalog::FinishImport(uint64_t id, std::string_view name,
                             const CounterSpec& spec, int64_t created_at_ms,
                             uint32_t flags) {
  WriterLock guard(&lock_);
  Status s = CheckNewCounter(name, spec);
  if (!s.ok()) return s;
  rocksdb::WriteBatch wb;
  rocksdb::Status rs = wb.Delete(meta_, ImportMetaKey(id));
  if (!rs.ok()) return FromRocks(rs, "finish import");
  return CommitCounter(NewInfo(name, id, spec, created_at_ms, flags), header_,
                       &wb);
}

Status Catalog::AbandonImport(uint64_t id) { return DropImports({id}); }

Status Catalog::DropImports(const std::vector<uint64_t>& ids) {
  rocksdb::WriteBatch wb;
  rocksdb::Status rs;
  for (uint64_t id : ids) {
    rs = wb.Delete(meta_, ImportMetaKey(id));
    if (rs.ok()) rs = DeleteCounterRanges(families_, id, &wb);
    if (!rs.ok()) return FromRocks(rs, "drop unfinished import");
  }
  return commit_->CommitDurable(&wb);
}

Status Catalog::Delete(std::string_view name,
                       const std::function<void()>& quiesce) {
  WriterLock guard(&lock_);
  if (quiesce) quiesce();
  auto found = by_name_.find(name);
  if (found == by_name_.end()) {
    return CounterNotFound(name);
  }
  // The record key by name; every other family by the table's rule
  // (engine/column_families.h).
  rocksdb::WriteBatch wb;
  rocksdb::Status rs = wb.Delete(meta_, CounterMetaKey(name));
  if (rs.ok()) rs = DeleteCounterRanges(families_, found->second->id, &wb);
  if (!rs.ok()) return FromRocks(rs, "delete counter");
  Status s = commit_->CommitDurable(&wb);
  if (!s.ok()) return s;
  const bool had_rule = found->second->retention_ms != 0;
  by_name_.erase(found);
  assert(by_name_.find(name) == by_name_.end());
  if (had_rule) PublishRetention();
  return Status::OK();
}

void Catalog::FlaggedRecord(const CounterInfo& entry, std::string* key,
                            std::string* value) {
  assert(entry.id >= kFirstCounterId && !entry.name.empty());
  schema::CounterRecord rec = RecordOf(entry);
  rec.flags |= kCounterFlagPlainIncrements;
  *key = CounterMetaKey(entry.name);
  schema::EncodeCounter(rec, value);
  assert(CounterReadsBack(*value, InfoOf(rec)));
}

Result<CounterInfo> Catalog::Describe(std::string_view name) {
  ReaderLock guard(&lock_);
  auto found = by_name_.find(name);
  if (found == by_name_.end()) {
    return CounterNotFound(name);
  }
  CounterInfo info = *found->second;
  assert(info.name == name && info.id >= kFirstCounterId);
  if (found->second->plain_recorded.load(std::memory_order_relaxed)) {
    info.flags |= kCounterFlagPlainIncrements;
  }
  return info;
}

std::vector<CounterInfo> Catalog::List() {
  ReaderLock guard(&lock_);
  return ListLocked();
}

std::vector<CounterInfo> Catalog::ListLocked() const {
  std::vector<CounterInfo> out;
  out.reserve(by_name_.size());
  for (const auto& kv : by_name_) {
    out.push_back(*kv.second);
    if (kv.second->plain_recorded.load(std::memory_order_relaxed)) {
      out.back().flags |= kCounterFlagPlainIncrements;
    }
  }
  std::sort(out.begin(), out.end(),
            [](const CounterInfo& a, const CounterInfo& b) {
              return a.name < b.name;
            });
  assert(out.size() == by_name_.size());
  return out;
}

}  // namespace tally::engine
