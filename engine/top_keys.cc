// The top list's stored form (engine/top_keys.h, docs/format.md).

#include "engine/top_keys.h"

#include <cstring>

#include "tally/limits.h"

namespace tally::engine {
namespace {

void PutLe(uint64_t v, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) {
    out->push_back(static_cast<char>(v & 0xff));
    v >>= 8;
  }
}

bool GetLe(std::string_view* in, int bytes, uint64_t* v) {
  if (in->size() < static_cast<size_t>(bytes)) return false;
  *v = 0;
  for (int i = bytes - 1; i >= 0; --i) {
    *v = (*v << 8) | static_cast<uint8_t>((*in)[i]);
  }
  in->remove_prefix(bytes);
  return true;
}

}  // namespace

void EncodeTopList(const TopKeysResult& top, std::string* out) {
  assert(top.keys.size() <= kMaxTopKeys);
  out->clear();
  PutLe(top.sequence, 8, out);
  PutLe(static_cast<uint64_t>(top.as_of_ms), 8, out);
  PutLe(top.key_count, 8, out);
  PutLe(static_cast<uint64_t>(top.total), 8, out);
  PutLe(top.keys.size(), 4, out);
  for (const KeyValue& kv : top.keys) {
    assert(!kv.key.empty() && kv.key.size() <= kMaxKeyBytes);
    PutLe(static_cast<uint64_t>(kv.value), 8, out);
    PutLe(kv.key.size(), 1, out);
    out->append(kv.key);
  }
  // The out-of-range keys, only when there are any (docs/format.md): a
  // list without them keeps the layout older binaries read.
  if (top.out_of_range_keys == 0) return;
  assert(!top.first_out_of_range_key.empty() &&
         top.first_out_of_range_key.size() <= kMaxKeyBytes);
  PutLe(top.out_of_range_keys, 8, out);
  PutLe(top.first_out_of_range_key.size(), 1, out);
  out->append(top.first_out_of_range_key);
}

bool DecodeTopList(std::string_view in, TopKeysResult* top) {
  uint64_t seq, as_of, keys, total, n;
  if (!GetLe(&in, 8, &seq) || !GetLe(&in, 8, &as_of) ||
      !GetLe(&in, 8, &keys) || !GetLe(&in, 8, &total) || !GetLe(&in, 4, &n) ||
      n > kMaxTopKeys) {
    return false;
  }
  top->sequence = seq;
  top->as_of_ms = static_cast<int64_t>(as_of);
  top->key_count = keys;
  top->total = static_cast<int64_t>(total);
  top->keys.clear();
  top->keys.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t value, len;
    if (!GetLe(&in, 8, &value) || !GetLe(&in, 1, &len) || len == 0 ||
        len > kMaxKeyBytes || in.size() < len) {
      return false;
    }
    top->keys.push_back(KeyValue{std::string(in.substr(0, len)),
                                 static_cast<int64_t>(value)});
    in.remove_prefix(len);
  }
  top->out_of_range_keys = 0;
  top->first_out_of_range_key.clear();
  if (in.empty()) return true;
  uint64_t bad, len;
  if (!GetLe(&in, 8, &bad) || bad == 0 || bad > keys || !GetLe(&in, 1, &len) ||
      len == 0 || len > kMaxKeyBytes || in.size() != len) {
    return false;
  }
  top->out_of_range_keys = bad;
  top->first_out_of_range_key.assign(in);
  return true;
}

}  // namespace tally::engine
