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

RefreshCounts RefreshCountsForTest(Db* db) {
  RefreshCounts out;
  static_cast<DbImpl*>(db)->RefreshCountsForTest(&out.catch_ups, &out.reopens);
  return out;
}

}  // namespace tally::engine
