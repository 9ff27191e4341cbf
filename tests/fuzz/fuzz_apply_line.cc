// Fuzzes counterctl's JSON Lines event parser (tools/counterctl/apply_line.h)
// with arbitrary lines, as `counterctl apply` reads them from a file.
// Properties:
//  - no exception escapes (one would end the apply worker thread with
//    std::terminate);
//  - an accepted line obeys every rule of apply_line.h: counter 1..128
//    bytes, key and event id each absent or 1..128 / 1..256 bytes, no
//    control characters,
//    delta in kMinDelta..kMaxDelta, and a blank line is never accepted;
//  - an accepted event written back as canonical JSON parses to the same
//    event;
//  - the line is JSON for the scanner exactly when it is for the strict
//    parse `import` uses (json_line.h), a NUL byte aside: nlohmann::json
//    stops reading at one;
//  - a rejected line gets a non-empty, one-line reason of bounded length,
//    so one bad line cannot flood or split stderr.

#include <cstddef>
#include <cstdint>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "apply_line.h"
#include "fuzz_check.h"
#include "json_line.h"
#include "tally/limits.h"

namespace counterctl {
namespace {

bool ValidText(const std::string& text, size_t max_bytes) {
  if (text.empty() || text.size() > max_bytes) return false;
  for (char c : text) {
    const unsigned char b = static_cast<unsigned char>(c);
    if (b < 0x20 || b == 0x7f) return false;
  }
  return true;
}

void Check(std::string_view line) {
  ApplyEvent event;
  event.counter = "stale";
  event.key = "stale";
  event.event_id = "stale";
  std::string reason;
  const bool ok = ParseApplyLine(line, &event, &reason);
  if (line.find('\0') == std::string_view::npos) {
    nlohmann::json doc;
    std::string json_reason;
    const bool json_ok = ParseJsonLine(line, &doc, &json_reason);
    FUZZ_CHECK((!json_ok && json_reason == "not valid JSON") ==
               (!ok && reason == "not valid JSON"));
    // A repeated key is found by both, and the same first one.
    if (!json_ok && json_reason != "not valid JSON") {
      FUZZ_CHECK(!ok && reason == json_reason);
    }
  }
  if (!ok) {
    FUZZ_CHECK(!reason.empty());
    FUZZ_CHECK(reason.find('\n') == std::string::npos);
    FUZZ_CHECK(reason.find('\r') == std::string::npos);
    // The longest reason quotes at most ~40 bytes of the input, escaped.
    FUZZ_CHECK(reason.size() <= 400);
    return;
  }
  FUZZ_CHECK(!IsBlankLine(line));
  FUZZ_CHECK(ValidText(event.counter, tally::kMaxNameBytes));
  FUZZ_CHECK(event.key.empty() || ValidText(event.key, tally::kMaxKeyBytes));
  FUZZ_CHECK(event.once == !event.event_id.empty());
  if (event.once) {
    FUZZ_CHECK(ValidText(event.event_id, tally::kMaxEventIdBytes));
  }
  FUZZ_CHECK(event.delta >= tally::kMinDelta &&
             event.delta <= tally::kMaxDelta);

  // Round trip through the canonical form.
  nlohmann::json doc = {{"counter", event.counter}, {"delta", event.delta}};
  if (event.once) doc["event_id"] = event.event_id;
  if (!event.key.empty()) doc["key"] = event.key;
  ApplyEvent again;
  std::string again_reason;
  FUZZ_CHECK(ParseApplyLine(doc.dump(), &again, &again_reason));
  FUZZ_CHECK(again.counter == event.counter);
  FUZZ_CHECK(again.key == event.key);
  FUZZ_CHECK(again.event_id == event.event_id);
  FUZZ_CHECK(again.once == event.once);
  FUZZ_CHECK(again.delta == event.delta);
}

}  // namespace
}  // namespace counterctl

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  try {
    // apply skips blank lines and hands every other one to the parser.
    if (!counterctl::IsBlankLine(line)) counterctl::Check(line);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "exception escaped: %s\n", e.what());
    std::abort();
  }
  return 0;
}
