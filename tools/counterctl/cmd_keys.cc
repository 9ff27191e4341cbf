// keys NAME [--prefix P] [--start-after K] [--limit N] [--json]: one page of
// a keyed counter's keys with their values, in key byte order from one
// snapshot (Db::ListKeys): one "KEY<TAB>VALUE" line per key. When keys
// beyond the page match, a last line "more after: KEY" (no tab, so it is
// never a key line) says so: the next page is --start-after KEY.
// A key whose value lies beyond int64 prints "out-of-range" (TSV: an empty
// value; JSON: "value": null, "out_of_range": true), and a note on stderr
// names the first and the remedy.
// --json: {"counter", "keys": [{"key", "value"}, ...], "limit", "prefix",
// "start_after" (null when not given), "more", "next_start_after" (the
// page's last key when more, else null)}.

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

Json TextOrNull(const std::string& text) {
  return text.empty() ? Json(nullptr) : Json(text);
}

}  // namespace

int RunKeys(const GlobalArgs& global, const KeysArgs& args) {
  std::optional<uint64_t> limit =
      ParseCountFlag("--limit", args.limit, 1, tally::kMaxListKeys);
  if (!limit) return kExitUsage;
  const std::optional<Format> format = ChooseFormat(args.json, args.format);
  if (!format) return kExitUsage;

  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kRead, &db, tally::kReadValues);
  if (!s.ok()) return Fail(s);
  tally::ListKeysOptions options;
  options.prefix = args.prefix;
  options.start_after = args.start_after;
  options.limit = static_cast<size_t>(*limit);
  tally::Result<std::vector<tally::KeyValue>> page =
      db->ListKeys(args.name, options);
  if (!page.ok()) return Fail(page.status());
  if (page->size() > options.limit) {
    return Fail(tally::Status::Corruption(
        "Db::ListKeys returned " + std::to_string(page->size()) +
        " keys for a limit of " + std::to_string(options.limit)));
  }
  // Whether keys beyond the page match: one more key, read only when the
  // page is full. The read-only view is never refreshed, so both calls see
  // the same point.
  bool more = false;
  if (page->size() == options.limit) {
    tally::ListKeysOptions next = options;
    next.start_after = page->back().key;
    next.limit = 1;
    tally::Result<std::vector<tally::KeyValue>> after =
        db->ListKeys(args.name, next);
    if (!after.ok()) return Fail(after.status());
    more = !after->empty();
  }
  if (args.json) {
    PrintJson(Json{
        {"counter", args.name},
        {"keys", KeyValuesJson(*page)},
        {"limit", *limit},
        {"prefix", TextOrNull(args.prefix)},
        {"start_after", TextOrNull(args.start_after)},
        {"more", more},
        {"next_start_after", more ? Json(page->back().key) : Json(nullptr)}});
    return kExitOk;
  }
  NoteOutOfRangeKeys(args.name, *page);
  if (*format == Format::kTsv) {
    PrintTsv({"key", "value"}, KeyValuesJson(*page));
    // The rows are data only: that the page stopped goes to stderr.
    if (more) {
      PrintNote("the page stopped at --limit " + std::to_string(*limit) +
                "; more keys follow (--start-after " +
                Escaped(page->back().key) + ")");
    }
    return kExitOk;
  }
  PrintKeyValues(*page);
  if (more) std::cout << "more after: " << Escaped(page->back().key) << "\n";
  return kExitOk;
}

}  // namespace counterctl
