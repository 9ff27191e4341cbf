// The outbox: entries appended by increments of counters with
// CounterSpec::outbox (write_path.cc), read from a cursor, acknowledged
// (deleted) up to a cursor, and its status. docs/sync.md.

#include <rocksdb/iterator.h>
#include <rocksdb/write_batch.h>

#include "engine/coding.h"
#include "engine/db_impl.h"
#include "engine/format.h"
#include "schema/records.h"
#include "tally/limits.h"
#include "wal/rocks_status.h"

namespace tally::engine {
namespace {

void EncodeSeq(uint64_t seq, char out[8]) { EncodeFixed64BE(seq, out); }

Status DecodeEntry(const rocksdb::Slice& key, const rocksdb::Slice& value,
                   OutboxEntry* out) {
  schema::OutboxRecord rec;
  Status s = schema::DecodeOutbox(value.ToStringView(), &rec);
  if (s.ok() && (key.size() != 8 || DecodeFixed64BE(key.data()) != rec.seq)) {
    s = Status::Corruption("its key does not hold its seq");
  }
  if (!s.ok()) {
    return Status::Corruption("outbox entry " + HexKey(key.ToStringView()) +
                              ": " + s.message());
  }
  out->seq = rec.seq;
  out->counter = std::move(rec.counter);
  out->event_id = std::move(rec.event_id);
  out->delta = rec.delta;
  out->time_ms = rec.time_ms;
  return Status::OK();
}

}  // namespace

Status DbImpl::ReadOutboxCursors(uint64_t* last_seq, uint64_t* acked_through) {
  uint64_t acked = 0;
  std::string value;
  rocksdb::Status rs =
      db_->Get(rocksdb::ReadOptions(), meta_, kOutboxAckedKey, &value);
  if (rs.ok()) {
    if (value.size() != 8) {
      return Status::Corruption("database " + path_ +
                                ": the outbox cursor is malformed");
    }
    acked = DecodeFixed64BE(value.data());
  } else if (!rs.IsNotFound()) {
    return wal::FromRocks(rs, "read the outbox cursor");
  }
  uint64_t last = acked;
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), outbox_));
  it->SeekToLast();
  if (it->Valid()) {
    if (it->key().size() != 8) {
      return Status::Corruption("database " + path_ + ": outbox key " +
                                HexKey(it->key().ToStringView()) +
                                " is malformed");
    }
    last = std::max(last, DecodeFixed64BE(it->key().data()));
  }
  Status s = wal::FromRocks(it->status(), "read the outbox");
  if (!s.ok()) return s;
  *last_seq = last;
  *acked_through = acked;
  return Status::OK();
}

Status DbImpl::LoadOutbox() {
  uint64_t last, acked;
  Status s = ReadOutboxCursors(&last, &acked);
  if (s.ok()) outbox_seq_.Reset(last, acked);
  return s;
}

Status DbImpl::AddOutboxEntry(rocksdb::WriteBatch* wb, uint64_t seq,
                              const CounterInfo& c, std::string_view event_id,
                              int64_t delta, int64_t time_ms,
                              std::string* scratch) {
  char key[8];
  EncodeSeq(seq, key);
  schema::EncodeOutbox(seq, c.name, event_id, delta, time_ms, scratch);
  return wal::FromRocks(
      wb->Put(outbox_, rocksdb::Slice(key, sizeof key), *scratch),
      "add outbox entry");
}

Result<std::vector<OutboxEntry>> DbImpl::ReadOutbox(uint64_t after_seq,
                                                    size_t limit) {
  if (limit < 1 || limit > kMaxOutboxRead) {
    return Status::InvalidArgument("outbox read limit " +
                                   std::to_string(limit) + " is outside 1.." +
                                   std::to_string(kMaxOutboxRead));
  }
  std::vector<OutboxEntry> out;
  Catalog::Reader view(catalog_.get());  // read-only: Refresh may swap db_
  if (outbox_ == nullptr) return out;  // an old database: no outbox yet
  // A writer stops at the watermark; a read-only instance sees whole
  // batches only, so everything it sees is settled.
  const uint64_t through =
      options_.read_only ? UINT64_MAX : outbox_seq_.Watermark();
  if (after_seq >= through) return out;
  char start[8];
  EncodeSeq(after_seq + 1, start);
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), outbox_));
  for (it->Seek(rocksdb::Slice(start, sizeof start));
       it->Valid() && out.size() < limit; it->Next()) {
    OutboxEntry e;
    Status s = DecodeEntry(it->key(), it->value(), &e);
    if (!s.ok()) return s;
    if (e.seq > through) break;
    out.push_back(std::move(e));
  }
  Status s = wal::FromRocks(it->status(), "read the outbox");
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
  EncodeSeq(0, begin);
  EncodeSeq(through_seq + 1, end);
  EncodeSeq(through_seq, cursor);
  rocksdb::WriteBatch wb;
  rocksdb::Status rs = wb.DeleteRange(outbox_, rocksdb::Slice(begin, 8),
                                      rocksdb::Slice(end, 8));
  if (rs.ok()) rs = wb.Put(meta_, kOutboxAckedKey, rocksdb::Slice(cursor, 8));
  if (!rs.ok()) return wal::FromRocks(rs, "acknowledge the outbox");
  // Synced like other metadata changes. Were a crash to undo it, the
  // entries would come back and the next sync would resend them, which a
  // hub answers as duplicates.
  s = commit_->CommitDurable(&wb);
  if (!s.ok()) return s;
  outbox_seq_.Acked(through_seq);
  return Status::OK();
}

Result<OutboxStatus> DbImpl::GetOutboxStatus() {
  OutboxStatus st;
  Catalog::Reader view(catalog_.get());  // read-only: Refresh may swap db_
  if (outbox_ == nullptr) return st;
  if (options_.read_only) {
    // No sequencer here: the stored cursors, as of the last catch-up.
    Status s = ReadOutboxCursors(&st.last_seq, &st.acked_through);
    if (!s.ok()) return s;
  } else {
    st.acked_through = outbox_seq_.acked();
    st.last_seq = outbox_seq_.last();
  }
  st.entries = st.last_seq - st.acked_through;
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), outbox_));
  it->SeekToFirst();
  if (it->Valid()) {
    OutboxEntry first;
    Status s = DecodeEntry(it->key(), it->value(), &first);
    if (!s.ok()) return s;
    st.oldest_time_ms = first.time_ms;
    st.age_ms = std::max<int64_t>(0, clock_->NowMillis() - first.time_ms);
  }
  Status s = wal::FromRocks(it->status(), "read the outbox");
  if (!s.ok()) return s;
  return st;
}

Result<std::string> DbImpl::DatabaseId() {
  Catalog::Reader catalog(catalog_.get());
  return catalog_->header().db_id;
}

}  // namespace tally::engine
