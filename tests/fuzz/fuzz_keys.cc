// Fuzzes the key and value coding of engine/coding.h with arbitrary bytes,
// as they could come back from a damaged database: every decoder accepts
// exactly the lengths docs/format.md allows, and whatever it accepts
// re-encodes to the same bytes. Also checks the encoders' own invariants
// (meta key tag, HexKey shape) on fuzzer-chosen names and ids.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/coding.h"
#include "engine/format.h"
#include "fuzz_check.h"

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
  return 0;
}
