#include "json_line.h"

#include <algorithm>
#include <vector>

#include "common.h"

namespace counterctl {

bool ParseJsonLine(std::string_view line, nlohmann::json* doc,
                   std::string* reason) {
  using nlohmann::json;
  // The keys seen so far in each object still open, innermost last. Objects
  // on a line have a handful of keys: a linear search beats a set.
  std::vector<std::vector<std::string>> open;
  std::string repeated;
  bool has_repeat = false;
  const json::parser_callback_t check =
      [&](int /*depth*/, json::parse_event_t event, json& parsed) {
        switch (event) {
          case json::parse_event_t::object_start:
            open.emplace_back();
            break;
          case json::parse_event_t::object_end:
            if (!open.empty()) open.pop_back();
            break;
          case json::parse_event_t::key: {
            if (open.empty()) break;  // not reached: a key is inside an object
            std::vector<std::string>& keys = open.back();
            const std::string& key = parsed.get_ref<const std::string&>();
            if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
              if (!has_repeat) repeated = key;
              has_repeat = true;
            } else {
              keys.push_back(key);
            }
            break;
          }
          default:
            break;
        }
        return true;
      };
  // The non-throwing parse: a malformed line is routine input, and no
  // exception may escape the tool.
  *doc = json::parse(line.begin(), line.end(), check,
                     /*allow_exceptions=*/false);
  if (doc->is_discarded()) {
    *reason = "not valid JSON";
    return false;
  }
  if (has_repeat) {
    *reason = "field \"" + Printable(repeated, 40) + "\" appears twice";
    return false;
  }
  return true;
}

}  // namespace counterctl
