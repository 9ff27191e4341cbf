// get NAME [--cached] [--json]: the exact value (sum of all shards from one
// snapshot), alone on the last line so scripts can take `tail -n1`.
// --cached: the roll-up's value instead (one read, no shard scan), after
// lines with its as-of time and its lag.
// --json: {"counter": NAME, "value": N} (--cached adds as_of_ms, lag_ms and
// lag_increments, null when unknown).

#include <iostream>
#include <memory>

#include "commands.h"
#include "json_output.h"

namespace counterctl {
namespace {

int PrintCached(const GetArgs& args, const tally::CachedValue& c) {
  if (args.json) {
    PrintJson(
        Json{{"counter", args.name},
             {"value", c.value},
             {"as_of_ms", c.as_of_ms},
             {"lag_ms", c.lag_ms},
             {"lag_increments", c.lag_increments_known ? Json(c.lag_increments)
                                                       : Json(nullptr)}});
    return kExitOk;
  }
  std::cout << "as_of: " << FormatUtcMillis(c.as_of_ms) << "\n"
            << "lag_ms: " << c.lag_ms << "\n"
            << "lag_increments: "
            << (c.lag_increments_known ? std::to_string(c.lag_increments)
                                       : std::string("unknown"))
            << "\n"
            << c.value << "\n";
  return kExitOk;
}

}  // namespace

int RunGet(const GlobalArgs& global, const GetArgs& args) {
  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kRead, &db);
  if (!s.ok()) return Fail(s);
  if (args.cached) {
    tally::Result<tally::CachedValue> cached = db->ReadCached(args.name);
    if (!cached.ok()) return Fail(cached.status());
    return PrintCached(args, *cached);
  }
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
