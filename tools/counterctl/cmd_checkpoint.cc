// checkpoint DIR: writes a consistent copy of the database to DIR (which
// must not exist) with tally::Checkpoint; the copy opens as an ordinary
// database. The database is opened read-only, so this takes no lock and
// runs while an app holds it. If the engine cannot checkpoint from a
// read-only instance, its error is reported (exit 1): the tool does not
// retry read-write behind the operator's back.

#include <iostream>
#include <memory>

#include "commands.h"
#include "tally/checkpoint.h"

namespace counterctl {

int RunCheckpoint(const GlobalArgs& global, const CheckpointArgs& args) {
  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kRead, &db);
  if (!s.ok()) return Fail(s);
  s = tally::Checkpoint(*db, args.dir);
  if (!s.ok()) return Fail(s);
  std::cout << "checkpoint written to " << args.dir << "\n";
  return kExitOk;
}

}  // namespace counterctl
