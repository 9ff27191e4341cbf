// list: one line per counter, "NAME shards=N", ordered by name.

#include <iostream>
#include <memory>
#include <vector>

#include "commands.h"
#include "tally/types.h"

namespace counterctl {

int RunList(const GlobalArgs& global) {
  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kRead, &db);
  if (!s.ok()) return Fail(s);
  tally::Result<std::vector<tally::CounterInfo>> counters = db->ListCounters();
  if (!counters.ok()) return Fail(counters.status());
  // The engine returns them ordered by name; the output relies on that.
  for (const tally::CounterInfo& info : *counters) {
    std::cout << info.name << " shards=" << info.shards << "\n";
  }
  return kExitOk;
}

}  // namespace counterctl
