// shards NAME: one line per shard, "INDEX COUNT", from one snapshot.

#include <iostream>
#include <memory>
#include <vector>

#include "commands.h"

namespace counterctl {

int RunShards(const GlobalArgs& global, const std::string& name) {
  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kRead, &db);
  if (!s.ok()) return Fail(s);
  tally::Result<std::vector<int64_t>> counts = db->ShardCounts(name);
  if (!counts.ok()) return Fail(counts.status());
  for (size_t i = 0; i < counts->size(); ++i) {
    std::cout << i << " " << (*counts)[i] << "\n";
  }
  return kExitOk;
}

}  // namespace counterctl
