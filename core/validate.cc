#include "core/validate.h"

#include <cassert>

#include "tally/limits.h"
#include "tally/text.h"

namespace tally::core {
namespace {

// Whether every byte is printable ASCII (0x20..0x7e): such text is valid
// UTF-8 and holds no control character, checked with one compare per byte
// instead of the two scans below (an event id and a key per once-increment).
bool IsPrintableAscii(std::string_view s) {
  unsigned bad = 0;
  for (const char c : s) {
    bad |= static_cast<unsigned>(static_cast<unsigned char>(c) - 0x20u) >=
           0x5fu;
  }
  return bad == 0;
}

// Names, ids and keys share one rule: 1..max bytes of UTF-8 with no control
// characters (they end up in terminals, logs and JSON).
Status ValidateText(const char* what, std::string_view s, size_t max_bytes) {
  if (s.empty()) return Status::InvalidArgument(std::string(what) + " is empty");
  if (s.size() > max_bytes) {
    return Status::InvalidArgument(std::string(what) + " " + Quote(s) + " is " +
                                   std::to_string(s.size()) +
                                   " bytes; the limit is " +
                                   std::to_string(max_bytes));
  }
  if (IsPrintableAscii(s)) return Status::OK();
  if (!IsValidUtf8(s)) {
    return Status::InvalidArgument(std::string(what) + " " + Quote(s) +
                                   " is not valid UTF-8");
  }
  if (HasControlCharacter(s)) {
    return Status::InvalidArgument(std::string(what) + " " + Quote(s) +
                                   " contains a control character");
  }
  return Status::OK();
}

}  // namespace

bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    const auto b0 = static_cast<uint8_t>(s[i]);
    if (b0 < 0x80) {
      ++i;
      continue;
    }
    int len;
    uint32_t cp;
    if ((b0 & 0xe0) == 0xc0) {
      len = 2;
      cp = b0 & 0x1f;
    } else if ((b0 & 0xf0) == 0xe0) {
      len = 3;
      cp = b0 & 0x0f;
    } else if ((b0 & 0xf8) == 0xf0) {
      len = 4;
      cp = b0 & 0x07;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (int k = 1; k < len; ++k) {
      const auto b = static_cast<uint8_t>(s[i + k]);
      if ((b & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3f);
    }
    static constexpr uint32_t kMinForLen[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMinForLen[len] || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff)) {
      return false;
    }
    i += len;
  }
  return true;
}

std::string Quote(std::string_view s) {
  constexpr size_t kShown = 64;
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < kShown; ++i) {
    const auto b = static_cast<uint8_t>(s[i]);
    if (b < 0x20 || b >= 0x7f || b == '\'' || b == '\\') {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out.push_back(kHex[b >> 4]);
      out.push_back(kHex[b & 0xf]);
    } else {
      out.push_back(static_cast<char>(b));
    }
  }
  if (s.size() > kShown) out += "...";
  out += "'";
  return out;
}

Status ValidateCounterName(std::string_view name) {
  return ValidateText("counter name", name, kMaxNameBytes);
}

Status ValidateEventId(std::string_view event_id) {
  return ValidateText("event id", event_id, kMaxEventIdBytes);
}

Status ValidateReservationId(std::string_view id) {
  return ValidateText("reservation id", id, kMaxEventIdBytes);
}

Status ValidateResetId(std::string_view id) {
  return ValidateText("reset id", id, kMaxEventIdBytes);
}

Status ValidateReset(std::string_view id, int64_t value) {
  Status s = ValidateResetId(id);
  if (s.ok() && value < kMinDelta) {
    s = Status::InvalidArgument(
        "reset value " + std::to_string(value) +
        " is reserved (the smallest accepted value is " +
        std::to_string(kMinDelta) + ")");
  }
  return s;
}

Status ValidateHold(int64_t units, int64_t hold_for_ms) {
  if (units < 1) {
    return Status::InvalidArgument("reservation units " +
                                   std::to_string(units) +
                                   " must be at least 1");
  }
  if (hold_for_ms < 1 || hold_for_ms > kMaxHoldMs) {
    return Status::InvalidArgument(
        "hold of " + std::to_string(hold_for_ms) + " ms is outside 1.." +
        std::to_string(kMaxHoldMs) + " ms (kMaxHoldMs)");
  }
  return Status::OK();
}

Status ValidateClaimKey(std::string_view key) {
  return ValidateText("claim key", key, kMaxClaimKeyBytes);
}

Status ValidateClaim(std::string_view holder, int64_t lease_ms) {
  Status s = ValidateText("claim holder", holder, kMaxHolderBytes);
  if (s.ok() && (lease_ms < 1 || lease_ms > kMaxLeaseMs)) {
    s = Status::InvalidArgument(
        "lease of " + std::to_string(lease_ms) + " ms is outside 1.." +
        std::to_string(kMaxLeaseMs) + " ms (kMaxLeaseMs)");
  }
  return s;
}

Status ValidateClaimResult(std::string_view result) {
  if (result.empty()) return Status::OK();
  return ValidateText("claim result", result, kMaxClaimResultBytes);
}

Status ValidateAffinityKey(std::string_view key) {
  return ValidateText("affinity key", key, kMaxAffinityKeyBytes);
}

Status ValidateCounterKey(std::string_view key) {
  return ValidateText("counter key", key, kMaxKeyBytes);
}

Status ValidateDelta(int64_t delta) {
  if (delta < kMinDelta) {
    return Status::InvalidArgument(
        "delta " + std::to_string(delta) +
        " is reserved (the smallest accepted delta is " +
        std::to_string(kMinDelta) + ")");
  }
  return Status::OK();
}

Status ValidateSpec(const CounterSpec& spec) {
  if (spec.shards < 1 || spec.shards > kMaxShards) {
    return Status::InvalidArgument("shard count " +
                                   std::to_string(spec.shards) +
                                   " is outside 1.." +
                                   std::to_string(kMaxShards));
  }
  if (spec.policy != ShardPolicy::kRandom &&
      spec.policy != ShardPolicy::kAffinity) {
    return Status::InvalidArgument(
        "shard policy " + std::to_string(static_cast<int>(spec.policy)) +
        " is unknown");
  }
  if (spec.dedupe_window_ms < 0 || spec.dedupe_window_ms > kMaxDedupeWindowMs) {
    return Status::InvalidArgument(
        "dedupe window " + std::to_string(spec.dedupe_window_ms) +
        " ms is outside 0.." + std::to_string(kMaxDedupeWindowMs) +
        " (0: keep markers forever)");
  }
  if (spec.bucket != BucketWidth::kNone && spec.bucket != BucketWidth::kMinute &&
      spec.bucket != BucketWidth::kHour && spec.bucket != BucketWidth::kDay) {
    return Status::InvalidArgument(
        "bucket width " + std::to_string(static_cast<int>(spec.bucket)) +
        " is unknown");
  }
  if (spec.retention_ms < 0 || spec.retention_ms > kMaxRetentionMs) {
    return Status::InvalidArgument(
        "retention " + std::to_string(spec.retention_ms) +
        " ms is outside 0.." + std::to_string(kMaxRetentionMs) +
        " (0: keep buckets forever)");
  }
  if (spec.retention_ms != 0 && spec.bucket == BucketWidth::kNone) {
    return Status::InvalidArgument(
        "retention " + std::to_string(spec.retention_ms) +
        " ms needs a bucketed counter (bucket minute, hour or day)");
  }
  return ValidateBounds(spec);
}

Status ValidateBounds(const CounterSpec& spec) {
  const CounterBounds& b = spec.bounds;
  if (spec.sliding) {
    const int64_t width = BucketWidthMs(spec.bucket);
    if (width == 0 || !b.has_max || !b.has_min || b.min != 0) {
      return Status::InvalidArgument(
          "a sliding window is a quota's: it needs time buckets, minimum 0 "
          "and a maximum");
    }
    if (spec.retention_ms != 0 && spec.retention_ms < width) {
      return Status::InvalidArgument(
          "a sliding quota reads the previous window: retention " +
          std::to_string(spec.retention_ms) +
          " ms must be 0 (forever) or at least the bucket width " +
          std::to_string(width) + " ms");
    }
  }
  if (!b.any()) return Status::OK();
  if (b.has_min && b.min > 0) {
    return Status::InvalidArgument("minimum " + std::to_string(b.min) +
                                   " is above 0, where a counter starts");
  }
  if (b.has_max && b.max < 0) {
    return Status::InvalidArgument("maximum " + std::to_string(b.max) +
                                   " is below 0, where a counter starts");
  }
  if (spec.shards != 1) {
    return Status::InvalidArgument(
        "a strict counter (with a minimum or maximum) is never sharded: "
        "shard count " + std::to_string(spec.shards) + " must be 1");
  }
  if (spec.outbox) {
    return Status::NotSupported(
        "a strict counter with an outbox is not supported yet");
  }
  return Status::OK();
}

Status ValidateEventTime(int64_t event_time_ms) {
  if (event_time_ms == kEventTimeNow) return Status::OK();
  if (event_time_ms < kMinEventTimeMs || event_time_ms > kMaxEventTimeMs) {
    return Status::InvalidArgument(
        "event time " + std::to_string(event_time_ms) + " ms is outside " +
        std::to_string(kMinEventTimeMs) + ".." +
        std::to_string(kMaxEventTimeMs) + " (1970 to the end of 9999, UTC)");
  }
  return Status::OK();
}

Status ValidateRange(int64_t from_ms, int64_t to_ms) {
  Status s = ValidateEventTime(from_ms);
  if (s.ok()) s = ValidateEventTime(to_ms);
  if (s.ok() && (from_ms == kEventTimeNow || to_ms == kEventTimeNow)) {
    s = Status::InvalidArgument("a range read needs both ends");
  }
  if (s.ok() && from_ms >= to_ms) {
    s = Status::InvalidArgument("range from " + std::to_string(from_ms) +
                                " ms to " + std::to_string(to_ms) +
                                " ms is empty (from must be before to)");
  }
  return s;
}

Status CheckBucketed(const CounterInfo& c) {
  if (c.bucket != BucketWidth::kNone) return Status::OK();
  return Status::InvalidArgument("counter " + Quote(c.name) +
                                 " has no time buckets; read it whole");
}

Status TooManyBuckets(const CounterInfo& c) {
  return Status::InvalidArgument(
      "counter " + Quote(c.name) + ": the read spans more than " +
      std::to_string(kMaxReadBuckets) +
      " time buckets, the most one read scans (kMaxReadBuckets); read "
      "shorter ranges with ReadRange, or keep fewer buckets with a retention");
}

CounterSpec SpecOf(const CounterInfo& info) {
  CounterSpec spec;
  spec.shards = info.shards;
  spec.policy = info.policy;
  spec.dedupe_window_ms = info.dedupe_window_ms;
  spec.bucket = info.bucket;
  spec.retention_ms = info.retention_ms;
  spec.outbox = info.outbox;
  spec.keyed = info.keyed;
  spec.sliding = info.sliding;
  spec.bounds = info.bounds;
  return spec;
}

namespace {

// InvalidArgument "FIELD VALUE is outside LO..HI[NOTE]" unless lo <= v <= hi.
Status CheckRange(const char* field, uint64_t v, uint64_t lo, uint64_t hi,
                  const char* note = "") {
  assert(lo <= hi);
  if (v >= lo && v <= hi) return Status::OK();
  return Status::InvalidArgument(std::string(field) + " " + std::to_string(v) +
                                 " is outside " + std::to_string(lo) + ".." +
                                 std::to_string(hi) + note);
}

}  // namespace

Status ValidateGroupCommit(const Options& options) {
  Status s =
      CheckRange("group_commit_max_bytes", options.group_commit_max_bytes, 1,
                 kMaxGroupCommitBytes);
  if (s.ok()) {
    s = CheckRange("group_commit_max_ops", options.group_commit_max_ops, 1,
                   kMaxGroupCommitOps);
  }
  if (s.ok()) {
    s = CheckRange("group_commit_max_delay_us",
                   options.group_commit_max_delay_us, 0,
                   kMaxGroupCommitDelayUs);
  }
  return s;
}

Status ValidateOptions(const Options& o) {
  Status s = CheckRange("block_cache_bytes", o.block_cache_bytes,
                        kMinBlockCacheBytes, kMaxBlockCacheBytes);
  if (s.ok()) {
    s = CheckRange("write_buffer_bytes", o.write_buffer_bytes,
                   kMinWriteBufferBytes, kMaxWriteBufferBytes);
  }
  if (s.ok()) {
    s = CheckRange("max_wal_bytes", o.max_wal_bytes, kMinWalBytes,
                   kMaxWalBytes);
  }
  if (s.ok()) {
    s = CheckRange("max_pending_operands", o.max_pending_operands, 0,
                   kMaxPendingOperands, " (0: no bound)");
  }
  if (s.ok()) {
    s = CheckRange("event_lock_stripes", o.event_lock_stripes, 1,
                   kMaxEventLockStripes);
  }
  if (s.ok()) {
    s = CheckRange("rollup_interval_ms", o.rollup_interval_ms, 0,
                   kMaxRollupIntervalMs, " (0: no roll-up thread)");
  }
  if (s.ok() && o.stats_publish_interval_ms != 0) {
    s = CheckRange("stats_publish_interval_ms", o.stats_publish_interval_ms,
                   kMinStatsPublishIntervalMs, kMaxStatsPublishIntervalMs,
                   " (or 0: not published)");
  }
  if (s.ok() && o.expiry_sweep_seconds != 0) {
    s = CheckRange("expiry_sweep_seconds", o.expiry_sweep_seconds,
                   kMinExpirySweepSeconds, kMaxExpirySweepSeconds,
                   " (or 0: RocksDB's default)");
  }
  if (s.ok()) {
    s = CheckRange("outbox_max_entries", o.outbox_max_entries, 1,
                   kMaxOutboxEntries);
  }
  if (s.ok()) {
    s = CheckRange("reads", o.reads, 0, kReadAll, " (tally::kRead* bits)");
  }
  if (s.ok() && !o.read_only && o.reads != kReadAll) {
    s = Status::InvalidArgument(
        "reads " + std::to_string(o.reads) +
        " names less than everything (kReadAll, " + std::to_string(kReadAll) +
        "), but only a read_only database reads less; a writer reads all");
  }
  if (s.ok()) s = ValidateGroupCommit(o);
  return s;
}

std::string CounterKeyNaming(std::string_view counter, std::string_view key) {
  return "counter " + Quote(counter) +
         (key.empty() ? std::string() : " key " + Quote(key));
}

Status CounterNotFound(std::string_view name) {
  Status s = ValidateCounterName(name);
  if (!s.ok()) return s;
  return Status::NotFound("counter " + Quote(name) + " does not exist");
}

Status ValidateBatchSize(size_t ops) {
  if (ops <= kMaxBatchOps) return Status::OK();
  return Status::InvalidArgument("batch of " + std::to_string(ops) +
                                 " operations exceeds the limit of " +
                                 std::to_string(kMaxBatchOps));
}

Status ValidateReadKeys(const std::vector<std::string_view>& keys) {
  if (keys.empty() || keys.size() > kMaxReadKeys) {
    return Status::InvalidArgument(
        "ReadKeys of " + std::to_string(keys.size()) + " keys: give 1.." +
        std::to_string(kMaxReadKeys) + " (kMaxReadKeys)");
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    Status s = ValidateCounterKey(keys[i]);
    if (!s.ok()) return s.WithContext("key " + std::to_string(i));
  }
  return Status::OK();
}

Status ValidateListKeys(const ListKeysOptions& options) {
  if (options.limit < 1 || options.limit > kMaxListKeys) {
    return Status::InvalidArgument("key list limit " +
                                   std::to_string(options.limit) +
                                   " is outside 1.." +
                                   std::to_string(kMaxListKeys));
  }
  Status s;
  if (!options.prefix.empty()) s = ValidateCounterKey(options.prefix);
  if (s.ok() && !options.start_after.empty()) {
    s = ValidateCounterKey(options.start_after);
  }
  return s;
}

Status ValidateListMarkers(const ListMarkersOptions& options) {
  if (options.limit < 1 || options.limit > kMaxListMarkers) {
    return Status::InvalidArgument(
        "marker list limit " + std::to_string(options.limit) +
        " is outside 1.." + std::to_string(kMaxListMarkers));
  }
  return ValidateStartAfter(options.start_after, kMaxEventIdBytes,
                            "event id");
}

Status ValidateStartAfter(std::string_view start_after, size_t limit,
                          std::string_view what) {
  if (start_after.size() <= limit) return Status::OK();
  return Status::InvalidArgument(
      "start_after " + Quote(start_after) + " is " +
      std::to_string(start_after.size()) + " bytes, longer than any " +
      std::string(what) + " (the limit is " + std::to_string(limit) + ")");
}

}  // namespace tally::core
