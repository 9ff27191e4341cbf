// A claim's counts on the cluster (cluster/claim_counts.h).

#include "cluster/claim_counts.h"

#include <cstdio>

#include "core/hash.h"
#include "tally/limits.h"

namespace tally::cluster {
namespace {

// Appends `bytes` with its length before it, so fields never run together.
void AppendField(std::string* s, std::string_view bytes) {
  s->append(std::to_string(bytes.size())).push_back(':');
  s->append(bytes);
}

}  // namespace

std::string DerivedEventId(std::string_view key, uint64_t token,
                           uint64_t attempt, size_t op) {
  const std::string tail = "#" + std::to_string(token) + "." +
                           std::to_string(attempt) + "." + std::to_string(op);
  std::string id = "claim:";
  if (id.size() + key.size() + tail.size() <= kMaxEventIdBytes) {
    return id.append(key).append(tail);
  }
  char hex[33];
  std::snprintf(hex, sizeof hex, "%016llx%016llx",
                static_cast<unsigned long long>(core::StableHash(key)),
                static_cast<unsigned long long>(
                    core::StableHash("claim~" + std::string(key))));
  return std::string("claim~").append(hex).append(tail);
}

DerivedCounts DeriveCounts(std::string_view key, const StoredClaim& c,
                           const Batch& counts) {
  DerivedCounts d;
  d.ids.reserve(counts.size());  // no reallocation: ops view the ids
  d.ops.reserve(counts.size());
  for (size_t i = 0; i < counts.size(); ++i) {
    const Batch::Op& op = counts.ops()[i];
    core::WriteOp w = core::WriteOp::Of(op);
    if (!op.once) {
      d.ids.push_back(DerivedEventId(key, c.rec.token, c.attempt, i));
      w.once = true;
      w.event_id = d.ids.back();
      if (w.event_time_ms == kEventTimeNow) w.event_time_ms = c.rec.ended_at_ms;
    }
    d.ops.push_back(w);
  }
  return d;
}

uint64_t CountsDigest(const Batch& counts) {
  std::string all;
  for (const Batch::Op& op : counts.ops()) {
    for (const std::string* f :
         {&op.counter, &op.key, &op.event_id, &op.affinity_key}) {
      AppendField(&all, *f);
    }
    AppendField(&all, std::to_string(op.delta) + " " +
                          std::to_string(op.event_time_ms) + " " +
                          std::to_string(op.once) + " " +
                          std::to_string(op.saturate));
  }
  return core::StableHash(all);
}

}  // namespace tally::cluster
