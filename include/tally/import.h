// Import: restoring an export (see counterctl export/import) into an open
// database. Free functions on a Db; the data path stays on Db (tally/db.h).
//
// Thread safety: each may run while other threads use the same Db.
// Ownership: each borrows the Db and its arguments for the call.

#ifndef TALLY_IMPORT_H_
#define TALLY_IMPORT_H_

#include <vector>

#include "tally/db.h"
#include "tally/status.h"
#include "tally/types.h"

namespace tally {

// Creates a counter as exported, with its shard values and markers
// (see CounterImport), whole or not at all: the values and markers are
// written first, under a new counter id that no counter record names yet
// (invisible to every read, increment and Verify; several writes when
// there are more than kMaxBatchOps), and the counter appears, complete,
// in the one durable write that adds its record. A failure, or a crash,
// before that write leaves no counter: its partial data is removed at
// once, or by the next read-write open after a crash, so a rerun of the
// same import simply imports it again. AlreadyExists when the name is
// taken (also by a counter created while the import ran); InvalidArgument,
// writing nothing, for a malformed value, key or marker, a marker not on
// its event id's shard, an event id given twice (in one key, for a keyed
// counter), a key given twice, or values or markers of the wrong kind (a
// keyed counter's come per key, a named counter's with no key);
// NotSupported for a non-zero shard value, or a key, of a bucketed
// counter.
Status ImportCounter(Db& db, const CounterImport& counter);

// Restores exported outbox entries (at most kMaxBatchOps, one synced
// atomic write) with their identity, origin and origin_seq, so a hub
// dedupes any that another copy already synced; `seq` is ignored: they
// take this database's next seqs, in the given order, and count against
// Options::outbox_max_entries. Each counter must exist with
// CounterSpec::outbox (their deltas are in its imported shard values,
// nothing is counted again); an entry of a keyed counter carries its key
// (OutboxEntry::key), one of a named counter none. InvalidArgument names
// the first bad entry (no outbox, bad delta, event id or key, a key given
// or missing, malformed identity, one identity twice); nothing is written
// then.
Status ImportOutbox(Db& db, const std::vector<OutboxEntry>& entries);

}  // namespace tally

#endif  // TALLY_IMPORT_H_
