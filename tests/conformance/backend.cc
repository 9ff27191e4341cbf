#include "conformance/backend.h"

#include <gtest/gtest.h>

namespace tally::conformance {
namespace {

// The local RocksDB engine: a database directory in the scratch directory.
BackendFactory EngineFactory() {
  BackendFactory f;
  f.name = "engine";
  f.open = [](const Options& options, const std::string& scratch_dir,
              std::unique_ptr<Db>* db) {
    return Db::Open(options, scratch_dir + "/db", db);
  };
  f.local_files = true;
  f.read_only_instances = true;
  return f;
}

}  // namespace

const std::vector<BackendFactory>& Factories() {
  // A backend adds itself here (the Redis Cluster one: issue 31).
  static const std::vector<BackendFactory> factories = {EngineFactory()};
  return factories;
}

std::string FactoryName(const ::testing::TestParamInfo<BackendFactory>& info) {
  return info.param.name;
}

void PrintTo(const BackendFactory& factory, std::ostream* os) {
  *os << factory.name;
}

}  // namespace tally::conformance
