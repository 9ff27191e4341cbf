// compact: flushes and compacts the whole database (tally::Compact), folding
// every pending merge operand and dropping deleted counters' keys. A write
// subcommand: it needs the database to itself (Busy while an app holds it).
// Values do not change; reads afterwards do one value per shard.

#include <iostream>
#include <memory>

#include "commands.h"
#include "progress.h"
#include "tally/admin.h"

namespace counterctl {

int RunCompact(const GlobalArgs& global) {
  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kWrite, &db);
  if (!s.ok()) return Fail(s);
  {
    Progress progress("compact", "bytes", 0);
    s = tally::Compact(*db, progress.Callback());
  }
  if (!s.ok()) return Fail(s);
  std::cout << "compacted\n";
  return kExitOk;
}

}  // namespace counterctl
