// SyncOutbox: ships what an edge database counted to a hub database,
// exactly once (docs/sync.md).
//
// Each unacknowledged outbox entry of the edge becomes a once-increment on
// the hub's counter of the same name, with event id "<origin>/<origin_seq>"
// (the entry's identity, OutboxEntry in tally/outbox.h), the entry's delta
// and its time as event time; a batch of them is applied in one atomic
// write, then acknowledged on the edge. A crash anywhere (SIGKILL, power
// loss with Options::sync on the hub, power loss on a sync=false edge)
// followed by another SyncOutbox never loses or doubles an entry: entries
// the hub already holds come back as duplicates and are acknowledged again,
// and entries written after a reopen, or by a copy of the edge (checkpoint,
// restored backup, a directory copy), have a new origin, so they never
// collide with ones the hub holds. (Power loss on a sync=false edge still
// loses the edge's own unsynced increments with their entries.)
//
// Thread safety: SyncOutbox may run while other threads use both databases;
// two syncs of the same edge must not run at once (the second would only
// find duplicates, but its acknowledgements could race the first's).
// Ownership: borrows both databases for the call.

#ifndef TALLY_SYNC_H_
#define TALLY_SYNC_H_

#include <cstddef>
#include <cstdint>
#include <functional>

#include "tally/db.h"
#include "tally/export.h"
#include "tally/status.h"

namespace tally {

struct SyncOptions {
  // Entries per hub write (1..kMaxBatchOps). Default: 1000.
  size_t batch_entries = 1000;
  // Put each edge's increments in its own hub shard (the hash of the edge's
  // database id), so the hub's ShardCounts attribute them per device.
  // Default: true. false: the hash of the event id picks the shard. That
  // hub shard's partial sums may leave int64 where no edge shard did; shard
  // values keep exact sums beyond int64, so the hub still reads what the
  // edge reads (docs/sync.md, "Overflow on the hub").
  bool shard_by_edge = true;
  // Called after each batch is acknowledged on the edge, with the report so
  // far (progress; tests use it to stop at a chosen point). May be empty.
  std::function<void(const struct SyncReport&)> on_batch;
};

struct SyncReport {
  uint64_t entries = 0;     // outbox entries read from the edge
  uint64_t applied = 0;     // counted on the hub now
  uint64_t duplicates = 0;  // already on the hub (an earlier, cut sync)
  uint64_t batches = 0;
  uint64_t acked_through = 0;  // the edge's outbox cursor afterwards
};

// Syncs until the edge's outbox has nothing settled left. Stops at the
// first error without acknowledging the failed batch: NotFound when the
// hub lacks a counter (create it there first), InvalidArgument when the hub
// refuses an entry (e.g. outside its counter's dedupe window), Corruption
// when the hub holds an entry's id with another delta.
TALLY_EXPORT Status SyncOutbox(Db* edge, Db* hub, const SyncOptions& options,
                               SyncReport* report);

}  // namespace tally

#endif  // TALLY_SYNC_H_
