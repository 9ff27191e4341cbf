// get NAME [--json]: the exact value (sum of all shards from one snapshot),
// alone on the last line so scripts can take `tail -n1`.
// --json: {"counter": NAME, "value": N}.

#include <iostream>
#include <memory>

#include "commands.h"
#include "json_output.h"

namespace counterctl {

int RunGet(const GlobalArgs& global, const ReadArgs& args) {
  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kRead, &db);
  if (!s.ok()) return Fail(s);
  tally::Result<int64_t> value = db->ReadExact(args.name);
  if (!value.ok()) return Fail(value.status());
  if (args.json) {
    PrintJson(Json{{"counter", args.name}, {"value", *value}});
    return kExitOk;
  }
  std::cout << *value << "\n";
  return kExitOk;
}

}  // namespace counterctl
