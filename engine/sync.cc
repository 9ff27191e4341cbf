// SyncOutbox (tally/sync.h): edge outbox -> hub once-increments -> ack.
// Written against the public Db interface only.

#include "tally/sync.h"

#include <string>
#include <vector>

#include "tally/batch.h"
#include "tally/limits.h"
#include "tally/outbox.h"

namespace tally {
namespace {

// The entry's identity: unique across databases, copies and power cuts
// (tally/types.h, OutboxEntry::origin).
std::string HubEventId(const OutboxEntry& e) {
  return e.origin + "/" + std::to_string(e.origin_seq);
}

// The hub's answer to one entry: applied or duplicate, else the error that
// stops the sync (nothing of the batch is acknowledged).
Status CheckResult(const OutboxEntry& e, const std::string& hub_id,
                   const IncrementResult& r, SyncReport* report) {
  switch (r.outcome) {
    case Outcome::kApplied:
      ++report->applied;
      return Status::OK();
    case Outcome::kDuplicate:
      ++report->duplicates;
      return Status::OK();
    case Outcome::kConflict:
      return Status::Corruption("the hub holds event " + hub_id +
                                " of counter '" + e.counter +
                                "' with another delta than the edge's " +
                                std::to_string(e.delta));
    case Outcome::kOutsideWindow:
      break;
  }
  return Status::InvalidArgument(
      "outbox entry " + std::to_string(e.seq) + " of counter '" + e.counter +
      "' (time " + std::to_string(e.time_ms) +
      " ms) is older than the hub counter's dedupe window; not acknowledged");
}

}  // namespace

Status SyncOutbox(Db* edge, Db* hub, const SyncOptions& options,
                  SyncReport* report) {
  *report = SyncReport();
  if (options.batch_entries < 1 || options.batch_entries > kMaxBatchOps) {
    return Status::InvalidArgument(
        "sync batch of " + std::to_string(options.batch_entries) +
        " entries is outside 1.." + std::to_string(kMaxBatchOps));
  }
  Result<std::string> edge_id = tally::DatabaseId(*edge);
  if (!edge_id.ok()) return edge_id.status();
  Result<OutboxStatus> status = tally::GetOutboxStatus(*edge);
  if (!status.ok()) return status.status();
  uint64_t cursor = status->acked_through;
  const std::string affinity = options.shard_by_edge ? *edge_id : "";

  Batch batch;
  std::vector<IncrementResult> results;
  for (;;) {
    Result<std::vector<OutboxEntry>> entries =
        tally::ReadOutbox(*edge, cursor, options.batch_entries);
    if (!entries.ok()) return entries.status();
    if (entries->empty()) break;
    batch.Clear();
    for (const OutboxEntry& e : *entries) {
      batch.AddOnce(e.counter, HubEventId(e), e.delta,
                    OnceOptions{e.time_ms, affinity});
    }
    Status s = hub->Apply(batch, &results);
    if (!s.ok()) {
      return s.WithContext("sync to the hub stopped at outbox seq " +
                           std::to_string(entries->front().seq));
    }
    report->entries += entries->size();
    for (size_t i = 0; i < entries->size(); ++i) {
      s = CheckResult((*entries)[i], batch.ops()[i].event_id, results[i],
                      report);
      if (!s.ok()) return s;
    }
    cursor = entries->back().seq;
    s = tally::AckOutbox(*edge, cursor);
    if (!s.ok()) return s;
    report->acked_through = cursor;
    ++report->batches;
    if (options.on_batch) options.on_batch(*report);
  }
  report->acked_through = cursor;
  return Status::OK();
}

}  // namespace tally
