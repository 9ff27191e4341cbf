#include "conformance/backend.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "testutil/redis_env.h"

namespace tally::conformance {
namespace {

// The Redis Cluster backend: a namespace per scratch directory (the same
// directory names the same database on a reopen), on the cluster of
// TALLY_REDIS_ENV, as its least-privileged app user.
BackendFactory RedisFactory(const std::map<std::string, std::string>& env) {
  BackendFactory f;
  f.name = "redis";
  f.read_only_instances = true;  // reads live, writes refused
  const std::string target = env.at("TALLY_REDIS_TARGET");
  setenv("TALLY_REDIS_PASSWORD_FILE",
         env.at("TALLY_REDIS_PASSWORD_FILE").c_str(), 1);
  f.open = [target](const Options& options, const std::string& scratch_dir,
                    std::unique_ptr<Db>* db) {
    uint64_t h = 1469598103934665603ULL;  // FNV-1a of the directory
    for (const char c : scratch_dir) {
      h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    }
    char ns[24];
    std::snprintf(ns, sizeof ns, "t%016llx",
                  static_cast<unsigned long long>(h));
    return Db::Open(options, target + "/" + ns, db);
  };
  return f;
}

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
  // A backend adds itself here; the Redis Cluster one when a cluster was
  // started for the run (tests/cluster/CMakeLists.txt).
  static const std::vector<BackendFactory> factories = [] {
    std::vector<BackendFactory> all = {EngineFactory()};
    const std::map<std::string, std::string> env = test::ReadRedisEnv();
    if (env.count("TALLY_REDIS_TARGET") != 0 &&
        env.count("TALLY_REDIS_PASSWORD_FILE") != 0) {
      all.push_back(RedisFactory(env));
    }
    return all;
  }();
  return factories;
}

std::string FactoryName(const ::testing::TestParamInfo<BackendFactory>& info) {
  return info.param.name;
}

void PrintTo(const BackendFactory& factory, std::ostream* os) {
  *os << factory.name;
}

}  // namespace tally::conformance
