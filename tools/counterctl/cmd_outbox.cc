// outbox status | list | ack: the change feed of counters created with
// --outbox (docs/sync.md). status and list open the database read-only (they
// answer next to a live app); ack needs it writable.
//
// status: "entries: N", "acked_through: S", "last_seq: S", "oldest: ISO"
//   and "age_ms: A" (the last two only when entries > 0).
// list: one line per entry, "SEQ counter=C delta=D time=ISO [event=ID]".

#include <iostream>
#include <memory>
#include <optional>

#include "commands.h"
#include "json_output.h"
#include "tally/limits.h"
#include "tally/outbox.h"

namespace counterctl {
namespace {

int Status(tally::Db* db, bool json) {
  tally::Result<tally::OutboxStatus> st = tally::GetOutboxStatus(*db);
  if (!st.ok()) return Fail(st.status());
  if (json) {
    Json doc{{"entries", st->entries},
             {"acked_through", st->acked_through},
             {"last_seq", st->last_seq},
             {"age_ms", st->entries ? Json(st->age_ms) : Json(nullptr)}};
    SetTimeOrNull(&doc, "oldest_time", st->entries != 0, st->oldest_time_ms);
    PrintJson(doc);
    return kExitOk;
  }
  std::cout << "entries: " << st->entries << "\n"
            << "acked_through: " << st->acked_through << "\n"
            << "last_seq: " << st->last_seq << "\n";
  if (st->entries > 0) {
    std::cout << "oldest: " << FormatUtcMillis(st->oldest_time_ms) << "\n"
              << "age_ms: " << st->age_ms << "\n";
  }
  return kExitOk;
}

int List(tally::Db* db, uint64_t after, uint64_t limit, bool json) {
  tally::Result<std::vector<tally::OutboxEntry>> entries =
      tally::ReadOutbox(*db, after, limit);
  if (!entries.ok()) return Fail(entries.status());
  if (json) {
    Json list = Json::array();
    for (const tally::OutboxEntry& e : *entries) {
      Json j{{"seq", e.seq},
             {"counter", e.counter},
             {"delta", e.delta},
             {"origin", e.origin},
             {"origin_seq", e.origin_seq}};
      SetTime(&j, "time", e.time_ms);
      if (!e.event_id.empty()) j["event_id"] = e.event_id;
      if (!e.key.empty()) j["key"] = e.key;
      list.push_back(std::move(j));
    }
    PrintJson(Json{{"entries", list}});
    return kExitOk;
  }
  for (const tally::OutboxEntry& e : *entries) {
    std::cout << e.seq << " counter=" << Printable(e.counter)
              << " delta=" << e.delta << " time=" << FormatUtcMillis(e.time_ms);
    if (!e.event_id.empty()) std::cout << " event=" << Printable(e.event_id);
    std::cout << "\n";
  }
  return kExitOk;
}

}  // namespace

int RunOutbox(const GlobalArgs& global, const OutboxArgs& args) {
  std::optional<uint64_t> after, limit, seq;
  if (args.action == "list") {
    after = ParseCountFlag("--after", args.after, 0, UINT64_MAX);
    if (!after) return kExitUsage;
    limit = ParseCountFlag("--limit", args.limit, 1, tally::kMaxOutboxRead);
    if (!limit) return kExitUsage;
  }
  if (args.action == "ack") {
    seq = ParseCountFlag("seq", args.seq, 0, UINT64_MAX);
    if (!seq) return kExitUsage;
  }
  std::unique_ptr<tally::Db> db;
  tally::Status s =
      OpenDb(global, args.action == "ack" ? OpenMode::kWrite : OpenMode::kRead,
             &db, tally::kReadOutbox);
  if (!s.ok()) return Fail(s);
  if (args.action == "status") return Status(db.get(), args.json);
  if (args.action == "list") return List(db.get(), *after, *limit, args.json);
  s = tally::AckOutbox(*db, *seq);
  if (!s.ok()) return Fail(s);
  std::cout << "acknowledged through " << *seq << "\n";
  return kExitOk;
}

}  // namespace counterctl
