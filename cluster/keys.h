// Where the cluster backend keeps each thing: the key names of one
// database (a namespace) on a Redis Cluster (docs/format.md, "Redis
// Cluster keys"). Every key starts with "tally:" (the app user's ACL key
// pattern) and the namespace; what must change together shares a hash tag
// (the part in braces), so it lives in one slot and one function call
// commits it atomically:
//   tally:NS:{catalog}               hash: counter name -> counter record
//   tally:NS:{catalog}:next-id       the last counter id given out
//   tally:NS:{catalog}:plain         hash: id -> 1 once it had a plain op
//   tally:NS:{ID.S}:...              a named counter's shard S
//   tally:NS:{ID.S.G}:...            a keyed counter's shard S, key group G
// and under each tag: ":live" (exists while the counter does), ":v" (the
// shard's value; ":v:KEY" a key's), ":m:NAME" (an event's marker, or in
// the tag of the event id's own shard a forward to the shard that holds
// it), ":mi" (the marker index), ":fi" (the forward index), ":ki" (a keyed
// counter's key index); a bucketed counter's ":b:START[:KEY]" (a bucket's
// value) and ":bi[:KEY]" (its bucket index); a strict counter's
// reservations beside its value: ":h[:KEY]" (the key's open holds),
// ":r:NAME" (one reservation's record) and ":ri" (the index of both, for
// deletes).
// Claims (docs/cluster.md, "Claims") spread over kClaimGroups tags by the
// hash of their key:
//   tally:NS:{claims.G}:c:KEY        a claim's record (kept for good)
//   tally:NS:{claims.G}:ci           sorted set of the group's claim keys
//                                    (score 0: in key byte order)
//
// Thread safety: immutable after construction.

#ifndef TALLY_CLUSTER_KEYS_H_
#define TALLY_CLUSTER_KEYS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tally/types.h"

namespace tally::cluster {

// A keyed counter's keys are spread over this many hash tags per shard (by
// their hash): enough that a counter's keys cover every master of a
// cluster of up to a few dozen, few enough that creating or deleting a
// counter touches a bounded number of tags (kKeyGroups x shards live keys).
inline constexpr uint32_t kKeyGroups = 64;

// Claims are spread over this many hash tags (by their key's group,
// KeyGroupOf): a ListClaims page reads every group's index.
inline constexpr uint32_t kClaimGroups = kKeyGroups;

class KeySpace {
 public:
  // `ns`: the namespace, 1..kMaxNamespaceBytes of [A-Za-z0-9_.-].
  explicit KeySpace(std::string_view ns);

  const std::string& prefix() const { return prefix_; }
  std::string Catalog() const { return prefix_ + "{catalog}"; }
  std::string NextId() const { return prefix_ + "{catalog}:next-id"; }
  // Counter id -> "1" once the counter has had a plain increment
  // (CounterInfo::flags, kCounterFlagPlainIncrements).
  std::string PlainFlags() const { return prefix_ + "{catalog}:plain"; }
  // The database's id (DatabaseId): 32 hex characters, made by the first
  // writable client that asks.
  std::string DatabaseId() const { return prefix_ + "{catalog}:id"; }

  // The tag of (counter, shard, key): "tally:NS:{ID.S}" or, for a keyed
  // counter, "tally:NS:{ID.S.G}" with G the key's group.
  std::string Tag(const CounterInfo& c, uint32_t shard,
                  std::string_view key) const;
  // A keyed counter's tag of group `group` (to enumerate a counter).
  std::string GroupTag(uint64_t id, uint32_t shard, uint32_t group) const;
  std::string NamedTag(uint64_t id, uint32_t shard) const;
  // Every hash tag of counter `c` (shard by shard, a keyed counter's group
  // by group).
  std::vector<std::string> TagsOf(const CounterInfo& c) const;
  // Tag() written over *out, reusing its capacity: the write path names
  // the keys of every op (so do the other Into forms below).
  void TagInto(const CounterInfo& c, uint32_t shard, std::string_view key,
               std::string* out) const;

  // The tag of claim `key`, and of claim group `group` (to list them).
  std::string ClaimTag(std::string_view key) const;
  std::string ClaimGroupTag(uint32_t group) const;
  static std::string Claim(const std::string& tag, std::string_view key) {
    return tag + ":c:" + std::string(key);
  }
  static std::string ClaimIndex(const std::string& tag) { return tag + ":ci"; }

  static std::string Live(const std::string& tag) { return tag + ":live"; }
  static std::string MarkerIndex(const std::string& tag) {
    return tag + ":mi";
  }
  // Live, MarkerIndex and KeyIndex (below) written over *out.
  static void LiveInto(std::string_view tag, std::string* out) {
    out->assign(tag).append(":live");
  }
  static void MarkerIndexInto(std::string_view tag, std::string* out) {
    out->assign(tag).append(":mi");
  }
  static void KeyIndexInto(std::string_view tag, std::string* out) {
    out->assign(tag).append(":ki");
  }
  // The forwards' names by expiry (cluster/records.h, EncodeForward).
  static std::string ForwardIndex(const std::string& tag) {
    return tag + ":fi";
  }
  static std::string KeyIndex(const std::string& tag) { return tag + ":ki"; }
  // A counter's roll-up (cluster/records.h, EncodeRollup), in the tag of
  // its shard 0 (a keyed counter's: and key group 0).
  static std::string Rollup(const std::string& tag) { return tag + ":rollup"; }
  // A key's reset sequence (in shard 0's tag): bumped by every reset of
  // the key, guarded by the next (":rs", a keyed counter's ":rs:KEY").
  static std::string ResetSequence(const std::string& tag,
                                   std::string_view key);
  // A strict key's open reservations (cluster/records.h, EncodeOpenHolds):
  // ":h", a keyed counter's ":h:KEY", beside its value.
  static std::string Holds(const std::string& tag, std::string_view key);
  // One reservation's record; `name` as MarkerName names an event.
  static std::string Reservation(const std::string& tag,
                                 std::string_view name) {
    return tag + ":r:" + std::string(name);
  }
  // The tag's reservation keys ("h[:KEY]", "r:NAME": what follows the
  // tag and its colon), so that a delete finds them.
  static std::string HoldIndex(const std::string& tag) { return tag + ":ri"; }
  // The value of a named counter's shard (key empty) or of one key's.
  static std::string Value(const std::string& tag, std::string_view key);
  // A bucketed counter's value in the bucket starting at `start` (ms):
  // ":b:START" (":b:START:KEY" a key's), kept until the bucket is past its
  // counter's retention.
  static std::string BucketValue(const std::string& tag, std::string_view key,
                                 int64_t start);
  // The value key of an op in bucket `bucket` (core::kNoBucket: none).
  static std::string ValueIn(const std::string& tag, std::string_view key,
                             int64_t bucket);
  static void ValueInInto(std::string_view tag, std::string_view key,
                          int64_t bucket, std::string* out);
  // The starts of the buckets the shard (a key's, ":bi:KEY") holds.
  static std::string BucketIndex(const std::string& tag, std::string_view key);
  // A marker's name in its tag's marker index: the event id, preceded for
  // a keyed counter by the key's length and the key ("5:post1e-9").
  static std::string MarkerName(std::string_view key,
                                std::string_view event_id);
  static std::string Marker(const std::string& tag, std::string_view name);
  static void MarkerInto(std::string_view tag, std::string_view name,
                         std::string* out);

 private:
  std::string prefix_;  // "tally:NS:"
};

// The namespace rule: 1..kMaxNamespaceBytes of [A-Za-z0-9_.-]; it names
// the database in every key, so it must not hold a brace or a colon.
inline constexpr size_t kMaxNamespaceBytes = 64;
bool ValidNamespace(std::string_view ns);

// The key group of `key` in a keyed counter (0..kKeyGroups-1).
uint32_t KeyGroupOf(std::string_view key);

}  // namespace tally::cluster

#endif  // TALLY_CLUSTER_KEYS_H_
