#include "apply_line.h"

#include "apply_scan.h"
#include "common.h"
#include "tally/limits.h"
#include "tally/text.h"
#include "tally/types.h"

namespace counterctl {
namespace {

// A string as JSON writes it: quoted, with nlohmann::json's escapes (a
// control character as \t or \u0001), anything else as it is.
std::string Quoted(std::string_view text) {
  static constexpr const char* kShort[0x20] = {
      nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
      nullptr, "\\b",   "\\t",   "\\n",   nullptr, "\\f",   "\\r"};
  std::string out = "\"";
  for (char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (b < 0x20 && kShort[b] != nullptr) {
      out += kShort[b];
    } else if (b < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out += kHex[b >> 4];
      out += kHex[b & 15];
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

// A short rendering of a value for a reason: a string decoded (`text`)
// and quoted, anything else as the line wrote it; long values (an
// oversized id) are cut so one bad line cannot flood stderr.
std::string Show(const ScannedValue& value, std::string_view text) {
  return Printable(
      value.kind == ValueKind::kString ? Quoted(text) : std::string(value.raw),
      40);
}

bool CheckString(const ScannedValue& value, const std::string& text,
                 const char* field, size_t max_bytes, std::string* reason) {
  if (value.kind != ValueKind::kString) {
    *reason = std::string("\"") + field + "\" must be a string, got " +
              Show(value, text);
    return false;
  }
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
              "\" contains a control character, got " + Show(value, text);
    return false;
  }
  return true;
}

// An integer field in [min, max]. A float such as 1.0 is refused even when
// integral: the producer would be counting in floating point, which loses
// increments.
bool CheckInt(const ScannedValue& value, std::string_view text,
              const char* field, int64_t min, int64_t max, int64_t* out,
              std::string* reason) {
  constexpr uint64_t kMinMagnitude = uint64_t{1} << 63;
  if (value.kind == ValueKind::kUnsigned) {
    if (max >= 0 && value.magnitude <= static_cast<uint64_t>(max) &&
        static_cast<int64_t>(value.magnitude) >= min) {
      *out = static_cast<int64_t>(value.magnitude);
      return true;
    }
  } else if (value.kind == ValueKind::kSigned) {
    const int64_t v = value.magnitude == kMinMagnitude
                          ? INT64_MIN
                          : -static_cast<int64_t>(value.magnitude);
    if (v >= min && v <= max) {
      *out = v;
      return true;
    }
  } else if (value.kind != ValueKind::kHuge) {
    *reason = std::string("\"") + field + "\" must be an integer, got " +
              Show(value, text);
    return false;
  }
  *reason = std::string("\"") + field + "\" must be an integer in " +
            std::to_string(min) + ".." + std::to_string(max) + ", got " +
            Show(value, text);
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
  ScannedLine s;
  s.text[kCounter] = &event->counter;
  s.text[kKey] = &event->key;
  s.text[kEventId] = &event->event_id;
  std::string delta_text;  // only for a reason: "delta" must be no string
  std::string time_text;
  s.text[kDelta] = &delta_text;
  s.text[kTimeMs] = &time_text;
  if (!ScanApplyLine(line, &s)) {
    *reason = "not valid JSON";
    return false;
  }
  if (s.has_repeat) {
    *reason = "field \"" + Printable(s.repeat, 40) + "\" appears twice";
    return false;
  }
  if (!s.object) {
    *reason = "expected a JSON object, got " + Printable(s.top, 40);
    return false;
  }
  if (s.has_unknown) {
    *reason = "unknown field \"" + Printable(s.unknown, 40) + "\"";
    return false;
  }
  const auto given = [&s](ApplyField f) {
    return ((s.present >> f) & 1u) != 0;
  };
  if (!given(kCounter)) {
    *reason = "missing field \"counter\"";
    return false;
  }
  if (!CheckString(s.values[kCounter], event->counter, "counter",
                   tally::kMaxNameBytes, reason)) {
    return false;
  }
  if (!given(kKey)) {
    event->key.clear();
  } else if (!CheckString(s.values[kKey], event->key, "key",
                          tally::kMaxKeyBytes, reason)) {
    return false;
  }
  event->once = given(kEventId);
  if (!event->once) {
    event->event_id.clear();
  } else if (!CheckString(s.values[kEventId], event->event_id, "event_id",
                          tally::kMaxEventIdBytes, reason)) {
    return false;
  }
  event->delta = 1;
  if (given(kDelta) &&
      !CheckInt(s.values[kDelta], delta_text, "delta", tally::kMinDelta,
                tally::kMaxDelta, &event->delta, reason)) {
    return false;
  }
  event->event_time_ms = tally::kEventTimeNow;
  if (given(kTimeMs) &&
      !CheckInt(s.values[kTimeMs], time_text, "time_ms", tally::kMinEventTimeMs,
                tally::kMaxEventTimeMs, &event->event_time_ms, reason)) {
    return false;
  }
  return true;
}

}  // namespace counterctl
