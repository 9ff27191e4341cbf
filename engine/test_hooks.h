// Test hooks: engine states tests observe to force an interleaving without
// sleeping. Not part of the public API; tests reach them through
// tally_internal.

#ifndef TALLY_ENGINE_TEST_HOOKS_H_
#define TALLY_ENGINE_TEST_HOOKS_H_

#include "tally/db.h"

namespace tally::engine {

// Whether a thread holds `db`'s catalog exclusively or waits to take it (a
// CreateCounter or DeleteCounter under way). While one waits, the catalog's
// writer-preferring lock makes every new shared holder (increments, reads)
// wait too. `db` must come from Db::Open.
bool CatalogWriterPending(Db* db);

}  // namespace tally::engine

#endif  // TALLY_ENGINE_TEST_HOOKS_H_
