// Import: restoring a counter from an export (counterctl export/import)
// exactly, shard values and markers, without counting anything twice, and
// whole or not at all (Catalog::BeginImport/FinishImport).

#include <rocksdb/write_batch.h>

#include <unordered_set>

#include "engine/coding.h"
#include "engine/db_impl.h"
#include "engine/format.h"
#include "engine/shard_picker.h"
#include "engine/validate.h"
#include "schema/records.h"
#include "tally/limits.h"
#include "util/rocks_status.h"

namespace tally::engine {
namespace {

// Checks every value and marker of `im` against its counter, before
// anything is written.
Status ValidateImport(const CounterImport& im) {
  const CounterInfo& c = im.info;
  if ((c.flags & ~kCounterFlagPlainIncrements) != 0) {
    return Status::InvalidArgument(
        "counter " + Quote(c.name) + ": flags " + std::to_string(c.flags) +
        " sets reserved bits (only bit 0, plain increments, is defined)");
  }
  Status s = ValidateSpec(SpecOf(c));
  if (!s.ok()) return s;
  if (!im.shard_values.empty() && im.shard_values.size() != c.shards) {
    return Status::InvalidArgument(
        "counter " + Quote(c.name) + ": " +
        std::to_string(im.shard_values.size()) + " shard values for its " +
        std::to_string(c.shards) + " shards (give one per shard, or none)");
  }
  for (size_t i = 0; i < im.shard_values.size(); ++i) {
    if (im.shard_values[i] == 0) continue;
    if (im.shard_values[i] < kMinDelta) {  // the overflow mark
      return Status::InvalidArgument("counter " + Quote(c.name) + ": shard " +
                                     std::to_string(i) + " value " +
                                     std::to_string(im.shard_values[i]) +
                                     " is reserved (the smallest accepted is " +
                                     std::to_string(kMinDelta) + ")");
    }
    if (c.bucket != BucketWidth::kNone) {
      return Status::NotSupported("counter " + Quote(c.name) +
                                  " has time buckets; importing bucketed "
                                  "shard values is not supported");
    }
  }
  std::unordered_set<std::string_view> seen;
  for (size_t i = 0; i < im.markers.size(); ++i) {
    const MarkerInfo& m = im.markers[i];
    s = ValidateEventId(m.event_id);
    if (s.ok()) s = ValidateDelta(m.delta);
    if (!s.ok()) {
      return Status::InvalidArgument("marker " + std::to_string(i) + ": " +
                                     s.message());
    }
    const uint32_t hashed = ShardOfHash(StableHash(m.event_id), c.shards);
    if (m.pinned && m.shard >= c.shards) {
      return Status::InvalidArgument("marker " + Quote(m.event_id) +
                                     " says shard " + std::to_string(m.shard) +
                                     ", outside counter " + Quote(c.name) +
                                     "'s 0.." + std::to_string(c.shards - 1));
    }
    if (!m.pinned && m.shard != hashed) {
      return Status::InvalidArgument("marker " + Quote(m.event_id) +
                                     " says shard " + std::to_string(m.shard) +
                                     ", but its event id hashes to shard " +
                                     std::to_string(hashed));
    }
    if ((m.expires_at_ms != 0) != (c.dedupe_window_ms != 0) ||
        m.expires_at_ms < 0) {
      return Status::InvalidArgument(
          "marker " + Quote(m.event_id) + " has expiry " +
          std::to_string(m.expires_at_ms) + " ms, but counter " +
          Quote(c.name) + " has dedupe window " +
          std::to_string(c.dedupe_window_ms) +
          " ms (an expiry is > 0 exactly when the window is)");
    }
    if (!seen.insert(m.event_id).second) {
      return Status::InvalidArgument("marker " + Quote(m.event_id) +
                                     " appears twice in one import");
    }
  }
  return Status::OK();
}

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

  // The id is named by no counter record yet: nothing else reads or writes
  // its keys, so they need no event locks and no existence checks.
  auto write = [&]() -> Status {
    rocksdb::WriteBatch wb;
    size_t ops = 0;
    auto flush = [&]() -> Status {
      if (ops == 0) return Status::OK();
      Status cs = commit_->Commit(&wb);
      wb.Clear();
      ops = 0;
      return cs;
    };
    char key[kShardKeyBytes];
    char operand[kValueBytes];
    for (uint32_t i = 0; i < im.shard_values.size(); ++i) {
      if (im.shard_values[i] == 0) continue;
      EncodeShardKey(*id, i, key);
      EncodeInt64(im.shard_values[i], operand);
      rocksdb::Status rs = wb.Merge(shards_, rocksdb::Slice(key, sizeof key),
                                    rocksdb::Slice(operand, sizeof operand));
      if (!rs.ok()) return FromRocks(rs, "import shard");
      ++ops;
    }
    std::string marker_key, value;
    for (const MarkerInfo& m : im.markers) {
      if (ops == kMaxBatchOps) {
        Status fs = flush();
        if (!fs.ok()) return fs;
      }
      EncodeMarkerKey(*id, m.event_id, &marker_key);
      schema::EncodeMarker(m.event_id, *id, m.shard, m.delta, m.created_at_ms,
                           &value, m.expires_at_ms, m.pinned);
      rocksdb::Status rs = wb.Put(events_, marker_key, value);
      if (!rs.ok()) return FromRocks(rs, "import markers");
      ++ops;
    }
    return flush();
  };
  s = write();
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
