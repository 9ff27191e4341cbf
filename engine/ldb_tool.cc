// RunLdb: RocksDB's own ldb (rocksdb::LDBTool) on a tally database.
//
// ldb builds its options from the database's OPTIONS file (its default when
// --db is given; --try_load_options=false turns it off) or else from the
// options passed here, for every family. The shards family needs tally's
// merge operator either way: with it a scan or get folds a shard's pending
// operands into the one value the engine reads; without it ldb refuses
// ("merge_operator_ must be set"). The OPTIONS file names that operator and
// the two compaction filter factories, and RocksDB makes each from its name
// through the process's ObjectLibrary, so they are registered there, in this
// process only (counterctl ldb, which ends when ldb does). The filters come
// as keep-everything factories under the engine's names: only the engine
// has a durable time to judge expiry by (MakeRocksOptions), so `ldb
// compact` keeps every marker and bucket, as any raw open does.

#include <rocksdb/compaction_filter.h>
#include <rocksdb/ldb_tool.h>
#include <rocksdb/utilities/ldb_cmd.h>
#include <rocksdb/utilities/object_registry.h>

#include <memory>
#include <string>

#include "engine/bucket_retention.h"
#include "engine/column_families.h"
#include "engine/marker_expiry.h"
#include "engine/merge_operator.h"
#include "engine/rocksdb_options.h"
#include "tally/admin.h"

namespace tally {
namespace {

class KeepAllFilterFactory final : public rocksdb::CompactionFilterFactory {
 public:
  explicit KeepAllFilterFactory(const char* name) : name_(name) {}

  // No filter: compaction keeps every entry.
  std::unique_ptr<rocksdb::CompactionFilter> CreateCompactionFilter(
      const rocksdb::CompactionFilter::Context& /*context*/) override {
    return nullptr;
  }
  const char* Name() const override { return name_; }

 private:
  const char* const name_;
};

void RegisterKeepAll(rocksdb::ObjectLibrary* library, const char* name) {
  library->AddFactory<rocksdb::CompactionFilterFactory>(
      name, [name](const std::string& /*uri*/,
                   std::unique_ptr<rocksdb::CompactionFilterFactory>* guard,
                   std::string* /*errmsg*/) {
        guard->reset(new KeepAllFilterFactory(name));
        return guard->get();
      });
}

void RegisterTallyObjects(rocksdb::ObjectLibrary* library) {
  library->AddFactory<rocksdb::MergeOperator>(
      engine::kInt64AddName,
      [](const std::string& /*uri*/,
         std::unique_ptr<rocksdb::MergeOperator>* guard,
         std::string* /*errmsg*/) {
        *guard = engine::NewInt64AddOperator();
        return guard->get();
      });
  RegisterKeepAll(library, engine::kMarkerExpiryFactoryName);
  RegisterKeepAll(library, engine::kBucketRetentionFactoryName);
}

}  // namespace

int RunLdb(int argc, char** argv) {
  RegisterTallyObjects(rocksdb::ObjectLibrary::Default().get());
  // Without the OPTIONS file every family gets these: the shards family's
  // (merge operator, prefix extractor), harmless for the others, which
  // never hold a merge operand.
  engine::RocksOptions rocks = engine::MakeRocksOptions(Options());
  rocks.db.create_missing_column_families = false;
  const rocksdb::Options options(
      rocks.db, rocks.families[static_cast<size_t>(engine::kShards)].options);
  rocksdb::LDBOptions ldb_options;
  ldb_options.print_help_header =
      "counterctl ldb: RocksDB's ldb with tally's merge operator";
  // LDBTool::Run is this and exit(); returning instead lets the caller's
  // destructors run.
  return rocksdb::LDBCommandRunner::RunCommand(argc, argv, options,
                                               ldb_options, nullptr);
}

}  // namespace tally
