// Import: restoring a counter from an export (counterctl export/import)
// exactly, shard values and markers, without counting anything twice.

#include <rocksdb/write_batch.h>

#include <unordered_set>

#include "engine/coding.h"
#include "engine/db_impl.h"
#include "engine/format.h"
#include "engine/shard_picker.h"
#include "engine/validate.h"
#include "schema/records.h"
#include "tally/limits.h"
#include "wal/rocks_status.h"

namespace tally::engine {

Status DbImpl::ImportCounter(const CounterInfo& info) {
  Status s = CheckWritable();
  if (!s.ok()) return s;
  if ((info.flags & ~kCounterFlagPlainIncrements) != 0) {
    return Status::InvalidArgument(
        "counter " + Quote(info.name) + ": flags " +
        std::to_string(info.flags) + " sets reserved bits (only bit 0, " +
        "plain increments, is defined)");
  }
  return catalog_->Create(info.name, SpecOf(info), info.created_at_ms,
                          info.flags & kCounterFlagPlainIncrements);
}

Status DbImpl::ImportShardValue(std::string_view counter, uint32_t shard,
                                int64_t value) {
  Status s = CheckWritable();
  if (s.ok()) s = ValidateDelta(value);
  if (!s.ok()) return s;
  Catalog::Reader catalog(catalog_.get());
  const Catalog::Entry* c = catalog.Find(counter);
  if (c == nullptr) return CounterNotFound(counter);
  if (c->bucket != BucketWidth::kNone) {
    return Status::NotSupported("counter " + Quote(c->name) +
                                " has time buckets; importing bucketed "
                                "shard values is not supported");
  }
  if (shard >= c->shards) {
    return Status::InvalidArgument("shard " + std::to_string(shard) +
                                   " is outside counter " + Quote(c->name) +
                                   "'s 0.." + std::to_string(c->shards - 1));
  }
  char key[kShardKeyBytes];
  char operand[kValueBytes];
  EncodeShardKey(c->id, shard, key);
  EncodeInt64(value, operand);
  rocksdb::WriteBatch wb;
  rocksdb::Status rs = wb.Merge(shards_, rocksdb::Slice(key, sizeof key),
                                rocksdb::Slice(operand, sizeof operand));
  if (!rs.ok()) return wal::FromRocks(rs, "import shard");
  return commit_->Commit(&wb);
}

Status DbImpl::ImportMarkers(std::string_view counter,
                             const std::vector<MarkerInfo>& markers) {
  Status s = CheckWritable();
  if (!s.ok()) return s;
  if (markers.size() > kMaxBatchOps) {
    return Status::InvalidArgument(std::to_string(markers.size()) +
                                   " markers exceed the limit of " +
                                   std::to_string(kMaxBatchOps) + " per call");
  }
  Catalog::Reader catalog(catalog_.get());
  const Catalog::Entry* c = catalog.Find(counter);
  if (c == nullptr) return CounterNotFound(counter);

  std::vector<std::string> keys(markers.size());
  std::vector<uint32_t> stripes;
  std::unordered_set<std::string_view> seen;
  for (size_t i = 0; i < markers.size(); ++i) {
    const MarkerInfo& m = markers[i];
    s = ValidateEventId(m.event_id);
    if (s.ok()) s = ValidateDelta(m.delta);
    if (!s.ok()) return Status::InvalidArgument("marker " + std::to_string(i) + ": " + s.message());
    const uint64_t hash = StableHash(m.event_id);
    if (m.pinned && m.shard >= c->shards) {
      return Status::InvalidArgument(
          "marker " + Quote(m.event_id) + " says shard " +
          std::to_string(m.shard) + ", outside counter " + Quote(c->name) +
          "'s 0.." + std::to_string(c->shards - 1));
    }
    if (!m.pinned && m.shard != ShardOfHash(hash, c->shards)) {
      return Status::InvalidArgument(
          "marker " + Quote(m.event_id) + " says shard " +
          std::to_string(m.shard) + ", but its event id hashes to shard " +
          std::to_string(ShardOfHash(hash, c->shards)));
    }
    if ((m.expires_at_ms != 0) != (c->dedupe_window_ms != 0) ||
        m.expires_at_ms < 0) {
      return Status::InvalidArgument(
          "marker " + Quote(m.event_id) + " has expiry " +
          std::to_string(m.expires_at_ms) + " ms, but counter " +
          Quote(c->name) + " has dedupe window " +
          std::to_string(c->dedupe_window_ms) +
          " ms (an expiry is > 0 exactly when the window is)");
    }
    EncodeMarkerKey(c->id, m.event_id, &keys[i]);
    if (!seen.insert(keys[i]).second) {
      return Status::InvalidArgument("marker " + Quote(m.event_id) +
                                     " appears twice in one import call");
    }
    stripes.push_back(event_locks_.StripeOf(c->id, hash));
  }

  // Under the events' stripes, no once-increment can slip in between the
  // existence check and the write.
  EventLocks::MultiGuard guard(&event_locks_, &stripes);
  std::vector<rocksdb::Slice> slices(keys.begin(), keys.end());
  std::vector<rocksdb::PinnableSlice> values(keys.size());
  std::vector<rocksdb::Status> statuses(keys.size());
  if (!keys.empty()) {
    db_->MultiGet(rocksdb::ReadOptions(), events_, keys.size(), slices.data(),
                  values.data(), statuses.data());
  }
  rocksdb::WriteBatch wb;
  std::string value;
  for (size_t i = 0; i < markers.size(); ++i) {
    if (statuses[i].ok()) {
      return Status::AlreadyExists("marker " + Quote(markers[i].event_id) +
                                   " already exists in counter " +
                                   Quote(c->name));
    }
    if (!statuses[i].IsNotFound()) {
      return wal::FromRocks(statuses[i], "read marker");
    }
    const MarkerInfo& m = markers[i];
    schema::EncodeMarker(m.event_id, c->id, m.shard, m.delta, m.created_at_ms,
                         &value, m.expires_at_ms, m.pinned);
    rocksdb::Status rs = wb.Put(events_, slices[i], value);
    if (!rs.ok()) return wal::FromRocks(rs, "import markers");
  }
  return commit_->Commit(&wb);
}

}  // namespace tally::engine
