// One JSON Lines record (an `export` line read back by `import`), parsed
// strictly into a value. `apply` lines, the hot path, are read without a
// DOM by apply_scan.h, which takes as JSON what this parse takes (its tests
// hold the two to that).
//
// Beyond JSON's grammar, a line is refused when any object in it, at any
// depth, names a key twice: nlohmann::json would keep the last one
// silently, so {"counter":"orders","delta":1000000,"delta":1} would count 1.

#ifndef TALLY_TOOLS_COUNTERCTL_JSON_LINE_H_
#define TALLY_TOOLS_COUNTERCTL_JSON_LINE_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace counterctl {

// Parses `line` into *doc. Returns false and sets *reason (one line, no
// line number) for invalid JSON ("not valid JSON") or a repeated key
// ("field \"delta\" appears twice", the first repeat in the line). Throws
// nothing.
bool ParseJsonLine(std::string_view line, nlohmann::json* doc,
                   std::string* reason);

}  // namespace counterctl

#endif  // TALLY_TOOLS_COUNTERCTL_JSON_LINE_H_
