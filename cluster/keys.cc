#include "cluster/keys.h"

#include <cassert>
#include <charconv>

#include "core/buckets.h"
#include "core/hash.h"

namespace tally::cluster {

bool ValidNamespace(std::string_view ns) {
  if (ns.empty() || ns.size() > kMaxNamespaceBytes) return false;
  for (const char c : ns) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '_' || c == '.' ||
                    c == '-';
    if (!ok) return false;
  }
  return true;
}

uint32_t KeyGroupOf(std::string_view key) {
  // The high half of the stable hash: the shard of a once-op uses the low
  // bits of its event id's hash, and a key's group should not follow it.
  return static_cast<uint32_t>((core::StableHash(key) >> 32) % kKeyGroups);
}

KeySpace::KeySpace(std::string_view ns)
    : prefix_("tally:" + std::string(ns) + ":") {
  assert(ValidNamespace(ns));
}

namespace {

// Appends `c` and the decimal `n` to `s`.
void AppendNumber(std::string* s, char c, uint64_t n) {
  char buf[24];
  buf[0] = c;
  const char* end = std::to_chars(buf + 1, buf + sizeof(buf), n).ptr;
  s->append(buf, static_cast<size_t>(end - buf));
}

// Writes tag "PREFIX{ID.SHARD}" (grouped: "PREFIX{ID.SHARD.GROUP}") over
// *out.
void PutTag(const std::string& prefix, uint64_t id, uint32_t shard,
            bool grouped, uint32_t group, std::string* out) {
  out->reserve(prefix.size() + 40);  // the numbers: one allocation at most
  out->assign(prefix);
  AppendNumber(out, '{', id);
  AppendNumber(out, '.', shard);
  if (grouped) AppendNumber(out, '.', group);
  out->push_back('}');
}

}  // namespace

// Tags are built on every write: one allocation each (no temporaries),
// with room for the suffixes the callers append (":m:" and an event id).
std::string KeySpace::NamedTag(uint64_t id, uint32_t shard) const {
  std::string tag;
  tag.reserve(prefix_.size() + 80);
  PutTag(prefix_, id, shard, false, 0, &tag);
  return tag;
}

std::string KeySpace::GroupTag(uint64_t id, uint32_t shard,
                               uint32_t group) const {
  std::string tag;
  tag.reserve(prefix_.size() + 80);
  PutTag(prefix_, id, shard, true, group, &tag);
  return tag;
}

std::vector<std::string> KeySpace::TagsOf(const CounterInfo& c) const {
  std::vector<std::string> tags;
  for (uint32_t s = 0; s < c.shards; ++s) {
    if (!c.keyed) {
      tags.push_back(NamedTag(c.id, s));
      continue;
    }
    for (uint32_t g = 0; g < kKeyGroups; ++g) {
      tags.push_back(GroupTag(c.id, s, g));
    }
  }
  return tags;
}

std::string KeySpace::Tag(const CounterInfo& c, uint32_t shard,
                          std::string_view key) const {
  std::string tag;
  tag.reserve(prefix_.size() + 80);
  TagInto(c, shard, key, &tag);
  return tag;
}

void KeySpace::TagInto(const CounterInfo& c, uint32_t shard,
                       std::string_view key, std::string* out) const {
  PutTag(prefix_, c.id, shard, c.keyed, c.keyed ? KeyGroupOf(key) : 0, out);
}

std::string KeySpace::ClaimGroupTag(uint32_t group) const {
  assert(group < kClaimGroups);
  std::string tag;
  tag.reserve(prefix_.size() + 16);
  tag.append(prefix_).append("{claims");
  AppendNumber(&tag, '.', group);
  tag.push_back('}');
  return tag;
}

std::string KeySpace::ClaimTag(std::string_view key) const {
  return ClaimGroupTag(KeyGroupOf(key) % kClaimGroups);
}

std::string KeySpace::Value(const std::string& tag, std::string_view key) {
  std::string value;
  ValueInInto(tag, key, core::kNoBucket, &value);
  return value;
}

std::string KeySpace::BucketValue(const std::string& tag,
                                  std::string_view key, int64_t start) {
  assert(start >= 0);
  std::string value;
  ValueInInto(tag, key, start, &value);
  return value;
}

std::string KeySpace::ValueIn(const std::string& tag, std::string_view key,
                              int64_t bucket) {
  std::string value;
  ValueInInto(tag, key, bucket, &value);
  return value;
}

void KeySpace::ValueInInto(std::string_view tag, std::string_view key,
                           int64_t bucket, std::string* out) {
  out->clear();
  out->reserve(tag.size() + 24 + key.size());
  out->append(tag);
  if (bucket == core::kNoBucket) {
    out->append(":v");
  } else {
    assert(bucket >= 0);
    out->append(":b");
    AppendNumber(out, ':', static_cast<uint64_t>(bucket));
  }
  if (!key.empty()) out->append(":").append(key);
}

std::string KeySpace::BucketIndex(const std::string& tag,
                                  std::string_view key) {
  return key.empty() ? tag + ":bi" : tag + ":bi:" + std::string(key);
}

std::string KeySpace::Marker(const std::string& tag, std::string_view name) {
  std::string marker;
  MarkerInto(tag, name, &marker);
  return marker;
}

void KeySpace::MarkerInto(std::string_view tag, std::string_view name,
                          std::string* out) {
  out->clear();
  out->reserve(tag.size() + 3 + name.size());
  out->append(tag).append(":m:").append(name);
}

std::string KeySpace::ResetSequence(const std::string& tag,
                                   std::string_view key) {
  return key.empty() ? tag + ":rs" : tag + ":rs:" + std::string(key);
}

std::string KeySpace::Holds(const std::string& tag, std::string_view key) {
  return key.empty() ? tag + ":h" : tag + ":h:" + std::string(key);
}

std::string KeySpace::MarkerName(std::string_view key,
                                 std::string_view event_id) {
  if (key.empty()) return std::string(event_id);
  return std::to_string(key.size()) + ":" + std::string(key) +
         std::string(event_id);
}

}  // namespace tally::cluster
