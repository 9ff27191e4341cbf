// stats [--json]: the database's figures (tally::GetDbStats) and, per counter,
// its pending merge operands. Read-only, so it answers while an app holds
// the database; the engine counters (applied, duplicates, conflicts,
// rejected) count this process only, so they are always 0 here.
// Text: one "key: value" line each; the key names are stable.

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "json_output.h"
#include "tally/admin.h"

namespace counterctl {
namespace {

Json FamilyJson(const tally::FamilyStats& f) {
  return Json{{"sst_bytes", f.sst_bytes},
              {"memtable_bytes", f.memtable_bytes},
              {"estimated_keys", f.estimated_keys},
              {"l0_files", f.l0_files}};
}

void PrintFamily(const tally::FamilyStats& f) {
  const std::string& name = f.name;
  std::cout << name << ".sst_bytes: " << f.sst_bytes << "\n"
            << name << ".memtable_bytes: " << f.memtable_bytes << "\n"
            << name << ".estimated_keys: " << f.estimated_keys << "\n"
            << name << ".l0_files: " << f.l0_files << "\n";
}

}  // namespace

int RunStats(const GlobalArgs& global, const StatsArgs& args) {
  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kRead, &db);
  if (!s.ok()) return Fail(s);
  tally::Result<tally::DbStats> stats = tally::GetDbStats(*db);
  if (!stats.ok()) return Fail(stats.status());
  tally::Result<std::vector<tally::CounterInfo>> counters = db->ListCounters();
  if (!counters.ok()) return Fail(counters.status());
  std::vector<std::pair<std::string, uint64_t>> pending;
  // The stalest roll-up (counters never rolled up have none yet).
  std::string worst_name;
  int64_t worst_lag = -1;
  for (const tally::CounterInfo& c : *counters) {
    tally::Result<uint64_t> p = tally::PendingOperands(*db, c.name);
    if (!p.ok()) return Fail(p.status());
    pending.emplace_back(c.name, *p);
    tally::Result<tally::CachedValue> cached = db->ReadCached(c.name);
    if (cached.ok() && cached->lag_ms > worst_lag) {
      worst_lag = cached->lag_ms;
      worst_name = c.name;
    } else if (!cached.ok() && !cached.status().IsNotFound()) {
      return Fail(cached.status());
    }
  }
  const tally::DbStats& st = *stats;
  if (args.json) {
    Json per = Json::array();
    for (const auto& [name, n] : pending) {
      per.push_back(Json{{"name", name}, {"pending_operands", n}});
    }
    Json doc =
        Json{{"engine",
              {{"applied", st.engine.applied},
               {"duplicates", st.engine.duplicates},
               {"conflicts", st.engine.conflicts},
               {"rejected", st.engine.rejected}}},
             {"block_cache_usage_bytes", st.block_cache_usage_bytes},
             {"block_cache_capacity_bytes", st.block_cache_capacity_bytes},
             {"delayed_write_rate", st.delayed_write_rate},
             {"writes_stopped", st.writes_stopped},
             {"background_errors", st.background_errors},
             {"latched_error", st.latched_error},
             {"rollup_worst_lag_ms",
              worst_lag < 0 ? Json(nullptr) : Json(worst_lag)},
             {"rollup_worst_lag_counter",
              worst_lag < 0 ? Json(nullptr) : Json(worst_name)},
             {"counters", per}};
    // Each column family's figures under its name (docs/format.md).
    for (const tally::FamilyStats& f : st.families) doc[f.name] = FamilyJson(f);
    PrintJson(doc);
    return kExitOk;
  }
  std::cout << "engine.applied: " << st.engine.applied << "\n"
            << "engine.duplicates: " << st.engine.duplicates << "\n"
            << "engine.conflicts: " << st.engine.conflicts << "\n"
            << "engine.rejected: " << st.engine.rejected << "\n";
  for (const tally::FamilyStats& f : st.families) PrintFamily(f);
  std::cout << "block_cache_usage_bytes: " << st.block_cache_usage_bytes
            << "\n"
            << "block_cache_capacity_bytes: " << st.block_cache_capacity_bytes
            << "\n"
            << "delayed_write_rate: " << st.delayed_write_rate << "\n"
            << "writes_stopped: " << (st.writes_stopped ? "true" : "false")
            << "\n"
            << "background_errors: " << st.background_errors << "\n"
            << "latched_error: "
            << (st.latched_error.empty() ? "none"
                                         : Printable(st.latched_error, 400))
            << "\n";
  std::cout << "rollup.worst_lag_ms: "
            << (worst_lag < 0 ? std::string("none")
                              : std::to_string(worst_lag) + " (counter " +
                                    Printable(worst_name) + ")")
            << "\n";
  for (const auto& [name, n] : pending) {
    std::cout << "counter." << Printable(name) << ".pending_operands: " << n
              << "\n";
  }
  return kExitOk;
}

}  // namespace counterctl
