// events NAME --count: the number of idempotency markers the counter holds.
// Listing the markers themselves needs an engine API that does not exist
// yet, so --count is required for now.

#include <iostream>
#include <memory>

#include "commands.h"

namespace counterctl {

int RunEvents(const GlobalArgs& global, const EventsArgs& args) {
  if (!args.count) {
    return UsageError(
        "events: only --count is supported (listing markers "
        "is not available yet)");
  }
  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kRead, &db);
  if (!s.ok()) return Fail(s);
  tally::Result<uint64_t> markers = db->CountEvents(args.name);
  if (!markers.ok()) return Fail(markers.status());
  std::cout << *markers << "\n";
  return kExitOk;
}

}  // namespace counterctl
