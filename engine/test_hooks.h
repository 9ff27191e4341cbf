// Test hooks: engine states tests observe to force an interleaving without
// sleeping. Not part of the public API; tests reach them through
// tally_internal.

#ifndef TALLY_ENGINE_TEST_HOOKS_H_
#define TALLY_ENGINE_TEST_HOOKS_H_

#include <cstdint>
#include <string_view>

#include "engine/column_families.h"
#include "tally/db.h"

namespace tally::engine {

// Whether a thread holds `db`'s catalog exclusively or waits to take it (a
// CreateCounter or DeleteCounter under way). While one waits, the catalog's
// writer-preferring lock makes every new shared holder (increments, reads)
// wait too. `db` must come from Db::Open.
bool CatalogWriterPending(Db* db);

// Writes `key` = `value` into family `family` of the open writer `db`
// behind the engine (no catalog, no checks, not synced): for tests that
// damage a live database, e.g. from Verify's hook, where damage an open
// would refuse (a bad meta record) can still reach Verify.
Status PutRawForTest(Db* db, Family family, std::string_view key,
                     std::string_view value);

// Publishes the writer `db`'s engine figures for read-only processes now,
// as its stats tick would (Options::stats_publish_interval_ms): tests set
// a long interval and publish with this, so nothing waits on real time.
// NotSupported read-only.
Status PublishStatsForTest(Db* db);

// The writer `db`'s group commit now (all 0 with Options::sync = false,
// which has none): the commits queued, a leader's included, and the
// threads waiting for room for an asynchronous one. A test sees a commit
// line up behind one it holds (a held WAL sync), or an IncrementAsync wait
// for room, without sleeping.
struct CommitQueue {
  uint64_t queued = 0;
  uint64_t room_waiters = 0;
};
CommitQueue CommitQueueForTest(Db* db);

// How the Refresh calls of the read-only `db` went: caught up in place
// (incrementally) or replaced by a freshly opened instance.
struct RefreshCounts {
  uint64_t catch_ups = 0;
  uint64_t reopens = 0;
};
RefreshCounts RefreshCountsForTest(Db* db);

}  // namespace tally::engine

#endif  // TALLY_ENGINE_TEST_HOOKS_H_
