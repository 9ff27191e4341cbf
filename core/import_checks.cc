#include "core/import_checks.h"

#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "core/bounds.h"
#include "core/decide.h"
#include "core/hash.h"
#include "core/shard_picker.h"
#include "core/validate.h"
#include "tally/limits.h"

namespace tally::core {
namespace {

// Checks one set of shard values (a named counter's, or one key's of a
// keyed counter; `what` names it) against counter `c`.
Status ValidateShardValues(const CounterInfo& c, const std::string& what,
                           const std::vector<int64_t>& values) {
  if (!values.empty() && values.size() != c.shards) {
    return Status::InvalidArgument(
        what + ": " + std::to_string(values.size()) + " shard values for its " +
        std::to_string(c.shards) + " shards (give one per shard, or none)");
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] == 0) continue;
    if (values[i] < kMinDelta) {  // the overflow mark
      return Status::InvalidArgument(what + ": shard " + std::to_string(i) +
                                     " value " + std::to_string(values[i]) +
                                     " is reserved (the smallest accepted is " +
                                     std::to_string(kMinDelta) + ")");
    }
    if (c.bucket != BucketWidth::kNone) {
      return Status::NotSupported("counter " + Quote(c.name) +
                                  " has time buckets; importing bucketed "
                                  "shard values is not supported");
    }
    // A strict counter's one shard is its value: within its bounds.
    if (!WithinBounds(c.bounds, values[i])) {
      return Status::InvalidArgument(
          what + ": value " + std::to_string(values[i]) +
          " is outside the strict counter's bounds");
    }
  }
  return Status::OK();
}

// A keyed counter's keys: each valid and given once. A bucketed counter's
// key could only be stored in a bucket, which an export does not name.
Status ValidateKeys(const CounterImport& im) {
  const CounterInfo& c = im.info;
  if (!c.keyed) {
    if (im.keys.empty()) return Status::OK();
    return Status::InvalidArgument(
        "counter " + Quote(c.name) + " is not keyed, but the import gives " +
        std::to_string(im.keys.size()) + " keys (give shard_values)");
  }
  if (!im.shard_values.empty()) {
    return Status::InvalidArgument("counter " + Quote(c.name) +
                                   " is keyed: give its values per key "
                                   "(keys), not shard_values");
  }
  if (!im.keys.empty() && c.bucket != BucketWidth::kNone) {
    return Status::NotSupported("counter " + Quote(c.name) +
                                " has time buckets; importing bucketed "
                                "shard values is not supported");
  }
  std::unordered_set<std::string_view> seen;
  for (size_t i = 0; i < im.keys.size(); ++i) {
    const KeyShards& k = im.keys[i];
    Status s = ValidateCounterKey(k.key);
    if (!s.ok()) {
      return Status::InvalidArgument("key " + std::to_string(i) + ": " +
                                     s.message());
    }
    if (!seen.insert(k.key).second) {
      return Status::InvalidArgument("key " + Quote(k.key) +
                                     " appears twice in one import");
    }
    s = ValidateShardValues(
        c, "counter " + Quote(c.name) + " key " + Quote(k.key), k.shard_values);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

// One marker of an import against its counter `c` (`i`: its place).
Status ValidateImportMarker(const CounterInfo& c, size_t i,
                            const MarkerInfo& m) {
  Status s = ValidateEventId(m.event_id);
  if (s.ok()) s = ValidateDelta(m.delta);
  if (s.ok() && c.keyed) s = ValidateCounterKey(m.key);
  if (s.ok() && !c.keyed) s = CheckKeyed(c, m.key);
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
  if (m.reset && (!m.strict || m.refused || m.asked != m.value)) {
    return Status::InvalidArgument(
        "marker " + Quote(m.event_id) +
        " is a reset's: it needs strict, not refused, and asked equal to "
        "value (the value it set)");
  }
  // A reset's marker holds its answer on any counter (format 7).
  if ((m.strict != c.bounds.any() && !m.reset) ||
      (m.strict && m.refused && m.delta != 0)) {
    return Status::InvalidArgument(
        "marker " + Quote(m.event_id) +
        (m.strict != c.bounds.any()
             ? (m.strict ? " holds a strict answer, but counter " +
                               Quote(c.name) + " has no bounds"
                         : " holds no strict answer, but counter " +
                               Quote(c.name) + " is strict")
             : std::string(" was refused but counts delta ") +
                   std::to_string(m.delta)));
  }
  const bool quota = c.bounds.any() && c.bucket != BucketWidth::kNone;
  if (m.window_ends_ms != 0 && !quota) {
    return Status::InvalidArgument(
        "marker " + Quote(m.event_id) + " has a window end (" +
        std::to_string(m.window_ends_ms) + " ms), but counter " +
        Quote(c.name) + " is not a quota (bounds and time buckets)");
  }
  return Status::OK();
}

}  // namespace

Status ValidateImport(const CounterImport& im) {
  const CounterInfo& c = im.info;
  if ((c.flags & ~kCounterFlagPlainIncrements) != 0) {
    return Status::InvalidArgument(
        "counter " + Quote(c.name) + ": flags " + std::to_string(c.flags) +
        " sets reserved bits (only bit 0, plain increments, is defined)");
  }
  Status s = ValidateSpec(SpecOf(c));
  if (s.ok()) s = ValidateKeys(im);
  if (s.ok()) {
    s = ValidateShardValues(c, "counter " + Quote(c.name), im.shard_values);
  }
  if (!s.ok()) return s;
  // (key, event id): one event id counts once in each key.
  std::set<std::pair<std::string_view, std::string_view>> seen;
  for (size_t i = 0; i < im.markers.size(); ++i) {
    const MarkerInfo& m = im.markers[i];
    s = ValidateImportMarker(c, i, m);
    if (!s.ok()) return s;
    if (!seen.emplace(m.key, m.event_id).second) {
      return Status::InvalidArgument(
          "marker " + Quote(m.event_id) +
          (m.key.empty() ? std::string() : " of key " + Quote(m.key)) +
          " appears twice in one import");
    }
  }
  return Status::OK();
}

}  // namespace tally::core
