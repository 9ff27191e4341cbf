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
#include "tally/status.h"
#include "tally/types.h"

namespace tally {

// Entries with seq > after_seq, in seq order, at most `limit`
// (1..kMaxOutboxRead), never skipping one still committing: a writer
// returns only entries whose seq and every smaller one are settled; a
// read-only instance returns them while their seqs follow on, stepping
// over a missing seq only when its view proves it dead (an entry reserved
// after it settled, the recorded watermark or the acknowledged cursor).
// A failed commit's seqs are proven dead by the writer's next entry, or
// at once, or at its next open (docs/sync.md).
Result<std::vector<OutboxEntry>> ReadOutbox(Db& db, uint64_t after_seq,
                                            size_t limit);

// Deletes every entry with seq <= through_seq (durably). Idempotent;
// InvalidArgument beyond the last settled seq. Writers only.
Status AckOutbox(Db& db, uint64_t through_seq);

// Where the outbox stands: entries, cursor, last seq, oldest entry's age.
Result<OutboxStatus> GetOutboxStatus(Db& db);

// The database's id: 32 hex characters, random at creation, copied by
// checkpoints and backups (and so shared by copies: SyncOutbox uses it
// only for per-device hub shards; entry identities are the origins).
Result<std::string> DatabaseId(Db& db);

}  // namespace tally

#endif  // TALLY_OUTBOX_H_
