#include "engine/coding.h"

#include <cassert>

namespace tally::engine {

bool DecodeShardKey(std::string_view key, uint64_t* counter_id,
                    uint32_t* shard) {
  if (key.size() != kShardKeyBytes) return false;
  *counter_id = DecodeFixed64BE(key.data());
  *shard = DecodeFixed32BE(key.data() + kCounterIdBytes);
  return true;
}

bool DecodeBucketShardKey(std::string_view key, uint64_t* counter_id,
                          int64_t* bucket_start_ms, uint32_t* shard) {
  if (key.size() != kBucketShardKeyBytes) return false;
  const uint64_t start = DecodeFixed64BE(key.data() + kCounterIdBytes);
  if (start > static_cast<uint64_t>(INT64_MAX)) return false;
  *counter_id = DecodeFixed64BE(key.data());
  *bucket_start_ms = static_cast<int64_t>(start);
  *shard = DecodeFixed32BE(key.data() + kCounterIdBytes + 8);
  return true;
}

std::string DecimalString(ShardSum v) {
  const bool negative = v < 0;
  // The magnitude, also of the most negative value.
  unsigned __int128 u = negative ? ~static_cast<unsigned __int128>(v) + 1
                                 : static_cast<unsigned __int128>(v);
  std::string out;
  do {
    out.push_back(static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  } while (u != 0);
  if (negative) out.push_back('-');
  return std::string(out.rbegin(), out.rend());
}

ShardValue DecodeShardValue(std::string_view bytes, ShardSum* v) {
  if (bytes.size() == static_cast<size_t>(kValueBytes)) {
    int64_t x;
    DecodeInt64(bytes, &x);
    if (x == kOverflowedValue) return ShardValue::kOverflowed;
    *v = x;
    return ShardValue::kExact;
  }
  if (bytes.size() != static_cast<size_t>(kWideValueBytes)) {
    return ShardValue::kMalformed;
  }
  unsigned __int128 u = 0;
  for (int i = kWideValueBytes - 1; i >= 0; --i) {
    u = (u << 8) | static_cast<uint8_t>(bytes[i]);
  }
  *v = static_cast<ShardSum>(u);
  return ShardValue::kExact;
}

void EncodeShardValue(ShardSum v, std::string* out) {
  if (v > kOverflowedValue && v <= std::numeric_limits<int64_t>::max()) {
    char buf[kValueBytes];
    EncodeInt64(static_cast<int64_t>(v), buf);
    out->assign(buf, kValueBytes);
    return;
  }
  char buf[kWideValueBytes];
  auto u = static_cast<unsigned __int128>(v);
  for (int i = 0; i < kWideValueBytes; ++i) {
    buf[i] = static_cast<char>(u & 0xff);
    u >>= 8;
  }
  out->assign(buf, kWideValueBytes);
}

void EncodeMarkerKey(uint64_t counter_id, std::string_view event_id,
                     std::string* out) {
  out->resize(kCounterIdBytes + event_id.size());
  EncodeFixed64BE(counter_id, out->data());
  std::memcpy(out->data() + kCounterIdBytes, event_id.data(), event_id.size());
}

bool DecodeMarkerKey(std::string_view key, uint64_t* counter_id,
                     std::string_view* event_id) {
  if (key.size() <= static_cast<size_t>(kCounterIdBytes)) return false;
  *counter_id = DecodeFixed64BE(key.data());
  *event_id = key.substr(kCounterIdBytes);
  return true;
}

KeyPrefix::KeyPrefix(uint64_t counter_id, std::string_view key) {
  EncodeFixed64BE(counter_id, buf_);
  size_ = kCounterIdBytes;
  if (key.empty()) return;
  assert(key.size() <= kMaxKeyBytes);
  assert(key.find(kKeyEnd) == std::string_view::npos);
  std::memcpy(buf_ + size_, key.data(), key.size());
  size_ += key.size();
  buf_[size_++] = kKeyEnd;
}

void EncodeHoldKey(uint64_t counter_id, char tag, std::string_view key,
                   std::string_view reservation_id, std::string* out) {
  assert(tag == kOpenHoldTag || tag == kClosedHoldTag);
  assert(key.find(kKeyEnd) == std::string_view::npos);
  out->resize(kCounterIdBytes);
  EncodeFixed64BE(counter_id, out->data());
  out->push_back(tag);
  out->append(key.data(), key.size());
  out->push_back(kKeyEnd);
  out->append(reservation_id.data(), reservation_id.size());
}

void HoldRange(uint64_t counter_id, char tag, std::string_view key,
               std::string* begin, std::string* end) {
  EncodeHoldKey(counter_id, tag, key, {}, begin);
  *end = *begin;
  end->back() = static_cast<char>(kKeyEnd + 1);
}

bool DecodeHoldKey(std::string_view bytes, uint64_t* counter_id, char* tag,
                   std::string_view* key, std::string_view* reservation_id) {
  if (bytes.size() < static_cast<size_t>(kCounterIdBytes) + 3) return false;
  *counter_id = DecodeFixed64BE(bytes.data());
  *tag = bytes[kCounterIdBytes];
  if (*tag != kOpenHoldTag && *tag != kClosedHoldTag) return false;
  const std::string_view rest = bytes.substr(kCounterIdBytes + 1);
  const size_t end = rest.find(kKeyEnd);
  if (end == std::string_view::npos || end > kMaxKeyBytes ||
      end + 1 == rest.size()) {
    return false;
  }
  *key = rest.substr(0, end);
  *reservation_id = rest.substr(end + 1);
  return reservation_id->find(kKeyEnd) == std::string_view::npos;
}

void KeyPrefix::End(std::string* out) const {
  if (!keyed()) {
    out->resize(kCounterIdBytes);
    EncodeFixed64BE(DecodeFixed64BE(buf_) + 1, out->data());
    return;
  }
  out->assign(buf_, size_);
  out->back() = static_cast<char>(kKeyEnd + 1);
}

size_t EncodeShardKeyOf(const KeyPrefix& prefix, int64_t bucket_start_ms,
                        uint32_t shard, char* out) {
  const std::string_view p = prefix.bytes();
  std::memcpy(out, p.data(), p.size());
  size_t n = p.size();
  if (bucket_start_ms != -1) {
    assert(bucket_start_ms >= 0);
    EncodeFixed64BE(static_cast<uint64_t>(bucket_start_ms), out + n);
    n += 8;
  }
  EncodeFixed32BE(shard, out + n);
  return n + 4;
}

bool DecodeAnyShardKey(std::string_view bytes, ShardKeyParts* out) {
  if (bytes.size() < static_cast<size_t>(kShardKeyBytes)) return false;
  out->counter_id = DecodeFixed64BE(bytes.data());
  std::string_view rest = bytes.substr(kCounterIdBytes);
  out->key = {};
  if (rest[0] != kKeyEnd) {
    const size_t end = rest.find(kKeyEnd);
    if (end == std::string_view::npos || end > kMaxKeyBytes) return false;
    out->key = rest.substr(0, end);
    rest.remove_prefix(end + 1);
  }
  if (rest.size() == 4) {
    out->bucket = -1;
  } else if (rest.size() == 12) {
    const uint64_t start = DecodeFixed64BE(rest.data());
    if (start > static_cast<uint64_t>(INT64_MAX)) return false;
    out->bucket = static_cast<int64_t>(start);
    rest.remove_prefix(8);
  } else {
    return false;
  }
  out->shard = DecodeFixed32BE(rest.data());
  return true;
}

void EncodeMarkerKeyOf(const KeyPrefix& prefix, std::string_view event_id,
                       std::string* out) {
  out->clear();
  AppendMarkerKeyOf(prefix, event_id, out);
}

void AppendMarkerKeyOf(const KeyPrefix& prefix, std::string_view event_id,
                       std::string* out) {
  const std::string_view p = prefix.bytes();
  const size_t at = out->size();
  out->resize(at + p.size() + event_id.size());
  std::memcpy(out->data() + at, p.data(), p.size());
  std::memcpy(out->data() + at + p.size(), event_id.data(), event_id.size());
}

bool DecodeAnyMarkerKey(std::string_view bytes, uint64_t* counter_id,
                        std::string_view* key, std::string_view* event_id) {
  if (bytes.size() <= static_cast<size_t>(kCounterIdBytes)) return false;
  *counter_id = DecodeFixed64BE(bytes.data());
  std::string_view rest = bytes.substr(kCounterIdBytes);
  *key = {};
  const size_t end = rest.find(kKeyEnd);
  if (end != std::string_view::npos) {
    if (end == 0 || end > kMaxKeyBytes) return false;
    *key = rest.substr(0, end);
    rest.remove_prefix(end + 1);
  }
  if (rest.empty()) return false;
  *event_id = rest;
  return true;
}

bool DecodeKeyRange(std::string_view begin, std::string_view end,
                    uint64_t* counter_id, std::string_view* key) {
  if (begin.size() < static_cast<size_t>(kCounterIdBytes) + 2 ||
      begin.size() > kMaxKeyPrefixBytes || begin.back() != kKeyEnd) {
    return false;
  }
  const std::string_view k =
      begin.substr(kCounterIdBytes, begin.size() - kCounterIdBytes - 1);
  if (k.find(kKeyEnd) != std::string_view::npos) return false;
  const KeyPrefix prefix(DecodeFixed64BE(begin.data()), k);
  std::string prefix_end;
  prefix.End(&prefix_end);
  if (end != prefix_end) return false;
  *counter_id = DecodeFixed64BE(begin.data());
  *key = k;
  return true;
}

std::string CounterMetaKey(std::string_view name) {
  std::string key;
  key.reserve(1 + name.size());
  key.push_back(kCounterKeyTag);
  key.append(name);
  return key;
}

std::string ImportMetaKey(uint64_t id) {
  std::string key(1 + kCounterIdBytes, kImportKeyTag);
  EncodeFixed64BE(id, &key[1]);
  return key;
}

bool DecodeImportMetaKey(std::string_view key, uint64_t* id) {
  if (key.size() != 1 + kCounterIdBytes || key[0] != kImportKeyTag) {
    return false;
  }
  *id = DecodeFixed64BE(key.data() + 1);
  return true;
}

std::string HexKey(std::string_view key) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(key.size() * 2 + 1);
  for (size_t i = 0; i < key.size(); ++i) {
    if (i == static_cast<size_t>(kCounterIdBytes)) out.push_back(':');
    const auto b = static_cast<uint8_t>(key[i]);
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 0xf]);
  }
  return out;
}

void EncodeRollup(const RollupRecord& r, char out[kRollupBytes]) {
  EncodeInt64(r.value, out);
  EncodeInt64(static_cast<int64_t>(r.sequence), out + 8);
  EncodeInt64(r.as_of_ms, out + 16);
}

bool DecodeRollup(std::string_view bytes, RollupRecord* r) {
  if (bytes.size() != kRollupBytes) return false;
  int64_t seq = 0;
  DecodeInt64(bytes.substr(0, 8), &r->value);
  DecodeInt64(bytes.substr(8, 8), &seq);
  DecodeInt64(bytes.substr(16, 8), &r->as_of_ms);
  r->sequence = static_cast<uint64_t>(seq);
  return true;
}

}  // namespace tally::engine
