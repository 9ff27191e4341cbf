// Key and value coding. Fixed-width integers in keys are big-endian so that
// RocksDB's bytewise order sorts them numerically; shard values are
// little-endian int64 (docs/format.md).

#ifndef TALLY_ENGINE_CODING_H_
#define TALLY_ENGINE_CODING_H_

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>

#include "engine/format.h"
#include "tally/limits.h"

namespace tally::engine {

// The stored value of a shard whose sum left int64 (sticky; docs/format.md).
inline constexpr int64_t kOverflowedValue = std::numeric_limits<int64_t>::min();

inline void EncodeFixed64BE(uint64_t v, char* out) {
  for (int i = 7; i >= 0; --i) {
    out[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
}
inline uint64_t DecodeFixed64BE(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}
inline void EncodeFixed32BE(uint32_t v, char* out) {
  for (int i = 3; i >= 0; --i) {
    out[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
}
inline uint32_t DecodeFixed32BE(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

// Shard values and merge operands: 8-byte little-endian two's complement.
inline void EncodeInt64(int64_t v, char out[kValueBytes]) {
  uint64_t u = static_cast<uint64_t>(v);
  for (int i = 0; i < 8; ++i) {
    out[i] = static_cast<char>(u & 0xff);
    u >>= 8;
  }
}
// False when `bytes` is not exactly 8 bytes: a malformed value is never 0.
inline bool DecodeInt64(std::string_view bytes, int64_t* v) {
  if (bytes.size() != kValueBytes) return false;
  uint64_t u = 0;
  for (int i = 7; i >= 0; --i) u = (u << 8) | static_cast<uint8_t>(bytes[i]);
  *v = static_cast<int64_t>(u);
  return true;
}

// A shard's exact value: wider than int64 so that any order of merges keeps
// every intermediate sum (docs/format.md, "wide shard values").
using ShardSum = __int128;

// The exact sum of shard values, in 128 bits plus a carry word, so the
// order of the additions never matters (a sum may leave 128 bits and come
// back). Fits() when the total lies within 128 bits; value() is then it.
class ExactSum {
 public:
  void Add(ShardSum v) {
    const auto u = static_cast<unsigned __int128>(v);
    const unsigned __int128 lo = lo_ + u;
    if (lo < lo_) ++hi_;  // carry out of the low word
    if (v < 0) --hi_;     // v's high word is all ones
    lo_ = lo;
  }
  bool Fits() const { return hi_ == ((lo_ >> 127) != 0 ? -1 : 0); }
  ShardSum value() const { return static_cast<ShardSum>(lo_); }

 private:
  unsigned __int128 lo_ = 0;
  int64_t hi_ = 0;  // moves by at most 1 per Add: cannot overflow
};

// Decimal digits of `v` (std::to_string stops at 64 bits).
std::string DecimalString(ShardSum v);

// A stored shard value or merge operand, decoded.
enum class ShardValue {
  kExact,       // *v holds the value (8 bytes, or 16 for a wide sum)
  kOverflowed,  // i64le(INT64_MIN): the sticky overflowed state
  kMalformed,   // neither 8 nor 16 bytes: the corrupt state
};
ShardValue DecodeShardValue(std::string_view bytes, ShardSum* v);
// The stored form of an exact sum: i64le when it lies in
// [INT64_MIN+1, INT64_MAX], else i128le. Replaces *out.
void EncodeShardValue(ShardSum v, std::string* out);

// shards CF key: counter id (8, BE) + shard index (4, BE).
inline void EncodeShardKey(uint64_t counter_id, uint32_t shard,
                           char out[kShardKeyBytes]) {
  EncodeFixed64BE(counter_id, out);
  EncodeFixed32BE(shard, out + kCounterIdBytes);
}
bool DecodeShardKey(std::string_view key, uint64_t* counter_id,
                    uint32_t* shard);

// shards CF key of a bucketed counter: counter id (8, BE) + bucket start in
// ms since the Unix epoch (8, BE; never negative) + shard index (4, BE), so
// one counter's buckets sort by time and a time range is one key range.
inline void EncodeBucketShardKey(uint64_t counter_id, int64_t bucket_start_ms,
                                 uint32_t shard,
                                 char out[kBucketShardKeyBytes]) {
  EncodeFixed64BE(counter_id, out);
  EncodeFixed64BE(static_cast<uint64_t>(bucket_start_ms),
                  out + kCounterIdBytes);
  EncodeFixed32BE(shard, out + kCounterIdBytes + 8);
}
bool DecodeBucketShardKey(std::string_view key, uint64_t* counter_id,
                          int64_t* bucket_start_ms, uint32_t* shard);

// The 8-byte prefix every shard and marker key of one counter starts with.
inline void EncodeCounterPrefix(uint64_t counter_id,
                                char out[kCounterIdBytes]) {
  EncodeFixed64BE(counter_id, out);
}

// events CF key: counter id (8, BE) + event id bytes. Replaces *out.
void EncodeMarkerKey(uint64_t counter_id, std::string_view event_id,
                     std::string* out);
bool DecodeMarkerKey(std::string_view key, uint64_t* counter_id,
                     std::string_view* event_id);

// ---- keyed counters (docs/format.md, "Keyed counters") ----
// A key of a keyed counter sits between the counter id and the rest of its
// shard and marker keys, closed by kKeyEnd. Keys, names and event ids never
// hold a control character, and byte 8 of a named counter's shard key is
// always 0 (the high byte of a shard index below 2^24 or of a bucket start
// below 2^56 ms), so every key says by itself which grammar it follows: a
// shard key is keyed when byte 8 is not 0, a marker key when a 0 byte
// follows the id.
inline constexpr char kKeyEnd = '\0';
static_assert(kMaxShards < (1u << 24), "byte 8 of a named shard key is 0");
static_assert(kMaxEventTimeMs < (int64_t{1} << 56),
              "byte 8 of a bucketed named shard key is 0");
inline constexpr size_t kMaxKeyPrefixBytes = kCounterIdBytes + kMaxKeyBytes + 1;
inline constexpr size_t kMaxShardKeyBytes = kMaxKeyPrefixBytes + 8 + 4;

// The bytes every shard and marker key of one counter (`key` empty) or of
// one key of a keyed counter starts with: u64be(id), or u64be(id) + key +
// 0x00. On the stack: no allocation. `key` must be valid (at most
// kMaxKeyBytes, no 0 byte).
class KeyPrefix {
 public:
  KeyPrefix(uint64_t counter_id, std::string_view key);
  std::string_view bytes() const { return {buf_, size_}; }
  bool keyed() const { return size_ > static_cast<size_t>(kCounterIdBytes); }
  // The first key after every key that starts with bytes(): u64be(id + 1),
  // or the prefix with its closing 0x00 raised to 0x01. Replaces *out.
  void End(std::string* out) const;

 private:
  char buf_[kMaxKeyPrefixBytes];
  size_t size_;
};

// A shard key: prefix, then the bucket start (u64be, bucketed counters
// only: kNoBucket otherwise), then u32be(shard). Writes at most
// kMaxShardKeyBytes into `out`; returns the key's size.
size_t EncodeShardKeyOf(const KeyPrefix& prefix, int64_t bucket_start_ms,
                        uint32_t shard, char* out);

// Any shard key, named or keyed, plain or bucketed, split into its parts
// (`key` empty for a named counter; bucket kNoBucket when not bucketed).
// `key` views the input. False when the bytes follow no shard-key grammar.
struct ShardKeyParts {
  uint64_t counter_id = 0;
  std::string_view key;
  int64_t bucket = -1;  // kNoBucket (core/buckets.h)
  uint32_t shard = 0;
};
bool DecodeAnyShardKey(std::string_view bytes, ShardKeyParts* out);

// events CF key of a key of a keyed counter: counter id (8, BE) + key +
// 0x00 + event id; of a named counter (`key` empty), EncodeMarkerKey's.
// Replaces *out.
void EncodeMarkerKeyOf(const KeyPrefix& prefix, std::string_view event_id,
                       std::string* out);
// The same key appended to *out.
void AppendMarkerKeyOf(const KeyPrefix& prefix, std::string_view event_id,
                       std::string* out);
// Any marker key; `key` empty for a named counter's. Views the input.
bool DecodeAnyMarkerKey(std::string_view bytes, uint64_t* counter_id,
                        std::string_view* key, std::string_view* event_id);

// holds CF (format 7): a reservation's key, u64be(id) + tag + key (empty
// for a named counter) + 0x00 + reservation id, where the tag is
// kOpenHoldTag while it is held and kClosedHoldTag once decided: one key's
// open holds are one range (HoldRange), read by every write of the key.
inline constexpr char kOpenHoldTag = '\x01';
inline constexpr char kClosedHoldTag = '\x02';
// Replaces *out.
void EncodeHoldKey(uint64_t counter_id, char tag, std::string_view key,
                   std::string_view reservation_id, std::string* out);
// The range of one key's holds of one tag: [begin, end). Replaces both.
void HoldRange(uint64_t counter_id, char tag, std::string_view key,
               std::string* begin, std::string* end);
// Any hold key split into its parts (views of the input); false when the
// bytes follow no hold-key grammar.
bool DecodeHoldKey(std::string_view bytes, uint64_t* counter_id, char* tag,
                   std::string_view* key, std::string_view* reservation_id);

// The range [KeyPrefix(id, key), its End()) that deletes one key of a keyed
// counter (Db::DeleteKey), split into the counter id and the key (a view of
// `begin`). False for any other pair of bounds (a whole counter's range is
// no key's).
bool DecodeKeyRange(std::string_view begin, std::string_view end,
                    uint64_t* counter_id, std::string_view* key);

// rollups CF key of a keyed counter's top list: u64be(id) + 0x01.
inline constexpr char kTopListTag = '\x01';
inline constexpr size_t kTopListKeyBytes = kCounterIdBytes + 1;

// rollups CF value: the cached total of one counter (key: its 8-byte
// prefix). value i64le || sequence u64le || as_of_ms i64le, 24 bytes.
inline constexpr size_t kRollupBytes = 24;
struct RollupRecord {
  int64_t value = 0;
  uint64_t sequence = 0;  // the RocksDB sequence number the value reflects
  int64_t as_of_ms = 0;   // Options::clock when it was taken
};
void EncodeRollup(const RollupRecord& r, char out[kRollupBytes]);
bool DecodeRollup(std::string_view bytes, RollupRecord* r);

// meta CF key of a counter: tag 0x02 + name bytes.
std::string CounterMetaKey(std::string_view name);

// meta CF key of an unfinished import of counter `id`: tag 0x05 (kImportKeyTag) + u64be(id).
std::string ImportMetaKey(uint64_t id);
// The id of an ImportMetaKey; false if `key` is not one.
bool DecodeImportMetaKey(std::string_view key, uint64_t* id);

// Printable form of a key for error messages ("0000000000000007:0003").
std::string HexKey(std::string_view key);

}  // namespace tally::engine

#endif  // TALLY_ENGINE_CODING_H_
