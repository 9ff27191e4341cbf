// The shards family's records (docs/format.md, "shards"): a counter's shard
// keys, plain or bucketed, and their values or merge operands.

#include "engine/family_record.h"

namespace tally::engine {

std::string DecodeShardsKey(std::string_view key, FamilyRecord* out) {
  out->kind = RecordKind::kShard;
  ShardKeyParts parts;
  if (!DecodeAnyShardKey(key, &parts)) {
    return "a shard key is 12 or 20 bytes, or keyed (id, key, 0x00, "
           "[bucket], shard)";
  }
  out->counter_id = parts.counter_id;
  out->counter_key = std::string(parts.key);
  out->bucket_ms = parts.bucket;
  out->shard = parts.shard;
  return "";
}

std::string DecodeShardsValue(std::string_view value, FamilyRecord* out) {
  out->shard_state = DecodeShardValue(value, &out->shard_value);
  if (out->shard_state != ShardValue::kMalformed) return "";
  return "malformed value (" + std::to_string(value.size()) +
         " bytes, expected 8 or 16)";
}

std::string RenderShards(WriteKind write, const FamilyRecord& rec,
                         DumpOp* out) {
  out->op = write == WriteKind::kMerge ? "merge"
            : write == WriteKind::kPut ? "shard-put"
                                       : "shard-delete";
  out->fields = {CounterField(rec.counter_id)};
  if (!rec.counter_key.empty()) {
    out->fields.push_back(TextField("key", rec.counter_key));
  }
  if (rec.bucket_ms != kNoBucket) {
    out->fields.push_back(TimeField("bucket", rec.bucket_ms));
  }
  out->fields.push_back(UintField("shard", rec.shard));
  if (write == WriteKind::kDelete) return "";
  // The WAL holds operands and puts of int64 values; a wide (16-byte) sum
  // is only ever written by compaction, into table files.
  if (rec.shard_state != ShardValue::kExact ||
      rec.shard_value != static_cast<int64_t>(rec.shard_value)) {
    return "a shard value or operand in the WAL is an int64";
  }
  const auto v = static_cast<int64_t>(rec.shard_value);
  out->fields.push_back(write == WriteKind::kMerge ? DeltaField(v)
                                                   : IntField("value", v));
  return "";
}

}  // namespace tally::engine
