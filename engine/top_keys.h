// The top list of a keyed counter (the keys with the largest values, kept
// while a scan offers every key: core::TopKeeper), and its stored form in the
// rollups family at u64be(id) + 0x01 (docs/format.md, "rollups"):
//
//   sequence u64le || as_of_ms i64le || key_count u64le || total i64le ||
//   n u32le || n x (value i64le || key_len u8 || key bytes)
//
// entries largest value first, ties in key byte order; n <= kMaxTopKeys,
// key_len 1..kMaxKeyBytes.
//
// Thread safety: plain values and pure functions.

#ifndef TALLY_ENGINE_TOP_KEYS_H_
#define TALLY_ENGINE_TOP_KEYS_H_

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/top_keys.h"
#include "tally/types.h"

namespace tally::engine {

using core::TopKeeper;

// The stored top list (with TopKeysResult's sequence, as_of_ms, key_count,
// total, keys and, when there are any, the out-of-range keys' count and
// first key). Replaces *out.
void EncodeTopList(const TopKeysResult& top, std::string* out);
// False when `bytes` is not a well-formed top list.
bool DecodeTopList(std::string_view bytes, TopKeysResult* top);

}  // namespace tally::engine

#endif  // TALLY_ENGINE_TOP_KEYS_H_
