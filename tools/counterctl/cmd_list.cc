// list [--json]: one line per counter, "NAME shards=N", ordered by name,
// with " keyed" after a keyed counter's.
// --json: {"counters": [counter, ...]} with each counter's whole catalog
// entry (json_output.h, CounterJson).

#include <iostream>
#include <memory>
#include <optional>
#include <vector>

#include "commands.h"
#include "json_output.h"
#include "tally/types.h"

namespace counterctl {

int RunList(const GlobalArgs& global, const ListArgs& args) {
  const std::optional<Format> format = ChooseFormat(args.json, args.format);
  if (!format) return kExitUsage;
  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kRead, &db, /*reads=*/0);
  if (!s.ok()) return Fail(s);
  tally::Result<std::vector<tally::CounterInfo>> counters = db->ListCounters();
  if (!counters.ok()) return Fail(counters.status());
  // The engine returns them ordered by name; the output relies on that.
  if (*format != Format::kText) {
    Json list = Json::array();
    for (const tally::CounterInfo& info : *counters) {
      list.push_back(CounterJson(info));
    }
    if (*format == Format::kTsv) {
      PrintTsv({"name", "id", "shards", "policy", "keyed", "bucket",
                "retention_ms", "dedupe_window_ms", "min", "max", "sliding",
                "plain_increments", "created_at_ms", "created_at"},
               list);
    } else {
      PrintJson(Json{{"counters", std::move(list)}});
    }
    return kExitOk;
  }
  for (const tally::CounterInfo& info : *counters) {
    std::cout << info.name << " shards=" << info.shards
              << (info.keyed ? " keyed" : "") << "\n";
  }
  return kExitOk;
}

}  // namespace counterctl
