#include "testutil/db_fixture.h"

namespace tally::test {

std::unique_ptr<Db> DbTest::OpenAt(const std::string& name,
                                   const Options& options, rocksdb::Env* env) {
  if (name == "db") {
    last_ = options;
    last_env_ = env;
  }
  return OpenOrDie(Sub(name), options, env);
}

void DbTest::Reopen(std::unique_ptr<Db>* db) {
  db->reset();
  *db = OpenAt("db", last_, last_env_);
}

std::string WriteModeName(const ::testing::TestParamInfo<WriteMode>& info) {
  switch (info.param) {
    case WriteMode::kNoSync:
      return "NoSync";
    case WriteMode::kSyncGroupCommit:
      return "SyncGroupCommit";
  }
  return "Unknown";
}

}  // namespace tally::test
