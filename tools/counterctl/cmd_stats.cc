// stats [--json]: the database's figures (tally::GetDbStats) and, per counter,
// its pending merge operands and, for a keyed counter, its keys as its last
// roll-up counted them (tally::KeyedCounterStats). Read-only, so it answers
// while an app holds the database; the engine figures are the ones the app
// last published (tally::StatsOrigin), with their source and age.
// Text: one "key: value" line each; the key names are stable.

#include <cstdio>
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

// Members per group on average; negative when there was no group.
double GroupMean(const tally::EngineStats& e) {
  if (e.group_commits == 0) return -1;
  return static_cast<double>(e.group_members) /
         static_cast<double>(e.group_commits);
}

Json EngineJson(const tally::EngineStats& e) {
  const tally::StatsOrigin& o = e.origin;
  const bool none = o.source == tally::StatsSource::kNone;
  Json doc = Json{{"source", tally::StatsSourceName(o.source)},
                  {"problem", o.problem},
                  {"applied", e.applied},
                  {"duplicates", e.duplicates},
                  {"conflicts", e.conflicts},
                  {"outside_window", e.outside_window},
                  {"rejected", e.rejected},
                  {"rollups_behind", e.rollups_behind},
                  {"rollup_lag_increments", e.rollup_lag_increments},
                  {"rollup_lag_ms", e.rollup_lag_ms},
                  {"group_commits", e.group_commits},
                  {"group_members", e.group_members},
                  {"group_largest", e.group_largest},
                  {"pending_operands", e.pending_operands}};
  const double mean = GroupMean(e);
  doc["group_mean"] = mean < 0 ? Json(nullptr) : Json(mean);
  if (none) {
    for (const char* key :
         {"writer_state", "writer_pid", "writer_started_ms", "writer_started",
          "as_of_ms", "as_of", "age_ms", "publish_interval_ms"}) {
      doc[key] = nullptr;
    }
    return doc;
  }
  doc["writer_state"] = WriterState(o);
  doc["writer_pid"] = o.writer_pid;
  SetTime(&doc, "writer_started", o.writer_started_ms);
  SetTime(&doc, "as_of", o.as_of_ms);
  doc["age_ms"] = o.age_ms;
  doc["publish_interval_ms"] = o.publish_interval_ms;
  return doc;
}

void PrintEngine(const tally::EngineStats& e) {
  const tally::StatsOrigin& o = e.origin;
  if (o.source == tally::StatsSource::kNone) {
    std::cout << "engine.source: none (" << Printable(o.problem, 400) << ")\n"
              << "engine.as_of: none\n"
              << "engine.writer_started: none\n";
  } else {
    std::cout << "engine.source: "
              << (o.source == tally::StatsSource::kThisProcess
                      ? std::string("this process")
                      : "writer pid " + std::to_string(o.writer_pid) + " (" +
                            WriterState(o) + ")")
              << "\n"
              << "engine.as_of: " << FormatUtcMillis(o.as_of_ms) << " (age "
              << o.age_ms << " ms)\n"
              << "engine.writer_started: "
              << FormatUtcMillis(o.writer_started_ms) << "\n";
  }
  char mean[32] = "n/a";
  if (GroupMean(e) >= 0) std::snprintf(mean, sizeof mean, "%.2f", GroupMean(e));
  std::cout << "engine.applied: " << e.applied << "\n"
            << "engine.duplicates: " << e.duplicates << "\n"
            << "engine.conflicts: " << e.conflicts << "\n"
            << "engine.outside_window: " << e.outside_window << "\n"
            << "engine.rejected: " << e.rejected << "\n"
            << "engine.rollups_behind: " << e.rollups_behind << "\n"
            << "engine.rollup_lag_increments: " << e.rollup_lag_increments
            << "\n"
            << "engine.rollup_lag_ms: " << e.rollup_lag_ms << "\n"
            << "engine.group_commits: " << e.group_commits << "\n"
            << "engine.group_members: " << e.group_members << "\n"
            << "engine.group_mean: " << mean << "\n"
            << "engine.group_largest: " << e.group_largest << "\n"
            << "engine.pending_operands: " << e.pending_operands << "\n";
}

// A keyed counter's keys, estimated: "N (as of TIME, lag MS ms[, changes
// since C])", or "none (not rolled up yet)".
std::string KeysText(const tally::KeyedCounterStats& k) {
  if (!k.rolled_up) return "none (not rolled up yet)";
  std::string out = std::to_string(k.keys) + " (as of " +
                    FormatUtcMillis(k.as_of_ms) + ", lag " +
                    std::to_string(k.lag_ms) + " ms";
  if (k.changes_since_known) {
    out += ", changes since " + std::to_string(k.changes_since);
  }
  return out + ")";
}

void SetKeysJson(const tally::KeyedCounterStats& k, Json* doc) {
  (*doc)["keyed"] = true;
  if (!k.rolled_up) {
    for (const char* key : {"keys_estimate", "keys_as_of_ms", "keys_as_of",
                            "keys_lag_ms", "keys_changes_since"}) {
      (*doc)[key] = nullptr;
    }
    return;
  }
  (*doc)["keys_estimate"] = k.keys;
  SetTime(doc, "keys_as_of", k.as_of_ms);
  (*doc)["keys_lag_ms"] = k.lag_ms;
  (*doc)["keys_changes_since"] =
      k.changes_since_known ? Json(k.changes_since) : Json(nullptr);
}

const tally::KeyedCounterStats* FindKeyed(const tally::DbStats& st,
                                          const std::string& name) {
  for (const tally::KeyedCounterStats& k : st.keyed_counters) {
    if (k.name == name) return &k;
  }
  return nullptr;
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
      Json one = Json{{"name", name}, {"pending_operands", n}};
      if (const tally::KeyedCounterStats* k = FindKeyed(st, name)) {
        SetKeysJson(*k, &one);
      }
      per.push_back(std::move(one));
    }
    Json doc =
        Json{{"engine", EngineJson(st.engine)},
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
  PrintEngine(st.engine);
  for (const tally::FamilyStats& f : st.families) PrintFamily(f);
  std::cout << "block_cache_usage_bytes: " << st.block_cache_usage_bytes << "\n"
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
    if (const tally::KeyedCounterStats* k = FindKeyed(st, name)) {
      std::cout << "counter." << Printable(name)
                << ".keys_estimate: " << KeysText(*k) << "\n";
    }
  }
  return kExitOk;
}

}  // namespace counterctl
