// One JSON Lines record (an `apply` line, an `export` line read back by
// `import`), parsed strictly: the one place where counterctl turns a line
// of JSON into a value.
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
