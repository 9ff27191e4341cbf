// SyncOutbox (tally/sync.h): edge outbox -> hub once-increments -> ack.
// Written against the public Db interface only.

#include "tally/sync.h"

#include <map>
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

// "counter 'NAME'", with " key 'KEY'" for an entry of a keyed counter.
std::string CounterOf(const OutboxEntry& e) {
  std::string out = "counter '" + e.counter + "'";
  if (!e.key.empty()) out += " key '" + e.key + "'";
  return out;
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
      return Status::Corruption(
          "the hub holds event " + hub_id + " of " + CounterOf(e) +
          " with another delta than the edge's " + std::to_string(e.delta));
    case Outcome::kRefused:
      return Status::OutOfRange(
          "the hub's strict counter refused event " + hub_id + " of " +
          CounterOf(e) + " (delta " + std::to_string(e.delta) +
          ") at a bound earlier; not acknowledged");
    case Outcome::kOutsideWindow:
      break;
  }
  return Status::InvalidArgument(
      "outbox entry " + std::to_string(e.seq) + " of " + CounterOf(e) +
      " (time " + std::to_string(e.time_ms) +
      " ms) is older than the hub counter's dedupe window; not acknowledged");
}

// Why the hub refused a page: the first entry whose key does not fit its
// hub counter (a keyed counter's entry carries its key, a named counter's
// none), named with its seq, identity, counter and key; else `refused`.
// Looked up only once a page was refused, so a sync that goes through
// asks nothing more of the hub than its Apply.
Status ExplainRefusal(Db* hub, const std::vector<OutboxEntry>& entries,
                      const Status& refused) {
  std::map<std::string, bool> keyed;  // the page's hub counters
  for (const OutboxEntry& e : entries) {
    auto found = keyed.find(e.counter);
    if (found == keyed.end()) {
      Result<CounterInfo> info = hub->DescribeCounter(e.counter);
      if (!info.ok()) continue;  // the refusal says why
      found = keyed.emplace(e.counter, info->keyed).first;
    }
    if (found->second == !e.key.empty()) continue;
    const std::string what = "outbox entry " + std::to_string(e.seq) + " (" +
                             HubEventId(e) + ") of " + CounterOf(e);
    return Status::InvalidArgument(
        what +
        (found->second ? " has no key, but the hub's counter is keyed"
                       : ": the hub's counter is not keyed") +
        "; none of the " + std::to_string(entries.size()) +
        " entries of its batch (seqs " + std::to_string(entries.front().seq) +
        ".." + std::to_string(entries.back().seq) +
        ") was applied or acknowledged");
  }
  return refused;
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
      // The hub counts per (counter, key), once per entry identity.
      batch.AddOnce(CounterRef(e.counter, e.key), HubEventId(e), e.delta,
                    OnceOptions{e.time_ms, affinity});
    }
    Status s = hub->Apply(batch, &results);
    if (s.IsInvalidArgument()) s = ExplainRefusal(hub, *entries, s);
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
