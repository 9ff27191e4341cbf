// create NAME --shards N [--policy random|affinity] [--dedupe-window DUR]
//        [--bucket minute|hour|day] [--retention DUR] [--outbox] [--keyed]
//        [--min N] [--max N] [--sliding]

#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <tuple>

#include "commands.h"
#include "tally/types.h"

namespace counterctl {

int RunCreate(const GlobalArgs& global, const CreateArgs& args) {
  // Only the syntax is checked here. The range 1..kMaxShards is the engine's
  // rule, so its InvalidArgument (exit 1) is what the operator sees; a value
  // that does not even fit the API's uint32 cannot be passed on, though.
  std::optional<uint64_t> shards = ParseUint64(args.shards);
  if (!shards || *shards > std::numeric_limits<uint32_t>::max()) {
    return UsageError("--shards " + Printable(args.shards) +
                      ": expected a non-negative integer that fits uint32");
  }
  // The range is the engine's rule again; only the syntax is checked here.
  std::optional<int64_t> window = ParseDurationMs(args.dedupe_window);
  if (!window) {
    return UsageError("--dedupe-window " + Printable(args.dedupe_window) +
                      ": expected a duration such as 7d, 12h, 90m, 30s, "
                      "500ms, or 0");
  }
  std::optional<int64_t> retention = ParseDurationMs(args.retention);
  if (!retention) {
    return UsageError("--retention " + Printable(args.retention) +
                      ": expected a duration such as 30d, 12h, 90m, 30s, "
                      "500ms, or 0");
  }
  tally::CounterSpec spec;
  // Bounds: the syntax here, the rules (around 0, one shard) the engine's.
  for (auto [flag, text, has, bound] :
       {std::make_tuple("--min", &args.min, &spec.bounds.has_min,
                        &spec.bounds.min),
        std::make_tuple("--max", &args.max, &spec.bounds.has_max,
                        &spec.bounds.max)}) {
    if (text->empty()) continue;
    std::optional<int64_t> v = ParseInt64(*text);
    if (!v) {
      return UsageError(std::string(flag) + " " + Printable(*text) +
                        ": expected an integer that fits int64");
    }
    *has = true;
    *bound = *v;
  }
  spec.dedupe_window_ms = *window;
  spec.retention_ms = *retention;
  spec.outbox = args.outbox;
  spec.keyed = args.keyed;
  spec.sliding = args.sliding;
  // cli.cc restricts --bucket to these names.
  spec.bucket = args.bucket == "minute" ? tally::BucketWidth::kMinute
                : args.bucket == "hour" ? tally::BucketWidth::kHour
                : args.bucket == "day"  ? tally::BucketWidth::kDay
                                        : tally::BucketWidth::kNone;
  spec.shards = static_cast<uint32_t>(*shards);
  // cli.cc restricts --policy to these two names.
  spec.policy = args.policy == "affinity" ? tally::ShardPolicy::kAffinity
                                          : tally::ShardPolicy::kRandom;

  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kCreate, &db);
  if (!s.ok()) return Fail(s);
  s = db->CreateCounter(args.name, spec);
  if (!s.ok()) return Fail(s);
  std::cout << "created " << args.name << " (" << spec.shards << " shards"
            << (spec.keyed ? ", keyed" : "");
  if (spec.bounds.has_min) std::cout << ", min " << spec.bounds.min;
  if (spec.bounds.has_max) std::cout << ", max " << spec.bounds.max;
  if (spec.sliding) std::cout << ", sliding";
  std::cout << ")\n";
  return kExitOk;
}

}  // namespace counterctl
