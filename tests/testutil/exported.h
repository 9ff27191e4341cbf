// Reading one counter as an export holds it (shard values and every marker),
// through the public API only: shared by the tests and the crash writer,
// which links nothing but tally.
#ifndef TALLY_TESTS_TESTUTIL_EXPORTED_H_
#define TALLY_TESTS_TESTUTIL_EXPORTED_H_

#include "tally/db.h"
#include "tally/import.h"

namespace tally::test {

// Appends the markers of `ref` (a named counter, or one key of a keyed
// one), read in pages of `page_size`.
inline Status ReadExportedMarkers(Db* from, CounterRef ref, size_t page_size,
                                  std::vector<MarkerInfo>* out) {
  ListMarkersOptions page;
  page.limit = page_size;
  for (;;) {
    auto markers = from->ListMarkers(ref, page);
    if (!markers.ok()) return markers.status();
    out->insert(out->end(), markers->begin(), markers->end());
    if (markers->size() < page.limit) return Status::OK();
    page.start_after = markers->back().event_id;
  }
}

// Sets *out to counter `c` of `from`, its markers (and a keyed counter's
// keys) read in pages of `page_size`.
inline Status ReadExported(Db* from, const CounterInfo& c, size_t page_size,
                           CounterImport* out) {
  *out = CounterImport();
  out->info = c;
  if (!c.keyed) {
    auto shards = from->ShardCounts(c.name);
    if (!shards.ok()) return shards.status();
    out->shard_values = *shards;
    return ReadExportedMarkers(from, c.name, page_size, &out->markers);
  }
  ListKeysOptions page;
  page.limit = page_size;
  for (;;) {
    auto keys = from->ListKeys(c.name, page);
    if (!keys.ok()) return keys.status();
    for (const KeyValue& k : *keys) {
      auto shards = from->ShardCounts({c.name, k.key});
      if (!shards.ok()) return shards.status();
      out->keys.push_back({k.key, *shards});
      Status s =
          ReadExportedMarkers(from, {c.name, k.key}, page_size, &out->markers);
      if (!s.ok()) return s;
    }
    if (keys->size() < page.limit) return Status::OK();
    page.start_after = keys->back().key;
  }
}

}  // namespace tally::test

#endif  // TALLY_TESTS_TESTUTIL_EXPORTED_H_
