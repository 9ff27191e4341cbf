// export FILE [--json]: every counter with its non-zero shard values and
// its markers (a keyed counter's per key), then the unsynced outbox entries, as
// JSON Lines (format in docs/counterctl.md), for `import`. The database is
// opened read-only (so this runs while an app holds it) and is not refreshed
// during the run, so the file is one consistent point (the engine keeps a
// read-only instance at one point across families; export still checks it, see
// ExportTo). FILE - writes to stdout (no summary then); otherwise a failure
// removes the half-written file.

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "json_output.h"
#include "progress.h"
#include "tally/admin.h"
#include "tally/limits.h"
#include "tally/outbox.h"

namespace counterctl {
namespace {

struct Totals {
  uint64_t counters = 0;
  uint64_t keys = 0;  // keys of keyed counters
  uint64_t shards = 0;
  uint64_t markers = 0;
  uint64_t outbox = 0;
  uint64_t records = 0;  // every line written, for the progress line
  Progress* progress = nullptr;
};

// Writes one record; invalid UTF-8 (only a damaged database has it) is an
// error, not silently replaced, since the copy must be exact.
// Records keep their keys in the documented order ("type" first).
using Record = nlohmann::ordered_json;

bool WriteRecord(std::ostream& out, const Record& record, Totals* totals) {
  try {
    out << record.dump() << "\n";
  } catch (const Record::exception& e) {
    PrintError(std::string("cannot export record: ") + e.what());
    return false;
  }
  ++totals->records;
  if (totals->progress != nullptr) totals->progress->Update(totals->records);
  return true;
}

// The progress line's total: what RocksDB estimates the shards and events
// families hold (a shard value or marker each, plus operands not yet
// folded, so it can be off either way), the counters and the outbox.
uint64_t EstimatedRecords(tally::Db* db, size_t counters) {
  uint64_t n = 1 + counters;
  tally::Result<tally::DbStats> stats = tally::GetDbStats(*db);
  if (stats.ok()) {
    for (const tally::FamilyStats& f : stats->families) {
      if (f.name == "shards" || f.name == "events" || f.name == "outbox") {
        n += f.estimated_keys;
      }
    }
  }
  return n;
}

// The unsynced outbox entries, in seq order, with their identity. Refuses
// (nothing exported) when the view holds an entry it cannot return yet: one
// behind a seq still committing (or whose failure is not recorded yet).
int ExportOutbox(tally::Db* db, std::ostream& out, Totals* totals) {
  tally::Result<tally::OutboxStatus> status = tally::GetOutboxStatus(*db);
  // A database that has no outboxes (a Redis Cluster's) has none to export.
  if (status.status().IsNotSupported()) return 0;
  if (!status.ok()) return Fail(status.status());
  uint64_t cursor = status->acked_through;
  for (;;) {
    tally::Result<std::vector<tally::OutboxEntry>> entries =
        tally::ReadOutbox(*db, cursor, tally::kMaxOutboxRead);
    if (!entries.ok()) return Fail(entries.status());
    if (entries->empty()) break;
    for (const tally::OutboxEntry& e : *entries) {
      Record rec{{"type", "outbox"}, {"counter", e.counter}};
      if (!e.key.empty()) rec["key"] = e.key;
      if (!e.event_id.empty()) rec["event_id"] = e.event_id;
      rec["delta"] = e.delta;
      rec["time_ms"] = e.time_ms;
      rec["origin"] = e.origin;
      rec["origin_seq"] = e.origin_seq;
      if (!WriteRecord(out, rec, totals)) return kExitError;
      ++totals->outbox;
    }
    cursor = entries->back().seq;
  }
  if (status->last_seq > cursor) {
    return Fail(tally::Status::Busy(
        "the outbox holds entries up to seq " +
        std::to_string(status->last_seq) + " but only those through " +
        std::to_string(cursor) +
        " are settled (a write is still committing); nothing was exported: "
        "retry"));
  }
  return kExitOk;
}

// The records of one named counter (`ref.key` empty) or one key of a keyed
// counter: its non-zero shard values (a key whose every value is 0: its
// shard 0, so that the key exists in the copy), then its markers in
// event-id byte order. Shards and markers must agree where tally::Verify
// compares them (`judged`: no plain increment, markers kept forever): an
// import would otherwise recount redelivered events, or lose them.
int ExportValues(tally::Db* db, std::ostream& out, tally::CounterRef ref,
                 bool judged, Totals* totals) {
  const std::string counter(ref.counter), key(ref.key);
  tally::Result<std::vector<int64_t>> shards = db->ShardCounts(ref);
  if (!shards.ok()) return Fail(shards.status());
  __int128 shard_sum = 0, marker_sum = 0;
  auto shard = [&](size_t i, int64_t value) {
    Record rec{{"type", "shard"}, {"counter", counter}};
    if (!key.empty()) rec["key"] = key;
    rec["shard"] = i;
    rec["value"] = value;
    ++totals->shards;
    return WriteRecord(out, rec, totals);
  };
  bool written = false;
  for (size_t i = 0; i < shards->size(); ++i) {
    shard_sum += (*shards)[i];
    if ((*shards)[i] == 0) continue;
    if (!shard(i, (*shards)[i])) return kExitError;
    written = true;
  }
  if (!written && !key.empty() && !shard(0, 0)) return kExitError;
  tally::ListMarkersOptions page;
  page.limit = tally::kMaxListMarkers;
  for (;;) {
    tally::Result<std::vector<tally::MarkerInfo>> markers =
        db->ListMarkers(ref, page);
    if (!markers.ok()) return Fail(markers.status());
    for (const tally::MarkerInfo& m : *markers) {
      Record marker{{"type", "marker"}, {"counter", counter}};
      if (!key.empty()) marker["key"] = key;
      marker["event_id"] = m.event_id;
      marker["shard"] = m.shard;
      marker["delta"] = m.delta;
      marker["created_at_ms"] = m.created_at_ms;
      if (m.expires_at_ms != 0) marker["expires_at_ms"] = m.expires_at_ms;
      if (m.pinned) marker["pinned"] = true;
      if (m.strict) {  // a strict counter's answer (format 5)
        marker["strict"] = true;
        if (m.refused) marker["refused"] = true;
        marker["asked"] = m.asked;
        marker["value"] = m.value;
        if (m.window_ends_ms != 0) {  // a quota's (format 6)
          marker["window_ends_ms"] = m.window_ends_ms;
        }
        // The first answer's room: a quota's, or any kept one.
        if (m.window_ends_ms != 0 || m.remaining_kept) {
          marker["remaining"] = m.remaining;
        }
        if (m.remaining_kept) marker["remaining_kept"] = true;
        if (m.reset) marker["reset"] = true;  // a reset's (format 7)
      }
      if (!WriteRecord(out, marker, totals)) return kExitError;
      ++totals->markers;
      marker_sum += m.delta;
    }
    if (markers->size() < page.limit) break;
    page.start_after = markers->back().event_id;
  }
  if (judged && shard_sum != marker_sum) {
    return Fail(tally::Status::Busy(
        "counter \"" + Printable(counter) + "\"" +
        (key.empty() ? std::string() : " key \"" + Printable(key) + "\"") +
        ": its shards and markers were read at different points (shard "
        "sum != marker delta sum); nothing was exported: retry"));
  }
  return kExitOk;
}

// An export refused for a key without a value: its shards sum beyond
// int64 (or one overflowed), which the file's int64 values cannot carry.
tally::Status OutOfRangeKey(const std::string& counter, const std::string& key) {
  return tally::Status::OutOfRange(
      "counter \"" + Printable(counter) + "\" key \"" + Printable(key) +
      "\" holds a value beyond int64, which an export cannot carry; nothing "
      "was exported: delete the key (counterctl delete " + Printable(counter) +
      " --key " + Printable(key) + " --yes), then export again");
}

// Every key of keyed counter `c`, in key byte order, with its values and
// markers.
int ExportKeys(tally::Db* db, std::ostream& out, const tally::CounterInfo& c,
               bool judged, Totals* totals) {
  tally::ListKeysOptions page;
  page.limit = tally::kMaxListKeys;
  for (;;) {
    tally::Result<std::vector<tally::KeyValue>> keys =
        db->ListKeys(c.name, page);
    if (!keys.ok()) return Fail(keys.status());
    for (const tally::KeyValue& k : *keys) {
      if (k.out_of_range) return Fail(OutOfRangeKey(c.name, k.key));
      const int code = ExportValues(db, out, tally::CounterRef(c.name, k.key),
                                    judged, totals);
      if (code != kExitOk) return code;
      ++totals->keys;
    }
    if (keys->size() < page.limit) return kExitOk;
    page.start_after = keys->back().key;
  }
}

int ExportTo(tally::Db* db, std::ostream& out, bool show_progress,
             Totals* totals) {
  tally::Result<std::vector<tally::CounterInfo>> counters = db->ListCounters();
  if (!counters.ok()) return Fail(counters.status());
  for (const tally::CounterInfo& c : *counters) {
    if (c.bucket != tally::BucketWidth::kNone) {
      return Fail(tally::Status::NotSupported(
          "counter \"" + Printable(c.name) +
          "\" has time buckets, which "
          "export does not support yet; nothing was exported"));
    }
  }
  if (!WriteRecord(out, Record{{"tally_export", 1}}, totals)) return kExitError;
  Progress progress("export", "records", 0, show_progress);
  if (progress.enabled()) {
    progress.SetTotal(EstimatedRecords(db, counters->size()), true);
    totals->progress = &progress;
  }
  for (const tally::CounterInfo& c : *counters) {
    Record counter{{"type", "counter"},
                   {"name", c.name},
                   {"shards", c.shards},
                   {"policy", tally::ShardPolicyName(c.policy)},
                   {"created_at_ms", c.created_at_ms},
                   {"flags", c.flags}};
    // Format-2 settings only when set, so other exports stay as they were.
    if (c.dedupe_window_ms != 0) {
      counter["dedupe_window_ms"] = c.dedupe_window_ms;
    }
    if (c.outbox) counter["outbox"] = true;
    if (c.keyed) counter["keyed"] = true;
    if (c.bounds.has_min) counter["min"] = c.bounds.min;
    if (c.bounds.has_max) counter["max"] = c.bounds.max;
    if (!WriteRecord(out, counter, totals)) return kExitError;
    ++totals->counters;
    const bool judged = (c.flags & tally::kCounterFlagPlainIncrements) == 0 &&
                        c.dedupe_window_ms == 0;
    const int code = c.keyed ? ExportKeys(db, out, c, judged, totals)
                             : ExportValues(db, out, tally::CounterRef(c.name),
                                            judged, totals);
    if (code != kExitOk) return code;
  }
  const int code = ExportOutbox(db, out, totals);
  if (code != kExitOk) return code;
  out.flush();
  if (!out) {
    PrintError("write failed");
    return kExitError;
  }
  return kExitOk;
}

}  // namespace

int RunExport(const GlobalArgs& global, const ExportArgs& args) {
  const bool to_stdout = args.file == "-";
  if (to_stdout && args.json) {
    return UsageError("--json needs a FILE: with - stdout holds the export");
  }
  std::unique_ptr<tally::Db> db;
  // The progress line's estimate (GetDbStats) reads every family's figures.
  const uint32_t reads =
      !to_stdout && ProgressWanted()
          ? tally::kReadAll
          : tally::kReadValues | tally::kReadMarkers | tally::kReadOutbox;
  tally::Status s = OpenDb(global, OpenMode::kRead, &db, reads);
  if (!s.ok()) return Fail(s);
  Totals totals;
  if (to_stdout) return ExportTo(db.get(), std::cout, false, &totals);
  std::ofstream out(args.file, std::ios::binary | std::ios::trunc);
  if (!out) {
    PrintError("cannot open " + Printable(args.file) + " for writing");
    return kExitError;
  }
  const int code = ExportTo(db.get(), out, true, &totals);
  out.close();
  if (code != kExitOk || !out) {
    std::remove(args.file.c_str());
    if (code == kExitOk) PrintError("write failed: " + Printable(args.file));
    return kExitError;
  }
  if (args.json) {
    PrintJson(Json{{"file", args.file},
                   {"counters", totals.counters},
                   {"keys", totals.keys},
                   {"shards", totals.shards},
                   {"markers", totals.markers},
                   {"outbox", totals.outbox}});
  } else {
    std::cout << "exported " << totals.counters << " counters, ";
    if (totals.keys != 0) std::cout << totals.keys << " keys, ";
    std::cout << totals.shards << " shard values, " << totals.markers
              << " markers";
    if (totals.outbox != 0) {
      std::cout << ", " << totals.outbox << " outbox entries";
    }
    std::cout << " to " << Printable(args.file) << "\n";
  }
  return kExitOk;
}

}  // namespace counterctl
