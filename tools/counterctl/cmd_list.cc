// list [--json]: one line per counter, "NAME shards=N", ordered by name,
// with " keyed" after a keyed counter's.
// --json: {"counters": [counter, ...]} with each counter's whole catalog
// entry (json_output.h, CounterJson).

#include <iostream>
#include <memory>
#include <vector>

#include "commands.h"
#include "json_output.h"
#include "tally/types.h"

namespace counterctl {

int RunList(const GlobalArgs& global, const ListArgs& args) {
  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kRead, &db, /*reads=*/0);
  if (!s.ok()) return Fail(s);
  tally::Result<std::vector<tally::CounterInfo>> counters = db->ListCounters();
  if (!counters.ok()) return Fail(counters.status());
  // The engine returns them ordered by name; the output relies on that.
  if (args.json) {
    Json list = Json::array();
    for (const tally::CounterInfo& info : *counters) {
      list.push_back(CounterJson(info));
    }
    PrintJson(Json{{"counters", std::move(list)}});
    return kExitOk;
  }
  for (const tally::CounterInfo& info : *counters) {
    std::cout << info.name << " shards=" << info.shards
              << (info.keyed ? " keyed" : "") << "\n";
  }
  return kExitOk;
}

}  // namespace counterctl
