// top NAME [-n N] [--exact] [--json]: the N keys of a keyed counter with
// the largest values (Db::TopKeys), largest first. By default from the
// counter's roll-up (one read, as `get --cached`: a counter nobody rolled up
// is NotFound from this read-only view, naming `rollup NAME`, which makes
// one, and --exact), with
// --exact by a scan of every key now. Text: "key: value" lines (as_of,
// lag_ms, exact, key_count, total; out_of_range_keys and
// first_out_of_range_key when keys hold values beyond int64, which the
// list and the total leave out), then one "KEY<TAB>VALUE" line per key.
// --json: {"counter", "n", "exact", "as_of_ms", "as_of", "lag_ms",
// "sequence", "key_count", "total", "keys": [{"key", "value"}, ...],
// "out_of_range_keys", "first_out_of_range_key" (null when none)}.

#include <iostream>
#include <memory>
#include <optional>

#include "commands.h"
#include "json_output.h"
#include "tally/limits.h"
#include "tally/types.h"

namespace counterctl {

int RunTop(const GlobalArgs& global, const TopArgs& args) {
  std::optional<uint64_t> n =
      ParseCountFlag("-n", args.n, 1, tally::kMaxTopKeys);
  if (!n) return kExitUsage;

  std::unique_ptr<tally::Db> db;
  tally::Status s =
      OpenDb(global, OpenMode::kRead, &db,
             args.exact ? tally::kReadValues : tally::kReadRollups);
  if (!s.ok()) return Fail(s);
  tally::TopKeysOptions options;
  options.exact = args.exact;
  tally::Result<tally::TopKeysResult> top =
      db->TopKeys(args.name, static_cast<size_t>(*n), options);
  if (!top.ok()) {
    return Fail(NoRollupYet(*db, args.name, top.status(),
                            ", or `counterctl top " + args.name +
                                " --exact` for a scan of every key now"));
  }
  if (args.json) {
    Json doc = {
        {"counter", args.name},      {"n", *n},
        {"exact", top->exact},       {"lag_ms", top->lag_ms},
        {"sequence", top->sequence}, {"key_count", top->key_count},
        {"total", top->total},       {"keys", KeyValuesJson(top->keys)},
        {"out_of_range_keys", top->out_of_range_keys},
        {"first_out_of_range_key", top->out_of_range_keys == 0
                                       ? Json(nullptr)
                                       : Json(top->first_out_of_range_key)}};
    SetTime(&doc, "as_of", top->as_of_ms);
    PrintJson(doc);
    return kExitOk;
  }
  std::cout << "as_of: " << FormatUtcMillis(top->as_of_ms) << "\n"
            << "lag_ms: " << top->lag_ms << "\n"
            << "exact: " << (top->exact ? "true" : "false") << "\n"
            << "key_count: " << top->key_count << "\n"
            << "total: " << top->total << "\n";
  if (top->out_of_range_keys != 0) {
    std::cout << "out_of_range_keys: " << top->out_of_range_keys << "\n"
              << "first_out_of_range_key: "
              << Escaped(top->first_out_of_range_key) << "\n";
  }
  PrintKeyValues(top->keys);
  return kExitOk;
}

}  // namespace counterctl
