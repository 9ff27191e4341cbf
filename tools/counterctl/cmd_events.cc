// events: the idempotency markers of a counter, three ways. --key K: of one
// key of a keyed counter (required to list or show; --count without it
// counts every key's markers).
//
//   events NAME [--limit N] [--since TIME]   list markers in event-id byte
//       order, one line each: "EVENT_ID shard=S delta=D created_at=ISO".
//       At most N (default 100, at most kMaxEventsLimit); only those created
//       at or after TIME (ISO-8601 UTC or epoch milliseconds). A list cut
//       by the limit ends with "(more: the list stopped at --limit N)".
//   events NAME --show EVENT_ID              one marker as "key: value"
//       lines; exit 1 when the event was never counted.
//   events NAME --count                      the number of markers.
//
// --count and --show take none of the listing's flags, and not each other:
// such a command line is a usage error rather than a silently ignored flag.
//
// Listing pages through Db::ListMarkers (at most tally::kMaxListMarkers per
// call), continuing after the last id of each page. A read-only instance is
// never refreshed, so all pages come from the same point in time.
//
// Event ids cannot hold control characters (the engine refuses them); should
// a damaged database hold one anyway, the text output escapes it as \xNN so
// one marker stays one line. --json carries ids unescaped.

#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>
#include <vector>

#include "commands.h"
#include "json_output.h"
#include "tally/limits.h"
#include "tally/types.h"

namespace counterctl {
namespace {

std::string Id(const std::string& id) { return Escaped(id); }

int Count(tally::Db* db, const EventsArgs& args) {
  tally::Result<uint64_t> markers =
      db->CountMarkers(RefOf(args.name, args.key));
  if (!markers.ok()) return Fail(markers.status());
  if (args.json) {
    Json doc = {{"counter", args.name}, {"markers", *markers}};
    if (args.key.given) doc["key"] = args.key.value;
    PrintJson(doc);
  } else {
    std::cout << *markers << "\n";
  }
  return kExitOk;
}

int Show(tally::Db* db, const EventsArgs& args) {
  tally::Result<tally::MarkerInfo> marker =
      db->GetMarker(RefOf(args.name, args.key), args.show);
  // NotFound names either the counter or the event ("event 'x' was never
  // counted in counter 'y'"): the engine's message is the clear line.
  if (!marker.ok()) return Fail(marker.status());
  if (args.json) {
    Json doc = MarkerJson(*marker);
    doc["counter"] = args.name;
    PrintJson(doc);
    return kExitOk;
  }
  std::cout << "counter: " << args.name << "\n";
  if (args.key.given) std::cout << "key: " << Escaped(args.key.value) << "\n";
  std::cout << "event_id: " << Id(marker->event_id) << "\n"
            << "shard: " << marker->shard << "\n"
            << "delta: " << marker->delta << "\n"
            << "created_at: " << FormatUtcMillis(marker->created_at_ms) << "\n";
  return kExitOk;
}

int List(tally::Db* db, const EventsArgs& args, Format format, uint64_t limit,
         std::optional<int64_t> since) {
  tally::ListMarkersOptions options;
  if (since) options.since_ms = *since;
  Json events = Json::array();
  uint64_t remaining = limit;
  bool exhausted = false;
  while (remaining > 0) {
    options.limit = static_cast<size_t>(
        std::min<uint64_t>(remaining, tally::kMaxListMarkers));
    tally::Result<std::vector<tally::MarkerInfo>> page =
        db->ListMarkers(RefOf(args.name, args.key), options);
    if (!page.ok()) return Fail(page.status());
    if (page->size() > options.limit) {
      return Fail(tally::Status::Corruption(
          "Db::ListMarkers returned " + std::to_string(page->size()) +
          " markers for a limit of " + std::to_string(options.limit)));
    }
    for (const tally::MarkerInfo& m : *page) {
      if (format != Format::kText) {
        events.push_back(MarkerJson(m));
      } else {
        std::cout << Id(m.event_id) << " shard=" << m.shard
                  << " delta=" << m.delta
                  << " created_at=" << FormatUtcMillis(m.created_at_ms) << "\n";
      }
    }
    remaining -= page->size();
    if (page->size() < options.limit) {
      exhausted = true;
      break;
    }
    options.start_after = page->back().event_id;
  }

  // "more": whether markers beyond the limit match, so a reader knows the
  // list is cut. Costs one more call only when the limit was reached.
  bool more = false;
  if (!exhausted) {
    options.limit = 1;
    tally::Result<std::vector<tally::MarkerInfo>> next =
        db->ListMarkers(RefOf(args.name, args.key), options);
    if (!next.ok()) return Fail(next.status());
    more = !next->empty();
  }
  if (format == Format::kText) {
    if (more) {
      std::cout << "(more: the list stopped at --limit " << limit << ")\n";
    }
    return kExitOk;
  }
  if (format == Format::kTsv) {
    PrintTsv({"event_id", "key", "shard", "delta", "created_at_ms",
              "created_at", "expires_at_ms", "expires_at"},
             events);
    // The rows are data only: that the list stopped goes to stderr.
    if (more) PrintNote("the list stopped at --limit " + std::to_string(limit));
    return kExitOk;
  }
  Json doc = {{"counter", args.name},
              {"limit", limit},
              {"events", std::move(events)},
              {"more", more}};
  if (args.key.given) doc["key"] = args.key.value;
  SetTimeOrNull(&doc, "since", since.has_value(), since.value_or(0));
  PrintJson(doc);
  return kExitOk;
}

}  // namespace

int RunEvents(const GlobalArgs& global, const EventsArgs& args) {
  if (args.key.given && !CheckKeyFlag(args.key.value)) return kExitUsage;
  if (args.count && (args.has_show || args.has_limit || args.has_since)) {
    return UsageError(
        "events: --count counts every marker and takes no --show, --limit "
        "or --since");
  }
  if (args.has_show && (args.has_limit || args.has_since)) {
    return UsageError(
        "events: --show prints one marker; --limit and --since apply to "
        "the listing only");
  }
  const std::optional<Format> format = ChooseFormat(args.json, args.format);
  if (!format) return kExitUsage;
  if (*format == Format::kTsv && (args.count || args.has_show)) {
    return UsageError("events: --format tsv applies to the listing only");
  }
  std::optional<uint64_t> limit = kDefaultEventsLimit;
  if (args.has_limit) {
    limit = ParseCountFlag("--limit", args.limit, 1, kMaxEventsLimit);
    if (!limit) return kExitUsage;
  }
  std::optional<int64_t> since;
  if (args.has_since) {
    since = ParseTimeFlag("--since", args.since);
    if (!since) return kExitUsage;
  }

  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kRead, &db, tally::kReadMarkers);
  if (!s.ok()) return Fail(s);
  if (args.count) return Count(db.get(), args);
  if (args.has_show) return Show(db.get(), args);
  return List(db.get(), args, *format, *limit, since);
}

}  // namespace counterctl
