// delete NAME --yes: removes a counter with its shards and markers.
// delete NAME --key K --yes: removes one key of a keyed counter, its shards
// and markers (Db::DeleteKey). Deleting is not undoable, so it needs an
// explicit --yes.

#include <iostream>
#include <memory>

#include "commands.h"

namespace counterctl {

int RunDelete(const GlobalArgs& global, const DeleteArgs& args) {
  if (args.key.given && !CheckKeyFlag(args.key.value)) return kExitUsage;
  if (args.key.given && !args.yes) {
    return UsageError("delete removes key " + Printable(args.key.value) +
                      " of " + Printable(args.name) +
                      " with its shards and markers; pass --yes to confirm");
  }
  if (!args.yes) {
    return UsageError("delete removes " + Printable(args.name) +
                      " with its shards and markers; pass --yes to confirm");
  }
  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kWrite, &db);
  if (!s.ok()) return Fail(s);
  if (args.key.given) {
    s = db->DeleteKey(args.name, args.key.value);
    if (!s.ok()) return Fail(s);
    std::cout << "deleted key " << Escaped(args.key.value) << " of "
              << args.name << "\n";
    return kExitOk;
  }
  s = db->DeleteCounter(args.name);
  if (!s.ok()) return Fail(s);
  std::cout << "deleted " << args.name << "\n";
  return kExitOk;
}

}  // namespace counterctl
