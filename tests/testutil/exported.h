// Reading one counter as an export holds it (shard values and every marker),
// through the public API only: shared by the tests and the crash writer,
// which links nothing but tally.
#ifndef TALLY_TESTS_TESTUTIL_EXPORTED_H_
#define TALLY_TESTS_TESTUTIL_EXPORTED_H_

#include "tally/db.h"

namespace tally::test {

// Sets *out to counter `c` of `from`, its markers read in pages of
// `page_size`.
inline Status ReadExported(Db* from, const CounterInfo& c, size_t page_size,
                           CounterImport* out) {
  *out = CounterImport();
  out->info = c;
  auto shards = from->ShardCounts(c.name);
  if (!shards.ok()) return shards.status();
  out->shard_values = *shards;
  ListMarkersOptions page;
  page.limit = page_size;
  for (;;) {
    auto markers = from->ListMarkers(c.name, page);
    if (!markers.ok()) return markers.status();
    out->markers.insert(out->markers.end(), markers->begin(), markers->end());
    if (markers->size() < page.limit) return Status::OK();
    page.start_after = markers->back().event_id;
  }
}

}  // namespace tally::test

#endif  // TALLY_TESTS_TESTUTIL_EXPORTED_H_
