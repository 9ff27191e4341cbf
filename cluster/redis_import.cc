// RedisDb::ImportCounter (tally/import.h): a counter as exported, with its
// values and markers, under a new id, whole or not at all, by the steps of
// a creation (redis_catalog.cc): the new id's live keys, its values
// (a keyed counter's with their key index entries) and its markers (with
// their index entries, and a forward at home for a pinned one), then the
// catalog record, the one write that makes the counter exist. A failure
// before it leaves keys of an id no record names (invisible to every call
// and to Verify, which reads counters from the catalog), deleted at once
// where the failure allows; a rerun imports under another new id.

#include <string>
#include <vector>

#include "cluster/records.h"
#include "cluster/redis_db.h"
#include "core/import_checks.h"
#include "core/shard_picker.h"
#include "core/validate.h"

namespace tally::cluster {

// The values of the import: a named counter's per shard, or each key's
// (with its key index entry in each tag it is stored in; a key whose
// every value is 0 is stored as 0 in shard 0, so that it exists).
void RedisDb::ImportValues(const CounterInfo& c, const CounterImport& im,
                           std::vector<Command>* out) const {
  for (size_t i = 0; i < im.shard_values.size(); ++i) {
    if (im.shard_values[i] == 0) continue;
    const std::string tag = keys_.NamedTag(c.id, static_cast<uint32_t>(i));
    out->push_back(WriteCommand({"SET", KeySpace::Value(tag, {}),
                          std::to_string(im.shard_values[i])},
                         tag));
  }
  const auto store = [&](const std::string& key, uint32_t shard, int64_t v) {
    const std::string tag = keys_.Tag(c, shard, key);
    out->push_back(
        WriteCommand({"SET", KeySpace::Value(tag, key), std::to_string(v)}, tag));
    out->push_back(WriteCommand({"ZADD", KeySpace::KeyIndex(tag), "0", key}, tag));
  };
  for (const KeyShards& k : im.keys) {
    bool stored = false;
    for (size_t i = 0; i < k.shard_values.size(); ++i) {
      if (k.shard_values[i] == 0) continue;
      store(k.key, static_cast<uint32_t>(i), k.shard_values[i]);
      stored = true;
    }
    if (!stored) store(k.key, 0, 0);
  }
}

// The markers of the import, each in its shard's tag as a write would have
// left it; a pinned one away from its event id's shard with a forward at
// home. A marker whose window has already passed is not written.
void RedisDb::ImportMarkers(const CounterInfo& c, const CounterImport& im,
                            int64_t now, std::vector<Command>* out) const {
  for (const MarkerInfo& m : im.markers) {
    if (m.expires_at_ms != 0 && m.expires_at_ms <= now) continue;
    const std::string ttl =
        std::to_string(m.expires_at_ms == 0 ? 0 : m.expires_at_ms - now);
    const std::string name = KeySpace::MarkerName(m.key, m.event_id);
    const std::string expiry = std::to_string(m.expires_at_ms);
    const auto put = [&](const std::string& tag, const std::string& record,
                         const std::string& index) {
      std::vector<std::string> set = {"SET", KeySpace::Marker(tag, name),
                                      record};
      if (ttl != "0") set.insert(set.end(), {"PX", ttl});
      out->push_back(WriteCommand(std::move(set), tag));
      out->push_back(WriteCommand({"ZADD", index, expiry, name}, tag));
    };
    const std::string tag = keys_.Tag(c, m.shard, m.key);
    put(tag, EncodeMarker(m), KeySpace::MarkerIndex(tag));
    const uint32_t home = core::ShardOfKey(m.event_id, c.shards);
    if (home != m.shard) {
      const std::string at_home = keys_.Tag(c, home, m.key);
      put(at_home, EncodeForward(m.shard), KeySpace::ForwardIndex(at_home));
    }
  }
}

Status RedisDb::ImportCounter(const CounterImport& im) {
  Status s = CheckWritable();
  if (s.ok()) s = core::ValidateCounterName(im.info.name);
  if (s.ok()) s = core::ValidateImport(im);
  if (s.ok()) s = CheckSpecBuilt(core::SpecOf(im.info));
  if (s.ok()) s = CheckNewName(im.info.name);
  CounterInfo c = im.info;
  if (s.ok()) s = NewCounterId(&c.id);
  if (!s.ok()) return s;
  std::vector<Command> written = LiveKeys(c);
  ImportValues(c, im, &written);
  ImportMarkers(c, im, clock_->NowMillis(), &written);
  s = RunChunked(written, "import counter " + core::Quote(c.name));
  if (s.ok() && (c.flags & kCounterFlagPlainIncrements) != 0) {
    // Before the record: the counter never exists without its flag (an
    // unused id's flag, when the name was taken meanwhile, is harmless).
    std::vector<Reply> r;
    s = Run({WriteCommand({"HSET", keys_.PlainFlags(), std::to_string(c.id), "1"},
                   keys_.Catalog())},
            &r, true);
  }
  if (s.ok()) return Publish(c, written);
  DropWritten(written);
  return s;
}

}  // namespace tally::cluster
