// get NAME: the exact value (sum of all shards from one snapshot), alone on
// the last line so scripts can take `tail -n1`.

#include <iostream>
#include <memory>

#include "commands.h"

namespace counterctl {

int RunGet(const GlobalArgs& global, const std::string& name) {
  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kRead, &db);
  if (!s.ok()) return Fail(s);
  tally::Result<int64_t> value = db->ReadExact(name);
  if (!value.ok()) return Fail(value.status());
  std::cout << *value << "\n";
  return kExitOk;
}

}  // namespace counterctl
