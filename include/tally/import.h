// Import: restoring an export (see counterctl export/import) into an open
// database. Free functions on a Db; the data path stays on Db (tally/db.h).
//
// Thread safety: each may run while other threads use the same Db.
// Ownership: each borrows the Db and its arguments for the call.

#ifndef TALLY_IMPORT_H_
#define TALLY_IMPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tally/db.h"
#include "tally/export.h"
#include "tally/outbox.h"
#include "tally/status.h"
#include "tally/types.h"

namespace tally {

// One key of an exported keyed counter: the key and its shard values.
struct KeyShards {
  std::string key;
  // Shard i's value, one per shard (the counter's shards entries), or
  // empty: every shard 0. The key exists after the import either way
  // (ListKeys lists it, with 0 when every value is 0).
  std::vector<int64_t> shard_values;
};

// One exported counter with its contents, for tally::ImportCounter.
struct CounterImport {
  // Name, shards, policy, created-at, flags, dedupe window, buckets,
  // retention, outbox and keyed as exported; the id is ignored (a new one
  // is allocated).
  CounterInfo info;
  // A named counter's values: shard i's value, one per shard (info.shards
  // entries), or empty: every shard 0. Empty for a keyed counter.
  std::vector<int64_t> shard_values;
  // A keyed counter's keys with their values, each key once, in any order;
  // empty for a named counter.
  std::vector<KeyShards> keys;
  // The counter's markers, any number, in any order (their deltas are
  // already in the shard values: they are stored, not counted again). A
  // keyed counter's each name their key (MarkerInfo::key), a named
  // counter's none.
  std::vector<MarkerInfo> markers;
};

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
TALLY_EXPORT Status ImportCounter(Db& db, const CounterImport& counter);

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
TALLY_EXPORT Status ImportOutbox(Db& db,
                                 const std::vector<OutboxEntry>& entries);

}  // namespace tally

#endif  // TALLY_IMPORT_H_
