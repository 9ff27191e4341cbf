// The outbox: entries appended by increments of counters with
// CounterSpec::outbox (write_path.cc) or restored by ImportOutbox, read
// from a cursor without skipping one still committing, acknowledged
// (deleted) up to a cursor, and its status. docs/sync.md.

#include <rocksdb/iterator.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <set>
#include <utility>

#include "engine/coding.h"
#include "engine/db_impl.h"
#include "engine/family_record.h"
#include "engine/format.h"
#include "engine/outbox_run.h"
#include "util/random_id.h"
#include "engine/rules.h"
#include "engine/write_plan.h"
#include "schema/records.h"
#include "tally/limits.h"
#include "util/rocks_status.h"

namespace tally::engine {
namespace {

void EncodeSeq(uint64_t seq, char out[8]) { EncodeFixed64BE(seq, out); }

// One stored entry. Entries of format 2 have no origin: theirs is the
// database id, and their seq there is their seq here.
Status DecodeEntry(const rocksdb::Slice& key, const rocksdb::Slice& value,
                   const std::string& db_id, OutboxEntry* out,
                   uint64_t* settled) {
  // The outbox family's decoders (engine/decode_outbox.cc) are its rule.
  FamilyRecord decoded;
  std::string bad = DecodeOutboxKey(key.ToStringView(), &decoded);
  if (bad.empty() && decoded.kind != RecordKind::kOutboxEntry) {
    bad = "it is the settled record, not an entry";
  }
  if (bad.empty()) bad = DecodeOutboxValue(value.ToStringView(), &decoded);
  if (!bad.empty()) {
    return Status::Corruption("outbox entry " + HexKey(key.ToStringView()) +
                              ": " + bad);
  }
  schema::OutboxRecord& rec = decoded.outbox;
  out->seq = rec.seq;
  out->counter = std::move(rec.counter);
  out->key = std::move(rec.key);
  out->event_id = std::move(rec.event_id);
  out->delta = rec.delta;
  out->time_ms = rec.time_ms;
  out->origin = rec.origin.empty() ? db_id : std::move(rec.origin);
  out->origin_seq = rec.origin_seq == 0 ? rec.seq : rec.origin_seq;
  if (settled != nullptr) *settled = rec.settled;
  return Status::OK();
}

bool IsSettledKey(const rocksdb::Slice& key) {
  return key.size() == 8 && DecodeFixed64BE(key.data()) == kOutboxSettledSeq;
}

}  // namespace

Status DbImpl::ReadOutboxCursors(const rocksdb::ReadOptions& ro,
                                 rocksdb::Iterator* it, uint64_t* last_seq,
                                 uint64_t* acked_through, uint64_t* settled) {
  uint64_t acked = 0;
  std::string value;
  rocksdb::Status rs = db_->Get(ro, meta_, kOutboxAckedKey, &value);
  if (rs.ok()) {
    if (value.size() != 8) {
      return Status::Corruption("database " + path_ +
                                ": the outbox cursor is malformed");
    }
    acked = DecodeFixed64BE(value.data());
  } else if (!rs.IsNotFound()) {
    return FromRocks(rs, "read the outbox cursor");
  }
  uint64_t last = acked, recorded = 0;
  it->SeekToFirst();
  if (it->Valid() && IsSettledKey(it->key())) {
    if (it->value().size() != 8) {
      return Status::Corruption("database " + path_ +
                                ": the outbox's settled record is malformed");
    }
    recorded = DecodeFixed64BE(it->value().data());
  }
  it->SeekToLast();
  if (it->Valid() && !IsSettledKey(it->key())) {
    if (it->key().size() != 8) {
      return Status::Corruption("database " + path_ + ": outbox key " +
                                HexKey(it->key().ToStringView()) +
                                " is malformed");
    }
    last = std::max(last, DecodeFixed64BE(it->key().data()));
  }
  Status s = FromRocks(it->status(), "read the outbox");
  if (!s.ok()) return s;
  *last_seq = last;
  *acked_through = acked;
  *settled = recorded;
  return Status::OK();
}

Status DbImpl::LoadOutbox() {
  outbox_origin_ = RandomHexId();
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), outbox_));
  uint64_t last, acked, recorded;
  Status s = ReadOutboxCursors(rocksdb::ReadOptions(), it.get(), &last, &acked,
                               &recorded);
  if (!s.ok()) return s;
  it.reset();
  // Seqs up to a recorded watermark are settled for readers: never hand
  // them out again, even where their entries are gone.
  outbox_seq_.Reset(std::max(last, recorded), acked);
  bool any_outbox = last > acked;
  {
    Catalog::Reader catalog(catalog_.get());
    catalog.ForEach([&any_outbox](const Catalog::Entry& c) {
      any_outbox = any_outbox || c.outbox;
    });
  }
  // This build writes entries with origins (format 3): raise the header
  // before any, so an older tally cannot misread them.
  if (any_outbox) s = catalog_->RequireFormat(kFormatOutboxIdentity);
  // Nothing is in flight now: every seq <= last is committed or dead. Say
  // so, or a read-only reader could wait forever behind a dead one.
  if (s.ok() && last > acked && recorded < last) s = RecordOutboxSettled();
  return s;
}

Status DbImpl::RecordOutboxSettled() {
  MutexLock lock(&outbox_settled_mu_);
  char key[8], value[8];
  EncodeSeq(kOutboxSettledSeq, key);
  EncodeSeq(outbox_seq_.Watermark(), value);
  rocksdb::WriteBatch wb;
  rocksdb::Status rs =
      wb.Put(outbox_, rocksdb::Slice(key, 8), rocksdb::Slice(value, 8));
  if (!rs.ok()) return FromRocks(rs, "record the outbox watermark");
  return commit_->Commit(&wb);
}

void DbImpl::OutboxRunFailed() {
  // Best effort, on a path that already failed: if this write fails too,
  // the database is failing and the next open records the watermark.
  Status s = RecordOutboxSettled();
  static_cast<void>(s);
}

Status DbImpl::AddOutboxEntry(rocksdb::WriteBatch* wb, uint64_t seq,
                              uint64_t settled, const CounterInfo& c,
                              std::string_view counter_key,
                              std::string_view event_id, int64_t delta,
                              int64_t time_ms, std::string* scratch) {
  char key[8];
  EncodeSeq(seq, key);
  schema::OutboxFields f;
  f.seq = seq;
  f.counter = c.name;
  f.key = counter_key;
  f.event_id = event_id;
  f.delta = delta;
  f.time_ms = time_ms;
  f.origin = outbox_origin_;
  f.settled = settled;
  schema::EncodeOutbox(f, scratch);
  return FromRocks(
      wb->Put(outbox_, rocksdb::Slice(key, sizeof key), *scratch),
      "add outbox entry");
}

Result<std::vector<OutboxEntry>> DbImpl::ReadOutbox(uint64_t after_seq,
                                                    size_t limit) {
  Status reads = CheckReads(kReadOutbox, "ReadOutbox");
  if (!reads.ok()) return reads;
  if (limit < 1 || limit > kMaxOutboxRead) {
    return Status::InvalidArgument("outbox read limit " +
                                   std::to_string(limit) + " is outside 1.." +
                                   std::to_string(kMaxOutboxRead));
  }
  std::vector<OutboxEntry> out;
  Catalog::Reader view(catalog_.get());  // read-only: Refresh may swap db_
  if (outbox_ == nullptr) return out;  // an old database: no outbox yet
  Result<std::string> db_id_or = DatabaseId();
  if (!db_id_or.ok()) return db_id_or.status();
  const std::string& db_id = *db_id_or;
  // A writer reads its watermark before it makes the iterator: every seq
  // at or below it has settled, so each committed one is in the view (read
  // after the iterator, a seq committed in between would be stepped over
  // as if dead).
  const uint64_t writer_settled =
      options_.read_only ? 0 : outbox_seq_.Watermark();
  // One iterator: the cursors and the entries come from one view.
  rocksdb::ReadOptions ro;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, outbox_));
  // `settled`: every seq <= it is committed or dead, so a missing one may
  // be stepped over. A writer knows it and stops there. A read-only reader
  // takes the best proof its view holds: the acknowledged cursor, the
  // recorded watermark and the watermark the newest entry was reserved
  // under (watermarks only grow, so the newest is the largest); it returns
  // entries past that only while their seqs follow on without a gap.
  uint64_t settled, through;
  if (!options_.read_only) {
    settled = through = writer_settled;
  } else {
    uint64_t last, acked, recorded, newest = 0;
    Status s = ReadOutboxCursors(ro, it.get(), &last, &acked, &recorded);
    if (!s.ok()) return s;
    it->SeekToLast();
    if (it->Valid() && !IsSettledKey(it->key())) {
      OutboxEntry e;
      s = DecodeEntry(it->key(), it->value(), db_id, &e, &newest);
      if (!s.ok()) return s;
    }
    settled = std::max({acked, recorded, newest});
    through = UINT64_MAX;
  }
  if (after_seq >= through) return out;
  char start[8];
  EncodeSeq(after_seq + 1, start);
  uint64_t prev = after_seq;
  for (it->Seek(rocksdb::Slice(start, sizeof start));
       it->Valid() && out.size() < limit; it->Next()) {
    OutboxEntry e;
    Status s = DecodeEntry(it->key(), it->value(), db_id, &e, nullptr);
    if (!s.ok()) return s;
    if (e.seq > through) break;
    // A missing seq before e not proven settled may still be committing.
    if (e.seq > prev + 1 && e.seq - 1 > settled) break;
    prev = e.seq;
    out.push_back(std::move(e));
  }
  Status s = FromRocks(it->status(), "read the outbox");
  if (!s.ok()) return s;
  return out;
}

Status DbImpl::AckOutbox(uint64_t through_seq) {
  Status s = CheckWritable();
  if (!s.ok()) return s;
  const uint64_t watermark = outbox_seq_.Watermark();
  if (through_seq > watermark) {
    return Status::InvalidArgument(
        "outbox seq " + std::to_string(through_seq) +
        " cannot be acknowledged: the last settled entry is " +
        std::to_string(watermark));
  }
  if (through_seq <= outbox_seq_.acked()) return Status::OK();  // done before
  char begin[8], end[8], cursor[8];
  EncodeSeq(kOutboxSettledSeq + 1, begin);  // the settled record stays
  EncodeSeq(through_seq + 1, end);
  EncodeSeq(through_seq, cursor);
  rocksdb::WriteBatch wb;
  rocksdb::Status rs = wb.DeleteRange(outbox_, rocksdb::Slice(begin, 8),
                                      rocksdb::Slice(end, 8));
  if (rs.ok()) rs = wb.Put(meta_, kOutboxAckedKey, rocksdb::Slice(cursor, 8));
  if (!rs.ok()) return FromRocks(rs, "acknowledge the outbox");
  // Synced like other metadata changes. Were a crash to undo it, the
  // entries would come back and the next sync would resend them, which a
  // hub answers as duplicates.
  s = commit_->CommitDurable(&wb);
  if (!s.ok()) return s;
  outbox_seq_.Acked(through_seq);
  return Status::OK();
}

Status DbImpl::ImportOutbox(const std::vector<OutboxEntry>& entries) {
  Status s = CheckWritable();
  if (!s.ok()) return s;
  if (entries.empty()) return Status::OK();
  if (entries.size() > kMaxBatchOps) {
    return Status::InvalidArgument(std::to_string(entries.size()) +
                                   " outbox entries exceed the limit of " +
                                   std::to_string(kMaxBatchOps) + " per call");
  }
  Catalog::Reader catalog(catalog_.get());
  std::set<std::pair<std::string_view, uint64_t>> seen;
  for (size_t i = 0; i < entries.size(); ++i) {
    const OutboxEntry& e = entries[i];
    const std::string what = "outbox entry " + std::to_string(i) + " (" +
                             e.origin + "/" + std::to_string(e.origin_seq) +
                             "): ";
    const Catalog::Entry* c = catalog.Find(e.counter);
    if (c == nullptr) {
      return CounterNotFound(e.counter).WithContext("outbox entry " +
                                                    std::to_string(i));
    }
    // A keyed counter's entry carries its key, a named counter's none.
    s = FindCounterRef(catalog, CounterRef(e.counter, e.key), KeyUse::kOneKey,
                       &c);
    if (!s.ok()) return Status::InvalidArgument(what + s.message());
    if (!c->outbox) {
      return Status::InvalidArgument(what + "counter " + Quote(c->name) +
                                     " has no outbox");
    }
    s = ValidateDelta(e.delta);
    if (s.ok() && !e.event_id.empty()) s = ValidateEventId(e.event_id);
    if (!s.ok()) return Status::InvalidArgument(what + s.message());
    if (!IsHexId(e.origin) || e.origin_seq == 0) {
      return Status::InvalidArgument(
          what +
          "an origin is 32 lowercase hex characters and its seq is "
          ">= 1");
    }
    if (!seen.emplace(e.origin, e.origin_seq).second) {
      return Status::InvalidArgument(what + "appears twice in one call");
    }
  }
  OutboxRun run(this);
  s = run.Reserve(entries.size(), options_.outbox_max_entries);
  if (!s.ok()) return s;
  rocksdb::WriteBatch wb;
  std::string value;
  for (size_t i = 0; i < entries.size(); ++i) {
    const OutboxEntry& e = entries[i];
    const uint64_t seq = run.first() + i;
    char key[8];
    EncodeSeq(seq, key);
    schema::OutboxFields f;
    f.seq = seq;
    f.counter = e.counter;
    f.key = e.key;
    f.event_id = e.event_id;
    f.delta = e.delta;
    f.time_ms = e.time_ms;
    f.origin = e.origin;
    f.origin_seq = e.origin_seq;
    f.settled = run.settled();
    schema::EncodeOutbox(f, &value);
    rocksdb::Status rs =
        wb.Put(outbox_, rocksdb::Slice(key, sizeof key), value);
    if (!rs.ok()) return FromRocks(rs, "import outbox entries");
  }
  s = commit_->CommitDurable(&wb);
  if (s.ok()) run.Committed();
  return s;
}

Result<OutboxStatus> DbImpl::GetOutboxStatus() {
  Status reads = CheckReads(kReadOutbox, "GetOutboxStatus");
  if (!reads.ok()) return reads;
  OutboxStatus st;
  Catalog::Reader view(catalog_.get());  // read-only: Refresh may swap db_
  if (outbox_ == nullptr) return st;
  rocksdb::ReadOptions ro;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, outbox_));
  if (options_.read_only) {
    // No sequencer here: the stored cursors, as of the last catch-up.
    uint64_t recorded;
    Status s = ReadOutboxCursors(ro, it.get(), &st.last_seq, &st.acked_through,
                                 &recorded);
    if (!s.ok()) return s;
  } else {
    st.acked_through = outbox_seq_.acked();
    st.last_seq = outbox_seq_.last();
  }
  st.entries = st.last_seq - st.acked_through;
  char first_key[8];
  EncodeSeq(kOutboxSettledSeq + 1, first_key);
  it->Seek(rocksdb::Slice(first_key, sizeof first_key));
  if (it->Valid()) {
    OutboxEntry first;
    Result<std::string> db_id = DatabaseId();
    if (!db_id.ok()) return db_id.status();
    Status s = DecodeEntry(it->key(), it->value(), *db_id, &first, nullptr);
    if (!s.ok()) return s;
    st.oldest_time_ms = first.time_ms;
    st.age_ms = std::max<int64_t>(0, clock_->NowMillis() - first.time_ms);
  }
  Status s = FromRocks(it->status(), "read the outbox");
  if (!s.ok()) return s;
  return st;
}

Result<std::string> DbImpl::DatabaseId() {
  Catalog::Reader catalog(catalog_.get());
  return catalog.header().db_id;
}

}  // namespace tally::engine
