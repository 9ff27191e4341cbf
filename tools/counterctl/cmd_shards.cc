// shards NAME [--key K] [--stats] [--json]: one line per shard, "INDEX
// COUNT", from one snapshot (of one key of a keyed counter with --key). --stats
// adds how evenly the value is spread:
//   min: N           the smallest shard
//   max: N           the largest shard
//   mean: F          sum / shards, 3 decimals
//   max/mean: F      3 decimals; 1.000 is perfectly even. "n/a" when the
//                    mean is 0 or negative: the ratio then measures nothing
//                    (it would divide by zero or flip sign).
// --json: {"counter", "counts": [...]} plus "stats" with --stats, where
// max_over_mean is null in the "n/a" case.

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <vector>

#include "commands.h"
#include "json_output.h"

namespace counterctl {
namespace {

struct ShardStats {
  int64_t min = 0;
  int64_t max = 0;
  double mean = 0;
  std::optional<double> max_over_mean;  // only when mean > 0
};

ShardStats ComputeStats(const std::vector<int64_t>& counts) {
  ShardStats st;
  if (counts.empty()) return st;
  // 4096 int64 shards can sum beyond int64; 128 bits cannot overflow.
  __int128 sum = 0;
  for (int64_t c : counts) sum += c;
  st.min = *std::min_element(counts.begin(), counts.end());
  st.max = *std::max_element(counts.begin(), counts.end());
  st.mean = static_cast<double>(static_cast<long double>(sum) /
                                static_cast<long double>(counts.size()));
  if (sum > 0) {
    st.max_over_mean = static_cast<double>(
        static_cast<long double>(st.max) * static_cast<long double>(counts.size()) /
        static_cast<long double>(sum));
  }
  return st;
}

std::string Fixed3(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.3f", v);
  return buf;
}

}  // namespace

int RunShards(const GlobalArgs& global, const ShardsArgs& args) {
  if (args.key.given && !CheckKeyFlag(args.key.value)) return kExitUsage;
  const std::optional<Format> format = ChooseFormat(args.json, args.format);
  if (!format) return kExitUsage;
  if (*format == Format::kTsv && args.stats) {
    return UsageError("--stats prints figures, not rows: not with --format tsv");
  }
  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kRead, &db, tally::kReadValues);
  if (!s.ok()) return Fail(s);
  tally::Result<std::vector<int64_t>> counts =
      db->ShardCounts(RefOf(args.name, args.key));
  if (!counts.ok()) return Fail(counts.status());
  const ShardStats st = ComputeStats(*counts);

  if (*format == Format::kTsv) {
    Json rows = Json::array();
    for (size_t i = 0; i < counts->size(); ++i) {
      rows.push_back(Json{{"shard", i}, {"value", (*counts)[i]}});
    }
    PrintTsv({"shard", "value"}, rows);
    return kExitOk;
  }
  if (args.json) {
    Json doc = {{"counter", args.name}, {"counts", *counts}};
    if (args.key.given) doc["key"] = args.key.value;
    if (args.stats) {
      doc["stats"] = {{"min", st.min},
                      {"max", st.max},
                      {"mean", st.mean},
                      {"max_over_mean", st.max_over_mean
                                            ? Json(*st.max_over_mean)
                                            : Json(nullptr)}};
    }
    PrintJson(doc);
    return kExitOk;
  }
  for (size_t i = 0; i < counts->size(); ++i) {
    std::cout << i << " " << (*counts)[i] << "\n";
  }
  if (args.stats) {
    std::cout << "min: " << st.min << "\n"
              << "max: " << st.max << "\n"
              << "mean: " << Fixed3(st.mean) << "\n"
              << "max/mean: "
              << (st.max_over_mean ? Fixed3(*st.max_over_mean) : "n/a")
              << "\n";
  }
  return kExitOk;
}

}  // namespace counterctl
