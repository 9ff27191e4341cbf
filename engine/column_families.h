// The table of tally's column families: for each, its name, its RocksDB
// options, its key and value decoders (engine/family_record.h), the
// renderer the WAL dump uses, and what deleting a counter does to it.
// Everything that walks the whole database walks this table: open (writer
// and read-only), Verify, Compact, GetDbStats, DeleteCounter, the WAL dump
// and the record fuzzer. Adding a family is one entry here plus its
// decoder file (e.g. engine/decode_shards.cc), and its bytes in docs/format.md.
//
// Thread safety: the table is immutable.

#ifndef TALLY_ENGINE_COLUMN_FAMILIES_H_
#define TALLY_ENGINE_COLUMN_FAMILIES_H_

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <array>
#include <memory>
#include <string_view>
#include <vector>

#include "engine/family_record.h"
#include "tally/admin.h"
#include "tally/options.h"
#include "tally/types.h"

namespace tally::engine {

class EngineClock;
class RetentionRules;

// Index of each family in the descriptors MakeRocksOptions returns, in the
// handle vector DB::Open fills and in FamilyHandles. RocksDB's default
// family (index 0) holds nothing of tally's.
enum Family : int {
  kDefault = 0,
  kMeta = 1,
  kShards = 2,
  kEvents = 3,
  kRollups = 4,  // added after format 1's first release: may be missing
  kOutbox = 5,   // added with format 2: may be missing too
  kHolds = 6,    // added with format 7: may be missing too
  kClaims = 7,   // added with format 8: may be missing too
};
inline constexpr int kFamilyCount = 8;

// The handles of one open instance, by Family; null for a family the
// instance did not open (a read-only open of a database that lacks it).
using FamilyHandles = std::array<rocksdb::ColumnFamilyHandle*, kFamilyCount>;
FamilyHandles HandlesOf(const std::vector<rocksdb::ColumnFamilyHandle*>& v);

// What the families' options are made from (MakeRocksOptions).
struct FamilyTuning {
  const Options& options;
  std::shared_ptr<rocksdb::Cache> cache;  // shared by all families
  // The engine's clock and retention rules, for the compaction filters;
  // null when a tool or test opens the database raw.
  std::shared_ptr<RetentionRules> retention;
  std::shared_ptr<const EngineClock> clock;
};

// What Catalog::Delete does to a family.
enum class OnCounterDelete {
  kRecordKey,     // meta: the counter's record key goes (by name)
  kCounterRange,  // every key in [u64be(id), u64be(id+1)) goes
  kKept,          // outbox: entries are the feed's history, keyed by seq;
                  // claims: no counter's
};

struct ColumnFamily {
  Family index;
  const char* name;
  // Added after format 1's first release: a database no writer of this
  // version has opened lacks it (a read-only open goes without it).
  bool may_be_missing;
  // Adjusts the options every family starts from (`cf`) for this family.
  void (*tune)(const FamilyTuning& t, rocksdb::ColumnFamilyOptions* cf);
  KeyDecoder decode_key;
  ValueDecoder decode_value;
  Renderer render;
  OnCounterDelete on_delete;
};

inline constexpr int kTallyFamilyCount = kFamilyCount - 1;
// In Family order: ColumnFamilies()[i].index == i + 1.
const std::array<ColumnFamily, kTallyFamilyCount>& ColumnFamilies();
// The block-based table options every family starts from (no filter).
rocksdb::TableFactory* NewTallyTableFactory(
    const std::shared_ptr<rocksdb::Cache>& cache);
// RocksDB's figures of one family (GetDbStats, Compact's and Verify's
// progress totals; defined in admin.cc with the other figures); advisory:
// a property RocksDB lacks reads 0.
FamilyStats FamilyFigures(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* f);
// The entry named `name`, or null.
const ColumnFamily* FindFamily(std::string_view name);

// Adds to `wb` the deletes of counter `id`'s keys in every family whose
// on_delete is kCounterRange and that `handles` has open.
rocksdb::Status DeleteCounterRanges(const FamilyHandles& handles, uint64_t id,
                                    rocksdb::WriteBatch* wb);

}  // namespace tally::engine

#endif  // TALLY_ENGINE_COLUMN_FAMILIES_H_
