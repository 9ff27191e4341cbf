// delete NAME --yes: removes a counter with its shards and markers. Deleting
// is not undoable, so it needs an explicit --yes.

#include <iostream>
#include <memory>

#include "commands.h"

namespace counterctl {

int RunDelete(const GlobalArgs& global, const DeleteArgs& args) {
  if (!args.yes) {
    return UsageError("delete removes " + Printable(args.name) +
                      " with its shards and markers; pass --yes to confirm");
  }
  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kWrite, &db);
  if (!s.ok()) return Fail(s);
  s = db->DeleteCounter(args.name);
  if (!s.ok()) return Fail(s);
  std::cout << "deleted " << args.name << "\n";
  return kExitOk;
}

}  // namespace counterctl
