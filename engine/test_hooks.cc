#include "engine/test_hooks.h"

#include "engine/db_impl.h"

namespace tally::engine {

bool CatalogWriterPending(Db* db) {
  return static_cast<DbImpl*>(db)->CatalogWriterPending();
}

}  // namespace tally::engine
