// reset NAME [--key K] --reset-id ID [--value V] [--time T] [--json]: sets
// the value of a counter or (--key) of one key of a keyed counter to V
// (default 0), once per (counter, key, reset id) (Db::Reset; a bucketed
// counter's bucket at --time, default now; --time is required with a dedupe
// window, where a reset issued before the window is outside_window). Prints the outcome, the shard, the value and
// the delta the reset took, as incr prints its answer:
// "applied shard=0 value=0 delta=-7"; a redelivery "duplicate" with its
// first answer, another value (or an id an increment used) "conflict" with
// value and delta 0; a quota's line ends with " window_ends=TIME". Every
// outcome exits 0.
// --json: {"counter", "key" (with --key), "reset_id", "outcome", "shard",
// "value", "delta", and for a quota "window_ends_ms", "window_ends"}.

#include <iostream>
#include <memory>
#include <optional>

#include "commands.h"
#include "json_output.h"
#include "tally/limits.h"
#include "tally/types.h"

namespace counterctl {

int RunReset(const GlobalArgs& global, const ResetArgs& args) {
  std::optional<int64_t> value = ParseInt64(args.value);
  // INT64_MIN parses but is the engine's overflow mark, never a value: the
  // same message as any other value out of range (incr --by).
  if (!value || *value < tally::kMinDelta || *value > tally::kMaxDelta) {
    return UsageError("--value " + Printable(args.value) +
                      ": expected an integer in " +
                      std::to_string(tally::kMinDelta) + ".." +
                      std::to_string(tally::kMaxDelta));
  }
  if (args.key.given && !CheckKeyFlag(args.key.value)) return kExitUsage;
  tally::ResetOptions options;
  if (!args.time.empty()) {
    std::optional<int64_t> t = ParseTimeFlag("--time", args.time);
    if (!t) return kExitUsage;
    options.event_time_ms = *t;
  }

  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kWrite, &db);
  if (!s.ok()) return Fail(s);
  tally::Result<tally::IncrementResult> result =
      db->Reset(RefOf(args.name, args.key), args.reset_id, *value, options);
  if (!result.ok()) return Fail(result.status());
  if (args.json) {
    Json doc = {{"counter", args.name},
                {"reset_id", args.reset_id},
                {"outcome", tally::OutcomeName(result->outcome)},
                {"shard", result->shard},
                {"value", result->value},
                {"delta", result->applied}};
    if (args.key.given) doc["key"] = args.key.value;
    if (result->window_ends_ms != 0) {
      SetTime(&doc, "window_ends", result->window_ends_ms);
    }
    PrintJson(doc);
    return kExitOk;
  }
  std::cout << tally::OutcomeName(result->outcome)
            << " shard=" << result->shard << " value=" << result->value
            << " delta=" << result->applied;
  if (result->window_ends_ms != 0) {
    std::cout << " window_ends=" << FormatUtcMillis(result->window_ends_ms);
  }
  std::cout << "\n";
  return kExitOk;
}

}  // namespace counterctl
