// import FILE [--merge skip-existing]: loads an `export` file (FILE - reads
// stdin). The whole file is read and validated first; a malformed line is
// reported with its number (exit 1) and nothing is written - the database
// is not even created. Then the database is opened read-write (created if
// missing). It must hold no counter, unless --merge skip-existing is given:
// then counters whose name exists are skipped whole and listed.
//
// Each counter is written with one tally::ImportCounter call, which makes it
// appear whole or not at all (also across a kill: a rerun imports it again),
// then its unsynced outbox entries with tally::ImportOutbox (with their
// identity). If the engine refuses a counter (a marker not on its event id's
// shard) or its outbox entries, the error is reported and the import stops
// (exit 1; a counter whose entries were refused is deleted again); counters
// imported before it stay. A kill between a counter's ImportCounter and its
// ImportOutbox leaves the counter without its unsynced entries
// (docs/counterctl.md).

#include <cstdint>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "json_line.h"
#include "json_output.h"
#include "progress.h"
#include "tally/import.h"
#include "tally/limits.h"

namespace counterctl {
namespace {

struct CounterPlan {
  tally::CounterImport import;  // shard_values: empty until a shard record
  size_t shard_records = 0;     // shard records (export writes non-zero ones)
  std::vector<tally::OutboxEntry> outbox;  // unsynced entries, in seq order
  // (key, shard) and (key, event id); the key is empty for a named counter.
  std::set<std::pair<std::string, uint32_t>> seen_shards;
  std::set<std::pair<std::string, std::string>> seen_events;
  std::map<std::string, size_t> key_index;  // key -> import.keys[i]
};

// The file's records of one counter: its own, its shard values, markers
// and outbox entries.
uint64_t Records(const CounterPlan& c) {
  return 1 + c.shard_records + c.import.markers.size() + c.outbox.size();
}

struct Plan {
  std::vector<CounterPlan> counters;
  std::map<std::string, size_t> index;                    // name -> counters[i]
  std::set<std::pair<std::string, uint64_t>> outbox_ids;  // origin, seq
};

// Reads an integer field in [min, max]; sets *error when it is missing,
// not an integer or out of range.
template <typename T>
bool GetInt(const Json& obj, const char* key, T* out, std::string* error) {
  const auto it = obj.find(key);
  if (it == obj.end()) {
    *error = std::string("missing \"") + key + "\"";
    return false;
  }
  const Json& v = *it;
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u <= static_cast<uint64_t>(std::numeric_limits<T>::max())) {
      *out = static_cast<T>(u);
      return true;
    }
  } else if (v.is_number_integer()) {
    const int64_t i = v.get<int64_t>();
    if (i >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
        (i < 0 || static_cast<uint64_t>(i) <=
                      static_cast<uint64_t>(std::numeric_limits<T>::max()))) {
      *out = static_cast<T>(i);
      return true;
    }
  } else {
    *error = std::string("\"") + key + "\" must be an integer";
    return false;
  }
  *error = std::string("\"") + key + "\" out of range";
  return false;
}

bool GetString(const Json& obj, const char* key, std::string* out,
               std::string* error) {
  const auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) {
    *error = std::string("\"") + key + "\" must be a string";
    return false;
  }
  *out = it->get<std::string>();
  return true;
}

// GetInt for a key older exports do not have: absent leaves *out alone.
template <typename T>
bool GetOptionalInt(const Json& obj, const char* key, T* out,
                    std::string* error) {
  return obj.find(key) == obj.end() || GetInt(obj, key, out, error);
}

// An optional boolean key (absent: *out stays false).
bool GetOptionalBool(const Json& obj, const char* key, bool* out,
                     std::string* error) {
  const auto it = obj.find(key);
  if (it == obj.end()) return true;
  if (!it->is_boolean()) {
    *error = std::string("\"") + key + "\" must be true or false";
    return false;
  }
  *out = it->get<bool>();
  return true;
}

bool OnlyKeys(const Json& obj, std::set<std::string> keys, std::string* error) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (keys.count(it.key()) == 0) {
      *error = "unknown key \"" + Printable(it.key()) + "\"";
      return false;
    }
  }
  return true;
}

// INT64_MIN is the engine's overflow mark, never a value or a delta.
bool AcceptedInt64(const char* key, int64_t v, std::string* error) {
  if (v >= tally::kMinDelta) return true;
  *error = "\"" + std::string(key) + "\" " + std::to_string(v) +
           " is reserved (the smallest accepted is " +
           std::to_string(tally::kMinDelta) + ")";
  return false;
}

// The optional "key" of a shard, marker or outbox record: given exactly
// when counter `c` is keyed.
bool GetKey(const Json& rec, const CounterPlan& c, std::string* key,
            std::string* error) {
  if (rec.contains("key") && !GetString(rec, "key", key, error)) return false;
  const bool keyed = c.import.info.keyed;
  if (keyed && key->empty()) {
    *error = "counter \"" + Printable(c.import.info.name) +
             "\" is keyed: the record needs a non-empty \"key\"";
    return false;
  }
  if (!keyed && rec.contains("key")) {
    *error = "counter \"" + Printable(c.import.info.name) +
             "\" is not keyed, but the record has a \"key\"";
    return false;
  }
  return true;
}

// An outbox record: an unsynced entry of an outbox counter exported
// before it, with its identity (origin, origin_seq), which must be unique.
bool AddOutboxRecord(const Json& rec, Plan* plan, std::string* error) {
  tally::OutboxEntry e;
  if (!OnlyKeys(rec,
                {"type", "counter", "key", "event_id", "delta", "time_ms",
                 "origin", "origin_seq"},
                error) ||
      !GetString(rec, "counter", &e.counter, error) ||
      (rec.contains("event_id") &&
       !GetString(rec, "event_id", &e.event_id, error)) ||
      !GetInt(rec, "delta", &e.delta, error) ||
      !GetInt(rec, "time_ms", &e.time_ms, error) ||
      !GetString(rec, "origin", &e.origin, error) ||
      !GetInt(rec, "origin_seq", &e.origin_seq, error)) {
    return false;
  }
  if (!AcceptedInt64("delta", e.delta, error)) return false;
  const auto found = plan->index.find(e.counter);
  if (found == plan->index.end()) {
    *error = "counter \"" + Printable(e.counter) +
             "\" has no counter record before this line";
    return false;
  }
  CounterPlan& c = plan->counters[found->second];
  if (!GetKey(rec, c, &e.key, error)) return false;
  if (!c.import.info.outbox) {
    *error = "counter \"" + Printable(e.counter) +
             "\" has no outbox (\"outbox\":true) but an outbox record";
    return false;
  }
  if (e.origin_seq == 0) {
    *error = "\"origin_seq\" must be >= 1";
    return false;
  }
  if (!plan->outbox_ids.emplace(e.origin, e.origin_seq).second) {
    *error = "outbox entry " + Printable(e.origin) + "/" +
             std::to_string(e.origin_seq) + " appears twice";
    return false;
  }
  c.outbox.push_back(std::move(e));
  return true;
}

// Adds one record (line 2 onwards) to the plan.
bool AddRecord(const Json& rec, Plan* plan, std::string* error) {
  std::string type;
  if (!GetString(rec, "type", &type, error)) return false;
  if (type == "counter") {
    if (!OnlyKeys(rec,
                  {"type", "name", "shards", "policy", "created_at_ms", "flags",
                   "dedupe_window_ms", "outbox", "keyed", "min", "max"},
                  error)) {
      return false;
    }
    CounterPlan c;
    std::string policy;
    if (!GetString(rec, "name", &c.import.info.name, error) ||
        !GetInt(rec, "shards", &c.import.info.shards, error) ||
        !GetString(rec, "policy", &policy, error) ||
        !GetInt(rec, "created_at_ms", &c.import.info.created_at_ms, error) ||
        !GetInt(rec, "flags", &c.import.info.flags, error) ||
        !GetOptionalInt(rec, "dedupe_window_ms",
                        &c.import.info.dedupe_window_ms, error) ||
        !GetOptionalBool(rec, "outbox", &c.import.info.outbox, error) ||
        !GetOptionalBool(rec, "keyed", &c.import.info.keyed, error) ||
        !GetOptionalInt(rec, "min", &c.import.info.bounds.min, error) ||
        !GetOptionalInt(rec, "max", &c.import.info.bounds.max, error)) {
      return false;
    }
    c.import.info.bounds.has_min = rec.contains("min");
    c.import.info.bounds.has_max = rec.contains("max");
    if ((c.import.info.flags & ~tally::kCounterFlagPlainIncrements) != 0) {
      *error = "\"flags\" " + std::to_string(c.import.info.flags) +
               " sets reserved bits (only bit 0, plain increments, is defined)";
      return false;
    }
    if (c.import.info.shards < 1 || c.import.info.shards > tally::kMaxShards) {
      *error = "\"shards\" must be 1.." + std::to_string(tally::kMaxShards);
      return false;
    }
    if (policy == "random") {
      c.import.info.policy = tally::ShardPolicy::kRandom;
    } else if (policy == "affinity") {
      c.import.info.policy = tally::ShardPolicy::kAffinity;
    } else {
      *error = "\"policy\" must be random or affinity";
      return false;
    }
    if (plan->index.count(c.import.info.name) != 0) {
      *error =
          "counter \"" + Printable(c.import.info.name) + "\" appears twice";
      return false;
    }
    plan->index[c.import.info.name] = plan->counters.size();
    plan->counters.push_back(std::move(c));
    return true;
  }
  if (type == "outbox") return AddOutboxRecord(rec, plan, error);
  if (type != "shard" && type != "marker") {
    *error = "unknown type \"" + Printable(type) + "\"";
    return false;
  }
  std::string counter;
  if (!GetString(rec, "counter", &counter, error)) return false;
  const auto found = plan->index.find(counter);
  if (found == plan->index.end()) {
    *error = "counter \"" + Printable(counter) +
             "\" has no counter record before this line";
    return false;
  }
  CounterPlan& c = plan->counters[found->second];
  std::string key;
  if (!GetKey(rec, c, &key, error)) return false;
  uint32_t shard = 0;
  if (!GetInt(rec, "shard", &shard, error)) return false;
  if (shard >= c.import.info.shards) {
    *error = "\"shard\" " + std::to_string(shard) + " >= shards " +
             std::to_string(c.import.info.shards);
    return false;
  }
  if (type == "shard") {
    int64_t value = 0;
    if (!OnlyKeys(rec, {"type", "counter", "key", "shard", "value"}, error) ||
        !GetInt(rec, "value", &value, error)) {
      return false;
    }
    if (!AcceptedInt64("value", value, error)) return false;
    if (!c.seen_shards.emplace(key, shard).second) {
      *error =
          "shard " + std::to_string(shard) +
          (key.empty() ? std::string() : " of key \"" + Printable(key) + "\"") +
          " appears twice";
      return false;
    }
    // A keyed counter's key exists with its first shard record, also one
    // of value 0 (export writes one for a key whose every value is 0).
    std::vector<int64_t>* values = &c.import.shard_values;
    if (!key.empty()) {
      auto [at, added] = c.key_index.emplace(key, c.import.keys.size());
      if (added) c.import.keys.push_back({key, {}});
      values = &c.import.keys[at->second].shard_values;
    }
    if (value != 0) {
      values->resize(c.import.info.shards);
      (*values)[shard] = value;
    }
    ++c.shard_records;
    return true;
  }
  tally::MarkerInfo m;
  m.shard = shard;
  m.key = key;
  if (!OnlyKeys(rec,
                {"type", "counter", "key", "event_id", "shard", "delta",
                 "created_at_ms", "expires_at_ms", "pinned", "strict",
                 "refused", "asked", "value", "window_ends_ms", "remaining",
                 "reset", "remaining_kept"},
                error) ||
      !GetString(rec, "event_id", &m.event_id, error) ||
      !GetInt(rec, "delta", &m.delta, error) ||
      !GetInt(rec, "created_at_ms", &m.created_at_ms, error) ||
      !GetOptionalInt(rec, "expires_at_ms", &m.expires_at_ms, error) ||
      !GetOptionalBool(rec, "pinned", &m.pinned, error) ||
      !GetOptionalBool(rec, "strict", &m.strict, error) ||
      !GetOptionalBool(rec, "refused", &m.refused, error) ||
      !GetOptionalInt(rec, "asked", &m.asked, error) ||
      !GetOptionalInt(rec, "value", &m.value, error) ||
      !GetOptionalInt(rec, "window_ends_ms", &m.window_ends_ms, error) ||
      !GetOptionalInt(rec, "remaining", &m.remaining, error) ||
      !GetOptionalBool(rec, "reset", &m.reset, error) ||
      !GetOptionalBool(rec, "remaining_kept", &m.remaining_kept, error)) {
    return false;
  }
  if (!AcceptedInt64("delta", m.delta, error)) return false;
  if (!c.seen_events.emplace(key, m.event_id).second) {
    *error =
        "event \"" + Printable(m.event_id) + "\"" +
        (key.empty() ? std::string() : " of key \"" + Printable(key) + "\"") +
        " appears twice";
    return false;
  }
  c.import.markers.push_back(std::move(m));
  return true;
}

// Reads and validates the whole input; reports the first bad line.
bool ReadPlan(std::istream& in, Plan* plan) {
  std::string line;
  uint64_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::string error;
    Json rec;
    if (!ParseJsonLine(line, &rec, &error)) {
      if (rec.is_discarded()) error = "not a JSON object";  // not JSON at all
    } else if (!rec.is_object()) {
      error = "not a JSON object";
    } else if (number == 1) {
      if (rec != Json{{"tally_export", 1}}) {
        error = "expected the header {\"tally_export\":1}";
      }
    } else {
      AddRecord(rec, plan, &error);
    }
    if (!error.empty()) {
      PrintError("line " + std::to_string(number) + ": " + error);
      return false;
    }
  }
  if (in.bad()) {
    PrintError("read failed");
    return false;
  }
  if (number == 0) {
    PrintError("line 1: empty input, expected the header {\"tally_export\":1}");
    return false;
  }
  return true;
}

// The unsynced outbox entries of counter `c`, just imported, with their
// identity (their deltas are in the shard values, so this counts nothing).
tally::Status WriteOutbox(tally::Db* db, const CounterPlan& c) {
  for (size_t i = 0; i < c.outbox.size(); i += tally::kMaxBatchOps) {
    const size_t end = std::min(c.outbox.size(), i + tally::kMaxBatchOps);
    tally::Status s = tally::ImportOutbox(
        *db, std::vector<tally::OutboxEntry>(c.outbox.begin() + i,
                                             c.outbox.begin() + end));
    if (!s.ok()) return s;
  }
  return tally::Status::OK();
}

}  // namespace

int RunImport(const GlobalArgs& global, const ImportArgs& args) {
  const bool skip_existing = args.merge == "skip-existing";
  Plan plan;
  if (args.file == "-") {
    if (!ReadPlan(std::cin, &plan)) return kExitError;
  } else {
    std::ifstream in(args.file, std::ios::binary);
    if (!in) {
      PrintError("cannot open " + Printable(args.file));
      return kExitError;
    }
    if (!ReadPlan(in, &plan)) return kExitError;
  }

  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kCreate, &db);
  if (!s.ok()) return Fail(s);
  tally::Result<std::vector<tally::CounterInfo>> existing = db->ListCounters();
  if (!existing.ok()) return Fail(existing.status());
  if (!existing->empty() && !skip_existing) {
    PrintError("the database already holds " +
               std::to_string(existing->size()) +
               " counters; nothing imported (--merge skip-existing imports "
               "only the counters it does not hold)");
    return kExitError;
  }
  std::set<std::string> taken;
  for (const tally::CounterInfo& c : *existing) taken.insert(c.name);

  uint64_t counters = 0, keys = 0, shards = 0, markers = 0, outbox = 0,
           skipped = 0;
  // In records (each line of the file after the header), the unit that
  // moves: one counter may hold most of them.
  uint64_t records_total = 0, records_done = 0;
  for (const CounterPlan& c : plan.counters) records_total += Records(c);
  Progress progress("import", "records", records_total);
  for (const CounterPlan& c : plan.counters) {
    progress.Update(records_done);
    records_done += Records(c);
    if (taken.count(c.import.info.name) != 0) {
      progress.Finish();
      std::cout << "skipped " << Printable(c.import.info.name) << " (exists)\n";
      ++skipped;
      continue;
    }
    s = tally::ImportCounter(*db, c.import);
    if (s.ok()) {
      s = WriteOutbox(db.get(), c);
      if (!s.ok()) (void)db->DeleteCounter(c.import.info.name);
    }
    if (!s.ok()) {
      progress.Finish();
      PrintError("counter \"" + Printable(c.import.info.name) +
                 "\" not imported: " + s.ToString());
      return kExitError;
    }
    ++counters;
    keys += c.import.keys.size();
    shards += c.shard_records;
    markers += c.import.markers.size();
    outbox += c.outbox.size();
  }
  progress.Finish();
  std::cout << "imported " << counters << " counters, ";
  if (keys != 0) std::cout << keys << " keys, ";
  std::cout << shards << " shard values, " << markers << " markers";
  if (outbox != 0) std::cout << ", " << outbox << " outbox entries";
  std::cout << "; skipped " << skipped << "\n";
  return kExitOk;
}

}  // namespace counterctl
