// Fuzzes the key and value coding of engine/coding.h with arbitrary bytes,
// as they could come back from a damaged database: every decoder accepts
// exactly the lengths docs/format.md allows, and whatever it accepts
// re-encodes to the same bytes. Also checks the encoders' own invariants
// (meta key tag, HexKey shape) on fuzzer-chosen names and ids.
//
// Keyed counters (docs/format.md, "Keyed counters"): DecodeAnyShardKey,
// DecodeAnyMarkerKey, DecodeKeyRange (the two halves of the input) and
// DecodeTopList never crash on any bytes, and what they accept re-encodes
// (EncodeShardKeyOf, EncodeMarkerKeyOf, KeyPrefix and its End,
// EncodeTopList) to the same bytes; shard keys, marker keys and top lists
// built from fuzzer-chosen valid parts decode to the same parts; a key's
// prefix range [KeyPrefix, KeyPrefix::End) holds its keys and no other
// key's, and prefixes sort as their keys do.

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/rules.h"
#include "engine/coding.h"
#include "engine/format.h"
#include "engine/top_keys.h"
#include "fuzz_check.h"
#include "tally/limits.h"

namespace tally::engine {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

void CheckShardKey(std::string_view key) {
  uint64_t id = 0;
  uint32_t shard = 0;
  const bool ok = DecodeShardKey(key, &id, &shard);
  FUZZ_CHECK(ok == (key.size() == static_cast<size_t>(kShardKeyBytes)));
  if (!ok) return;
  char again[kShardKeyBytes];
  EncodeShardKey(id, shard, again);
  FUZZ_CHECK(std::string_view(again, kShardKeyBytes) == key);
  // The prefix shared by all of the counter's keys is the shard key's head.
  char prefix[kCounterIdBytes];
  EncodeCounterPrefix(id, prefix);
  FUZZ_CHECK(key.substr(0, kCounterIdBytes) ==
             std::string_view(prefix, kCounterIdBytes));
}

void CheckMarkerKey(std::string_view key) {
  uint64_t id = 0;
  std::string_view event_id;
  const bool ok = DecodeMarkerKey(key, &id, &event_id);
  // A marker key has a non-empty event id after the 8-byte counter id.
  FUZZ_CHECK(ok == (key.size() > static_cast<size_t>(kCounterIdBytes)));
  if (!ok) return;
  FUZZ_CHECK(!event_id.empty());
  FUZZ_CHECK(event_id.data() == key.data() + kCounterIdBytes);
  std::string again = "stale bytes that EncodeMarkerKey must replace";
  EncodeMarkerKey(id, event_id, &again);
  FUZZ_CHECK(again == key);
}

void CheckInt64(std::string_view bytes) {
  int64_t v = 12345;
  const bool ok = DecodeInt64(bytes, &v);
  FUZZ_CHECK(ok == (bytes.size() == static_cast<size_t>(kValueBytes)));
  if (!ok) {
    FUZZ_CHECK(v == 12345);  // a malformed value is not read as anything
    return;
  }
  char again[kValueBytes];
  EncodeInt64(v, again);
  FUZZ_CHECK(std::string_view(again, kValueBytes) == bytes);
}

void CheckFixed(std::string_view bytes) {
  if (bytes.size() >= 8) {
    const uint64_t v = DecodeFixed64BE(bytes.data());
    char again[8];
    EncodeFixed64BE(v, again);
    FUZZ_CHECK(std::string_view(again, 8) == bytes.substr(0, 8));
  }
  if (bytes.size() >= 4) {
    const uint32_t v = DecodeFixed32BE(bytes.data());
    char again[4];
    EncodeFixed32BE(v, again);
    FUZZ_CHECK(std::string_view(again, 4) == bytes.substr(0, 4));
  }
}

void CheckMetaKey(std::string_view name) {
  const std::string key = CounterMetaKey(name);
  FUZZ_CHECK(key.size() == name.size() + 1);
  FUZZ_CHECK(key[0] == kCounterKeyTag);
  FUZZ_CHECK(std::string_view(key).substr(1) == name);
  // A counter's key never collides with the header's.
  FUZZ_CHECK(key != std::string_view(kHeaderKey));
}

void CheckHexKey(std::string_view key) {
  const std::string hex = HexKey(key);
  const size_t colons = key.size() > static_cast<size_t>(kCounterIdBytes);
  FUZZ_CHECK(hex.size() == key.size() * 2 + colons);
  // Decode it back: the printed form loses nothing.
  std::string back;
  for (size_t i = 0; i < hex.size();) {
    if (hex[i] == ':') {
      FUZZ_CHECK(back.size() == static_cast<size_t>(kCounterIdBytes));
      ++i;
      continue;
    }
    FUZZ_CHECK(i + 1 < hex.size());
    const int hi = HexValue(hex[i]);
    const int lo = HexValue(hex[i + 1]);
    FUZZ_CHECK(hi >= 0 && lo >= 0);
    back.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  FUZZ_CHECK(back == key);
}

// A counter key as it may be stored: 1..kMaxKeyBytes bytes, no 0 byte.
bool StorableKey(std::string_view key) {
  return !key.empty() && key.size() <= kMaxKeyBytes &&
         key.find(kKeyEnd) == std::string_view::npos;
}

void CheckAnyShardKey(std::string_view bytes) {
  ShardKeyParts parts;
  if (!DecodeAnyShardKey(bytes, &parts)) {
    // The named grammars never fail: u64be(id) + [u64be(bucket)] +
    // u32be(shard) with byte 8 zero (the bucket's high byte then is too).
    FUZZ_CHECK(!(bytes.size() == static_cast<size_t>(kShardKeyBytes) &&
                 bytes[8] == 0));
    FUZZ_CHECK(!(bytes.size() == static_cast<size_t>(kBucketShardKeyBytes) &&
                 bytes[8] == 0));
    return;
  }
  FUZZ_CHECK(parts.key.empty() || StorableKey(parts.key));
  FUZZ_CHECK(parts.key.empty() == (bytes[8] == 0));
  FUZZ_CHECK(parts.bucket == kNoBucket || parts.bucket >= 0);
  const size_t expected = kCounterIdBytes +
                          (parts.key.empty() ? 0 : parts.key.size() + 1) +
                          (parts.bucket == kNoBucket ? 0 : 8) + 4;
  FUZZ_CHECK(bytes.size() == expected);
  FUZZ_CHECK(bytes.size() <= kMaxShardKeyBytes);
  char again[kMaxShardKeyBytes];
  const size_t n = EncodeShardKeyOf(KeyPrefix(parts.counter_id, parts.key),
                                    parts.bucket, parts.shard, again);
  FUZZ_CHECK(std::string_view(again, n) == bytes);
}

void CheckAnyMarkerKey(std::string_view bytes) {
  uint64_t id = 0;
  std::string_view key, event_id;
  if (!DecodeAnyMarkerKey(bytes, &id, &key, &event_id)) {
    // A named marker key (no 0 byte after the id) never fails.
    FUZZ_CHECK(bytes.size() <= static_cast<size_t>(kCounterIdBytes) ||
               bytes.find(kKeyEnd, kCounterIdBytes) != std::string_view::npos);
    return;
  }
  FUZZ_CHECK(key.empty() || StorableKey(key));
  FUZZ_CHECK(!event_id.empty());
  // A named counter's event id holds no 0 byte: the first one ends a key.
  if (key.empty()) FUZZ_CHECK(event_id.find(kKeyEnd) == std::string_view::npos);
  std::string again = "stale bytes that EncodeMarkerKeyOf must replace";
  EncodeMarkerKeyOf(KeyPrefix(id, key), event_id, &again);
  FUZZ_CHECK(again == bytes);
}

// Hold keys (format 7): accepted only as they re-encode, with a tag of 01
// or 02, a storable key (or none) and a reservation id without a 0 byte;
// the key lies in its key's range of that tag.
void CheckHoldKey(std::string_view bytes) {
  uint64_t id = 0;
  char tag = 0;
  std::string_view key, reservation;
  if (!DecodeHoldKey(bytes, &id, &tag, &key, &reservation)) return;
  FUZZ_CHECK(tag == kOpenHoldTag || tag == kClosedHoldTag);
  FUZZ_CHECK(key.empty() || StorableKey(key));
  FUZZ_CHECK(!reservation.empty() &&
             reservation.find(kKeyEnd) == std::string_view::npos);
  std::string again = "stale bytes that EncodeHoldKey must replace";
  EncodeHoldKey(id, tag, key, reservation, &again);
  FUZZ_CHECK(again == bytes);
  std::string begin, end;
  HoldRange(id, tag, key, &begin, &end);
  FUZZ_CHECK(begin < again && again < end);
}

void CheckTopListBytes(std::string_view bytes) {
  TopKeysResult top;
  if (!DecodeTopList(bytes, &top)) return;
  FUZZ_CHECK(top.keys.size() <= kMaxTopKeys);
  for (const KeyValue& kv : top.keys) {
    FUZZ_CHECK(!kv.key.empty() && kv.key.size() <= kMaxKeyBytes);
  }
  std::string again = "stale bytes that EncodeTopList must replace";
  EncodeTopList(top, &again);
  FUZZ_CHECK(again == bytes);
}

// Bounds that DecodeKeyRange accepts are one key's [KeyPrefix, End).
void CheckKeyRangeBytes(std::string_view begin, std::string_view end) {
  uint64_t id = 0;
  std::string_view key;
  if (!DecodeKeyRange(begin, end, &id, &key)) return;
  FUZZ_CHECK(StorableKey(key));
  const KeyPrefix prefix(id, key);
  FUZZ_CHECK(prefix.bytes() == begin);
  std::string again;
  prefix.End(&again);
  FUZZ_CHECK(again == end);
}

// Everything [prefix, End) holds starts with the prefix, and End follows
// every key that does.
void CheckInRange(const KeyPrefix& prefix, std::string_view end,
                  std::string_view key) {
  FUZZ_CHECK(key.substr(0, prefix.bytes().size()) == prefix.bytes());
  FUZZ_CHECK(prefix.bytes() <= key && key < end);
}

// Valid parts chosen by the fuzzer: encode, decode, compare.
void CheckKeyedRoundTrip(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  // u64be(id + 1) is End of a named prefix: ids stop below UINT64_MAX.
  const uint64_t id = fdp.ConsumeIntegralInRange<uint64_t>(0, UINT64_MAX - 1);
  std::string keys[2];
  for (std::string& k : keys) {
    k = fdp.ConsumeRandomLengthString(kMaxKeyBytes);
    k.erase(std::remove(k.begin(), k.end(), kKeyEnd), k.end());
  }
  const std::string& key = keys[0];
  // A named counter's shard index and bucket keep byte 8 zero.
  const uint32_t shard =
      key.empty() ? fdp.ConsumeIntegralInRange<uint32_t>(0, kMaxShards - 1)
                  : fdp.ConsumeIntegral<uint32_t>();
  const int64_t bucket =
      fdp.ConsumeBool() ? kNoBucket
                        : fdp.ConsumeIntegralInRange<int64_t>(
                              0, key.empty() ? kMaxEventTimeMs : INT64_MAX);
  std::string event_id = fdp.ConsumeRemainingBytesAsString();
  event_id.erase(std::remove(event_id.begin(), event_id.end(), kKeyEnd),
                 event_id.end());
  if (event_id.size() > kMaxEventIdBytes) event_id.resize(kMaxEventIdBytes);
  if (event_id.empty()) event_id = "e";

  const KeyPrefix prefix(id, key);
  FUZZ_CHECK(prefix.keyed() == !key.empty());
  std::string end;
  prefix.End(&end);

  uint64_t rid = 0;
  std::string_view rkey;
  FUZZ_CHECK(DecodeKeyRange(prefix.bytes(), end, &rid, &rkey) == !key.empty());
  if (!key.empty()) FUZZ_CHECK(rid == id && rkey == key);

  char shard_key[kMaxShardKeyBytes];
  const size_t n = EncodeShardKeyOf(prefix, bucket, shard, shard_key);
  const std::string_view sk(shard_key, n);
  ShardKeyParts parts;
  FUZZ_CHECK(DecodeAnyShardKey(sk, &parts));
  FUZZ_CHECK(parts.counter_id == id && parts.key == key &&
             parts.bucket == bucket && parts.shard == shard);
  CheckInRange(prefix, end, sk);
  // The named grammars' own decoders read the same bytes the same way.
  if (key.empty() && bucket == kNoBucket) {
    uint64_t nid = 0;
    uint32_t nshard = 0;
    FUZZ_CHECK(DecodeShardKey(sk, &nid, &nshard) && nid == id &&
               nshard == shard);
  }

  std::string mk;
  EncodeMarkerKeyOf(prefix, event_id, &mk);
  uint64_t mid = 0;
  std::string_view mkey, mevent;
  FUZZ_CHECK(DecodeAnyMarkerKey(mk, &mid, &mkey, &mevent));
  FUZZ_CHECK(mid == id && mkey == key && mevent == event_id);
  CheckInRange(prefix, end, mk);
  if (key.empty()) {
    std::string named;
    EncodeMarkerKey(id, event_id, &named);
    FUZZ_CHECK(named == mk);
  }

  // Two keys of one counter: their ranges are disjoint and sort as the
  // keys do (a named counter's prefix, no key, holds every key's range).
  const std::string& other = keys[1];
  if (!key.empty() && !other.empty() && other != key) {
    const KeyPrefix op(id, other);
    std::string oend;
    op.End(&oend);
    FUZZ_CHECK((key < other) == (prefix.bytes() < op.bytes()));
    FUZZ_CHECK(std::string_view(end) <= op.bytes() ||
               std::string_view(oend) <= prefix.bytes());
    FUZZ_CHECK(!(op.bytes() <= sk && sk < std::string_view(oend)));
    // Both lie inside the counter's whole range.
    const KeyPrefix whole(id, {});
    std::string wend;
    whole.End(&wend);
    CheckInRange(whole, wend, prefix.bytes());
    CheckInRange(whole, wend, end);
    CheckInRange(whole, wend, oend);
  }
}

// A top list of fuzzer-chosen entries: encodes and decodes to itself, and
// no proper prefix of its bytes, nor the bytes with one more, decodes.
void CheckTopListRoundTrip(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  TopKeysResult top;
  top.sequence = fdp.ConsumeIntegral<uint64_t>();
  top.as_of_ms = fdp.ConsumeIntegral<int64_t>();
  top.key_count = fdp.ConsumeIntegral<uint64_t>();
  top.total = fdp.ConsumeIntegral<int64_t>();
  const size_t n = fdp.ConsumeIntegralInRange<size_t>(0, 16);
  for (size_t i = 0; i < n && fdp.remaining_bytes() > 0; ++i) {
    const int64_t value = fdp.ConsumeIntegral<int64_t>();
    std::string key = fdp.ConsumeRandomLengthString(kMaxKeyBytes);
    if (key.empty()) key = "k";
    top.keys.push_back(KeyValue{std::move(key), value});
  }
  std::string bytes;
  EncodeTopList(top, &bytes);
  TopKeysResult back;
  FUZZ_CHECK(DecodeTopList(bytes, &back));
  FUZZ_CHECK(back.sequence == top.sequence && back.as_of_ms == top.as_of_ms &&
             back.key_count == top.key_count && back.total == top.total &&
             back.keys.size() == top.keys.size());
  for (size_t i = 0; i < top.keys.size(); ++i) {
    FUZZ_CHECK(back.keys[i].key == top.keys[i].key &&
               back.keys[i].value == top.keys[i].value);
  }
  const size_t cut = fdp.ConsumeIntegralInRange<size_t>(0, bytes.size() - 1);
  FUZZ_CHECK(!DecodeTopList(std::string_view(bytes).substr(0, cut), &back));
  FUZZ_CHECK(!DecodeTopList(bytes + '\0', &back));
}

}  // namespace
}  // namespace tally::engine

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tally::engine;
  // Every check sees the whole input, so the fuzzer needs no mode byte.
  // libFuzzer's buffer is exactly `size` bytes: reading past a key trips
  // ASAN.
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  CheckShardKey(bytes);
  CheckMarkerKey(bytes);
  CheckInt64(bytes);
  CheckFixed(bytes);
  CheckMetaKey(bytes);
  CheckHexKey(bytes);
  CheckAnyShardKey(bytes);
  CheckAnyMarkerKey(bytes);
  CheckHoldKey(bytes);
  CheckTopListBytes(bytes);
  CheckKeyRangeBytes(bytes.substr(0, size / 2), bytes.substr(size / 2));
  CheckKeyedRoundTrip(data, size);
  CheckTopListRoundTrip(data, size);
  return 0;
}
