// The JSON side of an apply line (apply_line.h): one pass over the line's
// bytes, its fields decoded straight into an ApplyEvent's strings, with no
// DOM and, once those strings have grown to fit, no allocation per line
// (the DOM per line was a third of `counterctl apply`'s CPU: docs/design.md,
// "counterctl apply: the cost of a line").
//
// It takes as JSON exactly what the strict parse of json_line.h (what
// `import` reads with) takes: RFC 8259, UTF-8 checked, an optional byte
// order mark, numbers as nlohmann::json reads them (a double beyond its
// range is no JSON); one difference: a NUL byte outside a string is an
// error, where nlohmann::json stops reading. Like json_line.h it notes an
// object, at any depth, that names a key twice. tests/tools/
// apply_line_test.cc and tests/fuzz/fuzz_apply_line.cc hold the two to
// the same answers.

#ifndef TALLY_TOOLS_COUNTERCTL_APPLY_SCAN_H_
#define TALLY_TOOLS_COUNTERCTL_APPLY_SCAN_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace counterctl {

// What a scalar value turned out to be (nlohmann::json's distinctions,
// which decide apply_line.cc's reasons).
enum class ValueKind {
  kString,
  kUnsigned,  // an integer literal 0..UINT64_MAX
  kSigned,    // a negative integer literal down to INT64_MIN
  kHuge,      // an integer literal beyond 64 bits, or an integral float
              // of at least 2^63 in magnitude
  kOther,     // a float, true, false, null, an object or an array
};

struct ScannedValue {
  ValueKind kind = ValueKind::kOther;
  std::string_view raw;  // as written: what a reason shows
  uint64_t magnitude = 0;
};

// The fields of an apply line, in the order their bits are kept.
enum ApplyField : unsigned {
  kCounter,
  kKey,
  kEventId,
  kDelta,
  kTimeMs,
  kApplyFields,
  kUnknownField = kApplyFields
};

// What the scan found: the top value, and for an object its fields.
struct ScannedLine {
  bool object = false;
  std::string_view top;  // the whole value, as written
  ScannedValue values[kApplyFields];
  std::string* text[kApplyFields] = {};  // where each string field is decoded
  unsigned present = 0;                  // bit f: field f was given
  bool has_unknown = false;
  std::string unknown;  // the first unknown field in byte order
  bool has_repeat = false;
  std::string repeat;  // the first key an object names twice
};

// Reads `line` into *out (whose `text` pointers say where the string fields
// go; a field without one is decoded into scratch). False when the line is
// not one JSON value; then *out holds nothing of use.
bool ScanApplyLine(std::string_view line, ScannedLine* out);

}  // namespace counterctl

#endif  // TALLY_TOOLS_COUNTERCTL_APPLY_SCAN_H_
