#include "apply_line.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "common.h"
#include "json_line.h"
#include "tally/limits.h"
#include "tally/text.h"
#include "tally/types.h"

namespace counterctl {
namespace {

using nlohmann::json;

// A short rendering of a JSON value for a reason; long values (an oversized
// id) are cut so one bad line cannot flood stderr.
std::string Show(const json& value) { return Printable(value.dump(), 40); }

bool CheckString(const json& value, const char* field, size_t max_bytes,
                 std::string* out, std::string* reason) {
  if (!value.is_string()) {
    *reason =
        std::string("\"") + field + "\" must be a string, got " + Show(value);
    return false;
  }
  const std::string& text = value.get_ref<const std::string&>();
  if (text.empty() || text.size() > max_bytes) {
    *reason = std::string("\"") + field + "\" must be 1.." +
              std::to_string(max_bytes) + " bytes, got " +
              std::to_string(text.size());
    return false;
  }
  // The engine refuses control characters in names and ids; catching them
  // here keeps such a line from sending its whole batch down the slow
  // one-at-a-time path.
  if (tally::HasControlCharacter(text)) {
    *reason = std::string("\"") + field +
              "\" contains a control character, got " + Show(value);
    return false;
  }
  *out = text;
  return true;
}

// nlohmann parses an integer literal too large for 64 bits as a float; such
// a value is reported as out of range rather than as "not an integer".
bool IsHugeInteger(const json& value) {
  const double d = value.get<double>();
  return std::trunc(d) == d && std::fabs(d) >= std::ldexp(1.0, 63);
}

// An integer field in [min, max].
bool CheckInt(const json& value, const char* field, int64_t min, int64_t max,
              int64_t* out, std::string* reason) {
  // nlohmann stores non-negative integers as unsigned and integers beyond
  // 64 bits as floats, so each representation is checked on its own.
  if (value.is_number_unsigned()) {
    const uint64_t v = value.get<uint64_t>();
    if (max >= 0 && v <= static_cast<uint64_t>(max) &&
        static_cast<int64_t>(v) >= min) {
      *out = static_cast<int64_t>(v);
      return true;
    }
  } else if (value.is_number_integer()) {
    const int64_t v = value.get<int64_t>();
    if (v >= min && v <= max) {
      *out = v;
      return true;
    }
  } else if (!value.is_number_float() || !IsHugeInteger(value)) {
    // A float such as 1.0 is refused even when integral: the producer
    // would be counting in floating point, which loses increments.
    *reason = std::string("\"") + field + "\" must be an integer, got " +
              Show(value);
    return false;
  }
  *reason = std::string("\"") + field + "\" must be an integer in " +
            std::to_string(min) + ".." + std::to_string(max) + ", got " +
            Show(value);
  return false;
}

}  // namespace

bool IsBlankLine(std::string_view line) {
  for (char c : line) {
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n') return false;
  }
  return true;
}

bool ParseApplyLine(std::string_view line, ApplyEvent* event,
                    std::string* reason) {
  json doc;
  if (!ParseJsonLine(line, &doc, reason)) return false;
  if (!doc.is_object()) {
    *reason = "expected a JSON object, got " + Show(doc);
    return false;
  }

  const json* counter = nullptr;
  const json* key = nullptr;
  const json* event_id = nullptr;
  const json* delta = nullptr;
  const json* time_ms = nullptr;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (it.key() == "counter") {
      counter = &it.value();
    } else if (it.key() == "key") {
      key = &it.value();
    } else if (it.key() == "event_id") {
      event_id = &it.value();
    } else if (it.key() == "delta") {
      delta = &it.value();
    } else if (it.key() == "time_ms") {
      time_ms = &it.value();
    } else {
      *reason = "unknown field \"" + Printable(it.key(), 40) + "\"";
      return false;
    }
  }

  if (counter == nullptr) {
    *reason = "missing field \"counter\"";
    return false;
  }
  if (!CheckString(*counter, "counter", tally::kMaxNameBytes, &event->counter,
                   reason)) {
    return false;
  }
  event->key.clear();
  if (key != nullptr &&
      !CheckString(*key, "key", tally::kMaxKeyBytes, &event->key, reason)) {
    return false;
  }
  event->once = event_id != nullptr;
  event->event_id.clear();
  if (event->once &&
      !CheckString(*event_id, "event_id", tally::kMaxEventIdBytes,
                   &event->event_id, reason)) {
    return false;
  }
  event->delta = 1;
  if (delta != nullptr && !CheckInt(*delta, "delta", tally::kMinDelta,
                                    tally::kMaxDelta, &event->delta, reason)) {
    return false;
  }
  event->event_time_ms = tally::kEventTimeNow;
  if (time_ms != nullptr &&
      !CheckInt(*time_ms, "time_ms", tally::kMinEventTimeMs,
                tally::kMaxEventTimeMs, &event->event_time_ms, reason)) {
    return false;
  }
  return true;
}

}  // namespace counterctl
