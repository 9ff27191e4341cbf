// Import: restoring a counter from an export (counterctl export/import)
// exactly, shard values and markers, without counting anything twice, and
// whole or not at all (Catalog::BeginImport/FinishImport).

#include <rocksdb/write_batch.h>

#include <utility>

#include "core/import_checks.h"
#include "engine/rules.h"
#include "engine/coding.h"
#include "engine/db_impl.h"
#include "engine/format.h"
#include "engine/write_plan.h"
#include "schema/records.h"
#include "tally/limits.h"
#include "util/rocks_status.h"

namespace tally::engine {
namespace {

// Writes an import's values and markers under a counter id that no
// counter record names yet (nothing else reads or writes its keys, so they
// need no event locks and no existence checks), in WriteBatches of at most
// kMaxBatchOps operations.
class ImportWriter {
 public:
  ImportWriter(uint64_t id, rocksdb::ColumnFamilyHandle* shards,
               rocksdb::ColumnFamilyHandle* events, wal::CommitPipeline* c)
      : id_(id), shards_(shards), events_(events), commit_(c) {}

  // One key's values (or the named counter's: `k` empty).
  Status Values(std::string_view k, const std::vector<int64_t>& v) {
    const KeyPrefix prefix(id_, k);
    bool stored = false;
    for (uint32_t i = 0; i < v.size(); ++i) {
      if (v[i] == 0) continue;
      Status s = Merge(prefix, i, v[i]);
      if (!s.ok()) return s;
      stored = true;
    }
    // A key whose every value is 0 still gets its shard 0 (as 0), so that
    // it exists as it did in the export (ListKeys lists it).
    if (!stored && prefix.keyed()) return Merge(prefix, 0, 0);
    return Status::OK();
  }

  Status Marker(const MarkerInfo& m) {
    Status s = Room();
    if (!s.ok()) return s;
    EncodeMarkerKeyOf(KeyPrefix(id_, m.key), m.event_id, &marker_key_);
    const schema::StrictAnswer answer{m.refused,        m.asked,
                                      m.value,          m.window_ends_ms,
                                      m.remaining,      m.reset,
                                      m.remaining_kept};
    schema::EncodeMarker(m.event_id, id_, m.shard, m.delta, m.created_at_ms,
                         &value_, m.expires_at_ms, m.pinned,
                         m.strict ? &answer : nullptr);
    rocksdb::Status rs = wb_.Put(events_, marker_key_, value_);
    if (!rs.ok()) return FromRocks(rs, "import markers");
    ++ops_;
    return Status::OK();
  }

  // Commits what is batched.
  Status Flush() {
    if (ops_ == 0) return Status::OK();
    Status s = commit_->Commit(&wb_);
    wb_.Clear();
    ops_ = 0;
    return s;
  }

 private:
  // A full batch is committed before the next operation.
  Status Room() { return ops_ == kMaxBatchOps ? Flush() : Status::OK(); }

  Status Merge(const KeyPrefix& prefix, uint32_t shard, int64_t value) {
    Status s = Room();
    if (!s.ok()) return s;
    char key[kMaxShardKeyBytes];
    char operand[kValueBytes];
    const size_t size = EncodeShardKeyOf(prefix, kNoBucket, shard, key);
    EncodeInt64(value, operand);
    rocksdb::Status rs = wb_.Merge(shards_, rocksdb::Slice(key, size),
                                   rocksdb::Slice(operand, sizeof operand));
    if (!rs.ok()) return FromRocks(rs, "import shard");
    ++ops_;
    return Status::OK();
  }

  const uint64_t id_;
  rocksdb::ColumnFamilyHandle* const shards_;
  rocksdb::ColumnFamilyHandle* const events_;
  wal::CommitPipeline* const commit_;
  rocksdb::WriteBatch wb_;
  size_t ops_ = 0;
  std::string marker_key_, value_;
};

}  // namespace

Status DbImpl::ImportCounter(const CounterImport& im) {
  Status s = CheckWritable();
  if (s.ok()) s = ValidateCounterName(im.info.name);
  if (s.ok()) s = ValidateImport(im);
  if (!s.ok()) return s;
  const CounterInfo& c = im.info;
  const CounterSpec spec = SpecOf(c);
  Result<uint64_t> id = catalog_->BeginImport(c.name, spec);
  if (!id.ok()) return id.status();
  ImportWriter writer(*id, shards_, events_, commit_.get());
  s = writer.Values({}, im.shard_values);
  for (size_t k = 0; s.ok() && k < im.keys.size(); ++k) {
    s = writer.Values(im.keys[k].key, im.keys[k].shard_values);
  }
  for (size_t m = 0; s.ok() && m < im.markers.size(); ++m) {
    s = writer.Marker(im.markers[m]);
  }
  if (s.ok()) s = writer.Flush();
  if (s.ok()) {
    s = catalog_->FinishImport(*id, c.name, spec, c.created_at_ms, c.flags);
  }
  if (!s.ok()) {
    // Best effort: what is left behind is removed at the next open.
    (void)catalog_->AbandonImport(*id);
  }
  return s;
}

}  // namespace tally::engine
