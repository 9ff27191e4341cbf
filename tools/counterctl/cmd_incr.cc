// incr NAME [--key K] [--by D] [--event-id ID] [--affinity KEY] [--time T]:
// one increment, plain or once, of a counter or (--key) of one key of a
// keyed counter; prints its outcome and shard ("applied shard=3",
// "outside_window shard=1"), and for a strict counter the value the
// increment left or that refused it and the room left toward the bound
// ("refused shard=0 value=0 remaining=0"), and for a quota when its window
// ends ("applied shard=0 value=3 remaining=97 window_ends=2026-...Z").
// --json: {"counter", "key" (with --key), "event_id" (with --event-id),
// "outcome", "shard"}, plus for a strict counter "value" and "remaining",
// and for a quota "window_ends_ms" and "window_ends".

#include <iostream>
#include <memory>
#include <optional>

#include "commands.h"
#include "json_output.h"
#include "tally/limits.h"
#include "tally/types.h"

namespace counterctl {

int RunIncr(const GlobalArgs& global, const IncrArgs& args) {
  std::optional<int64_t> delta = ParseInt64(args.by);
  // INT64_MIN parses but is no valid delta (the engine reserves it), so it
  // is reported with the same message as any other out-of-range value.
  if (!delta || *delta < tally::kMinDelta || *delta > tally::kMaxDelta) {
    return UsageError("--by " + Printable(args.by) +
                      ": expected an integer in " +
                      std::to_string(tally::kMinDelta) + ".." +
                      std::to_string(tally::kMaxDelta));
  }
  if (args.key.given && !CheckKeyFlag(args.key.value)) return kExitUsage;
  // An empty key would silently mean "no key" (a random shard).
  if (args.has_affinity_key && args.affinity_key.empty()) {
    return UsageError("--affinity '': expected a key of 1.." +
                      std::to_string(tally::kMaxAffinityKeyBytes) + " bytes");
  }
  // A once-increment's shard is the hash of its event id; an affinity key
  // would be silently ignored, so refuse the combination.
  if (args.has_event_id && args.has_affinity_key) {
    return UsageError(
        "--affinity applies to plain increments only; a once-increment's "
        "shard comes from its --event-id");
  }

  int64_t event_time = tally::kEventTimeNow;
  if (!args.time.empty()) {
    std::optional<int64_t> t = ParseTimeFlag("--time", args.time);
    if (!t) return kExitUsage;
    event_time = *t;
  }

  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kWrite, &db);
  if (!s.ok()) return Fail(s);

  tally::Result<tally::IncrementResult> result =
      args.has_event_id
          ? db->IncrementOnce(RefOf(args.name, args.key), args.event_id, *delta,
                              tally::OnceOptions{event_time, {}})
          : db->Increment(
                RefOf(args.name, args.key), *delta,
                tally::IncrementOptions{args.affinity_key, event_time});
  if (!result.ok()) return Fail(result.status());
  tally::Result<tally::CounterInfo> info = db->DescribeCounter(args.name);
  const bool strict = info.ok() && info->bounds.any();
  if (args.json) {
    Json doc = {{"counter", args.name},
                {"outcome", tally::OutcomeName(result->outcome)},
                {"shard", result->shard}};
    if (args.key.given) doc["key"] = args.key.value;
    if (args.has_event_id) doc["event_id"] = args.event_id;
    if (strict) {
      doc["value"] = result->value;
      doc["remaining"] = result->remaining;
      if (result->window_ends_ms != 0) {
        SetTime(&doc, "window_ends", result->window_ends_ms);
      }
    }
    PrintJson(doc);
    return kExitOk;
  }
  std::cout << tally::OutcomeName(result->outcome) << " shard=" << result->shard;
  if (strict) {
    std::cout << " value=" << result->value
              << " remaining=" << result->remaining;
    if (result->window_ends_ms != 0) {
      std::cout << " window_ends=" << FormatUtcMillis(result->window_ends_ms);
    }
  }
  std::cout << "\n";
  return kExitOk;
}

}  // namespace counterctl
