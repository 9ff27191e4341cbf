#include "engine/test_hooks.h"

#include "engine/db_impl.h"

namespace tally::engine {

bool CatalogWriterPending(Db* db) {
  return static_cast<DbImpl*>(db)->CatalogWriterPending();
}

Status PutRawForTest(Db* db, Family family, std::string_view key,
                     std::string_view value) {
  return static_cast<DbImpl*>(db)->PutRawForTest(family, key, value);
}

Status PublishStatsForTest(Db* db) {
  return static_cast<DbImpl*>(db)->PublishStats();
}

CommitQueue CommitQueueForTest(Db* db) {
  const wal::GroupCommitStats g =
      static_cast<DbImpl*>(db)->GroupStatsForTest();
  CommitQueue out;
  out.queued = g.queued;
  out.room_waiters = g.room_waiters;
  return out;
}

RefreshCounts RefreshCountsForTest(Db* db) {
  RefreshCounts out;
  static_cast<DbImpl*>(db)->RefreshCountsForTest(&out.catch_ups, &out.reopens);
  return out;
}

}  // namespace tally::engine
