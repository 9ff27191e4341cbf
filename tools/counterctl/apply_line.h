// One line of an `apply` file: parsing and checking it, without a database.
//
// A line is a JSON object with exactly these fields:
//   "counter"  string, required, 1..kMaxNameBytes bytes
//   "key"      string, 1..kMaxKeyBytes bytes: the key of a keyed counter;
//              required for a keyed counter, refused for a named one (the
//              runner checks which the counter is)
//   "event_id" string, optional, 1..kMaxEventIdBytes bytes; without it the
//              line is a plain increment
// Strings may not contain control characters (the engine's rule).
//   "delta"    integer, optional (default 1), kMinDelta..kMaxDelta
//   "time_ms"  integer, optional: the event time in ms since the Unix epoch,
//              kMinEventTimeMs..kMaxEventTimeMs (default: now). It decides
//              a once-event's dedupe window (outside_window).
// Anything else (another field, a field given twice, another type, a float
// such as 1.0, a value outside int64) rejects the line with a reason naming
// the field and showing the value as the line wrote it. The JSON itself is
// read by apply_scan.h, in one pass and without a DOM.

#ifndef TALLY_TOOLS_COUNTERCTL_APPLY_LINE_H_
#define TALLY_TOOLS_COUNTERCTL_APPLY_LINE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "tally/types.h"

namespace counterctl {

struct ApplyEvent {
  std::string counter;
  std::string key;       // empty: no "key" field
  std::string event_id;  // empty for a plain increment
  int64_t delta = 1;
  bool once = false;
  int64_t event_time_ms = tally::kEventTimeNow;  // not given
};

// True for a line holding only JSON whitespace; such lines are skipped.
bool IsBlankLine(std::string_view line);

// Parses a non-blank line into `event`. Returns false and sets `reason` (one
// line, no line number) when the line is not a valid event.
bool ParseApplyLine(std::string_view line, ApplyEvent* event,
                    std::string* reason);

}  // namespace counterctl

#endif  // TALLY_TOOLS_COUNTERCTL_APPLY_LINE_H_
