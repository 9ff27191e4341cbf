// The outbox: the change feed of counters with CounterSpec::outbox, read
// and acknowledged by a consumer (SyncOutbox in tally/sync.h is one;
// docs/sync.md). Free functions on a Db; the data path stays on Db
// (tally/db.h).
//
// Thread safety: each may run while other threads use the same Db; one
// consumer acknowledges at a time (acknowledgements of two would race).
// Ownership: each borrows the Db for the call.

#ifndef TALLY_OUTBOX_H_
#define TALLY_OUTBOX_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tally/db.h"
#include "tally/export.h"
#include "tally/status.h"
#include "tally/types.h"

namespace tally {

// One outbox entry (tally::ReadOutbox): an applied increment of a counter with
// CounterSpec::outbox, in commit order.
struct OutboxEntry {
  // This database's position of the entry: 1, 2, ... in reservation order,
  // the cursor of ReadOutbox and AckOutbox. Never reused while the database
  // keeps its entries; a power cut that loses unsynced entries of a
  // sync=false database lets their seqs come back (with a new origin).
  uint64_t seq = 0;
  std::string counter;
  std::string event_id;  // the once-increment's id; empty for a plain one
  int64_t delta = 0;
  int64_t time_ms = 0;  // its event time (the clock's now when none given)
  // The entry's identity, unique across databases, copies and power cuts:
  // the writer incarnation that made it (32 hex chars, random at each
  // read-write open; the database id for entries of format 2) and its seq
  // there. SyncOutbox sends it to the hub as "<origin>/<origin_seq>".
  // Kept by export/import.
  std::string origin;
  uint64_t origin_seq = 0;
  std::string key{};  // the counter key (keyed counters); else empty
};

// Where a database's outbox stands (tally::GetOutboxStatus).
struct OutboxStatus {
  // Written and not yet acknowledged: last_seq - acked_through (a seq whose
  // commit failed counts until acknowledged past).
  uint64_t entries = 0;
  uint64_t acked_through = 0;  // the last acknowledged seq (0: none)
  uint64_t last_seq = 0;       // the last seq handed out (0: none)
  int64_t oldest_time_ms = 0;  // the oldest unacknowledged entry's time
  int64_t age_ms = 0;          // now - oldest_time_ms (0 when empty)
};

// Entries with seq > after_seq, in seq order, at most `limit`
// (1..kMaxOutboxRead), never skipping one still committing: a writer
// returns only entries whose seq and every smaller one are settled; a
// read-only instance returns them while their seqs follow on, stepping
// over a missing seq only when its view proves it dead (an entry reserved
// after it settled, the recorded watermark or the acknowledged cursor).
// A failed commit's seqs are proven dead by the writer's next entry, or
// at once, or at its next open (docs/sync.md).
TALLY_EXPORT Result<std::vector<OutboxEntry>> ReadOutbox(Db& db,
                                                         uint64_t after_seq,
                                                         size_t limit);

// Deletes every entry with seq <= through_seq (durably). Idempotent;
// InvalidArgument beyond the last settled seq. Writers only.
TALLY_EXPORT Status AckOutbox(Db& db, uint64_t through_seq);

// Where the outbox stands: entries, cursor, last seq, oldest entry's age.
TALLY_EXPORT Result<OutboxStatus> GetOutboxStatus(Db& db);

// The database's id: 32 hex characters, random at creation, copied by
// checkpoints and backups (and so shared by copies: SyncOutbox uses it
// only for per-device hub shards; entry identities are the origins).
TALLY_EXPORT Result<std::string> DatabaseId(Db& db);

}  // namespace tally

#endif  // TALLY_OUTBOX_H_
