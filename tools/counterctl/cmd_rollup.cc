// rollup [NAME]: roll one counter (or every counter that changed) up into
// its cached total now. Needs the database for writing: while an app holds
// it, the app's own roll-up worker does this (Options::rollup_interval_ms).

#include <iostream>
#include <memory>

#include "commands.h"

namespace counterctl {

int RunRollup(const GlobalArgs& global, const RollupArgs& args) {
  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kWrite, &db);
  if (!s.ok()) return Fail(s);
  s = db->RollupNow(args.name);
  if (!s.ok()) return Fail(s);
  std::cout << "rolled up "
            << (args.name.empty() ? "every changed counter"
                                  : Printable(args.name))
            << "\n";
  return kExitOk;
}

}  // namespace counterctl
