#include "apply_scan.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace counterctl {
namespace {

ApplyField FieldOf(std::string_view name) {
  static constexpr const char* kNames[kApplyFields] = {
      "counter", "key", "event_id", "delta", "time_ms"};
  for (unsigned f = 0; f < kApplyFields; ++f) {
    if (name == kNames[f]) return static_cast<ApplyField>(f);
  }
  return kUnknownField;
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

// The length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong
// form, no surrogate, nothing past U+10FFFF), or 0.
size_t Utf8Length(const unsigned char* p, const unsigned char* end) {
  const unsigned char b = p[0];
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // the second byte's range
  if (b >= 0xc2 && b <= 0xdf) {
    n = 2;
  } else if (b >= 0xe0 && b <= 0xef) {
    n = 3;
    if (b == 0xe0) lo = 0xa0;
    if (b == 0xed) hi = 0x9f;
  } else if (b >= 0xf0 && b <= 0xf4) {
    n = 4;
    if (b == 0xf0) lo = 0x90;
    if (b == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (static_cast<size_t>(end - p) < n || p[1] < lo || p[1] > hi) return 0;
  for (size_t i = 2; i < n; ++i) {
    if (p[i] < 0x80 || p[i] > 0xbf) return 0;
  }
  return n;
}

bool IsDigit(const char* p, const char* end) {
  return p < end && *p >= '0' && *p <= '9';
}

class Scanner {
 public:
  Scanner(std::string_view line, ScannedLine* out)
      : p_(line.data()), end_(line.data() + line.size()), out_(out) {}

  // False when the line is not one JSON value.
  bool Line();

 private:
  void SkipSpace() {
    while (p_ < end_ && IsSpace(*p_)) ++p_;
  }
  // Skips space, then takes `c`.
  bool Take(char c) {
    SkipSpace();
    if (p_ == end_ || *p_ != c) return false;
    ++p_;
    return true;
  }
  bool TopObject();
  bool Member(std::vector<std::string>* unknown_keys);
  bool AnyValue(ScannedValue* value, std::string* text);
  bool Nested();
  bool Key(std::vector<std::string>* keys);
  void NoteKey(const std::string& key, std::vector<std::string>* keys);
  void NoteRepeat(const std::string& key);
  bool Scalar(ScannedValue* value, std::string* text);
  bool String(std::string* out);
  bool Escape(std::string* out);
  bool Hex4(uint32_t* out);
  bool Number(ScannedValue* value);
  bool Literal(std::string_view word);

  const char* p_;
  const char* const end_;
  ScannedLine* const out_;
  std::string scratch_;  // keys, and strings no field keeps
};

bool Scanner::Line() {
  // A byte order mark may open the text (RFC 8259 lets a parser skip it;
  // nlohmann::json does).
  if (end_ - p_ >= 3 && std::memcmp(p_, "\xEF\xBB\xBF", 3) == 0) p_ += 3;
  SkipSpace();
  const char* start = p_;
  bool ok;
  if (p_ < end_ && *p_ == '{') {
    out_->object = true;
    ok = TopObject();
  } else {
    ScannedValue ignored;
    ok = AnyValue(&ignored, &scratch_);
  }
  out_->top = std::string_view(start, static_cast<size_t>(p_ - start));
  SkipSpace();
  return ok && p_ == end_;
}

bool Scanner::TopObject() {
  ++p_;  // '{'
  SkipSpace();
  if (p_ < end_ && *p_ == '}') {
    ++p_;
    return true;
  }
  std::vector<std::string> unknown_keys;  // allocates only if there are any
  for (;;) {
    if (!Member(&unknown_keys)) return false;
    SkipSpace();
    if (p_ == end_) return false;
    const char c = *p_++;
    if (c == '}') return true;
    if (c != ',') return false;
  }
}

// One "name": value of the line's object.
bool Scanner::Member(std::vector<std::string>* unknown_keys) {
  if (!Take('"') || !String(&scratch_) || !Take(':')) return false;
  const ApplyField f = FieldOf(scratch_);
  if (f == kUnknownField) {
    if (!out_->has_unknown || scratch_ < out_->unknown) {
      out_->unknown = scratch_;
    }
    out_->has_unknown = true;
    NoteKey(scratch_, unknown_keys);
    ScannedValue ignored;
    return AnyValue(&ignored, &scratch_);
  }
  if ((out_->present >> f) & 1u) NoteRepeat(scratch_);
  out_->present |= 1u << f;
  std::string* text = out_->text[f] != nullptr ? out_->text[f] : &scratch_;
  return AnyValue(&out_->values[f], text);
}

// A value: a string is decoded into *text.
bool Scanner::AnyValue(ScannedValue* value, std::string* text) {
  SkipSpace();
  if (p_ == end_) return false;
  const char* start = p_;
  bool ok;
  if (*p_ == '{' || *p_ == '[') {
    value->kind = ValueKind::kOther;
    ok = Nested();
  } else {
    ok = Scalar(value, text);
  }
  value->raw = std::string_view(start, static_cast<size_t>(p_ - start));
  return ok;
}

// An object or array inside the line's value, walked with a stack of its
// own (not recursion), so a deeply nested line cannot exhaust the thread's
// stack. Only its keys are kept, for the repeat check.
bool Scanner::Nested() {
  struct Open {
    bool object;
    std::vector<std::string> keys;
  };
  std::vector<Open> open;
  ScannedValue ignored;
  for (;;) {
    SkipSpace();
    if (p_ == end_) return false;
    if (*p_ == '{' || *p_ == '[') {
      const bool object = *p_++ == '{';
      open.push_back(Open{object, {}});
      SkipSpace();
      if (p_ == end_ || *p_ != (object ? '}' : ']')) {
        if (object && !Key(&open.back().keys)) return false;
        continue;  // to the container's first value
      }
      ++p_;
      open.pop_back();
    } else if (!Scalar(&ignored, &scratch_)) {
      return false;
    }
    // After a value: close what ends here, then on to the next value.
    for (;;) {
      if (open.empty()) return true;
      SkipSpace();
      if (p_ == end_) return false;
      const char c = *p_++;
      if (c == ',') {
        if (open.back().object && !Key(&open.back().keys)) return false;
        break;
      }
      if (c != (open.back().object ? '}' : ']')) return false;
      open.pop_back();
    }
  }
}

// `"name":` of a nested object.
bool Scanner::Key(std::vector<std::string>* keys) {
  if (!Take('"') || !String(&scratch_)) return false;
  NoteKey(scratch_, keys);
  return Take(':');
}

// Notes `key` among those its object named before it.
void Scanner::NoteKey(const std::string& key, std::vector<std::string>* keys) {
  // An object on a line has a handful of keys: a linear search beats a set.
  if (std::find(keys->begin(), keys->end(), key) != keys->end()) {
    NoteRepeat(key);
  } else {
    keys->push_back(key);
  }
}

void Scanner::NoteRepeat(const std::string& key) {
  if (out_->has_repeat) return;
  out_->has_repeat = true;
  out_->repeat = key;
}

bool Scanner::Scalar(ScannedValue* value, std::string* text) {
  if (p_ == end_) return false;
  switch (*p_) {
    case '"':
      value->kind = ValueKind::kString;
      ++p_;
      return String(text);
    case 't':
      value->kind = ValueKind::kOther;
      return Literal("true");
    case 'f':
      value->kind = ValueKind::kOther;
      return Literal("false");
    case 'n':
      value->kind = ValueKind::kOther;
      return Literal("null");
    default:
      return Number(value);
  }
}

// The rest of a string after its opening quote, decoded into *out.
bool Scanner::String(std::string* out) {
  const char* start = p_;
  // Plain ASCII up to the closing quote: one copy.
  while (p_ < end_) {
    const auto c = static_cast<unsigned char>(*p_);
    if (c == '"') {
      out->assign(start, static_cast<size_t>(p_ - start));
      ++p_;
      return true;
    }
    if (c == '\\' || c < 0x20 || c >= 0x80) break;
    ++p_;
  }
  out->assign(start, static_cast<size_t>(p_ - start));
  while (p_ < end_) {
    const auto c = static_cast<unsigned char>(*p_);
    if (c == '"') {
      ++p_;
      return true;
    }
    if (c < 0x20) return false;  // JSON wants control characters escaped
    if (c == '\\') {
      if (!Escape(out)) return false;
    } else if (c < 0x80) {
      out->push_back(static_cast<char>(c));
      ++p_;
    } else {
      const size_t n = Utf8Length(reinterpret_cast<const unsigned char*>(p_),
                                  reinterpret_cast<const unsigned char*>(end_));
      if (n == 0) return false;
      out->append(p_, n);
      p_ += n;
    }
  }
  return false;
}

// A backslash escape; \u escapes of a surrogate pair make one character.
bool Scanner::Escape(std::string* out) {
  if (end_ - p_ < 2) return false;
  const char e = p_[1];
  p_ += 2;
  static constexpr const char kFrom[] = "\"\\/bfnrt";
  static constexpr const char kTo[] = "\"\\/\b\f\n\r\t";
  if (const char* at = e != '\0' ? std::strchr(kFrom, e) : nullptr) {
    out->push_back(kTo[at - kFrom]);
    return true;
  }
  uint32_t cp = 0;
  if (e != 'u' || !Hex4(&cp)) return false;
  if (cp >= 0xdc00 && cp <= 0xdfff) return false;  // a lone low surrogate
  if (cp >= 0xd800 && cp <= 0xdbff) {
    uint32_t low = 0;
    if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return false;
    p_ += 2;
    if (!Hex4(&low) || low < 0xdc00 || low > 0xdfff) return false;
    cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
  }
  AppendUtf8(cp, out);
  return true;
}

bool Scanner::Hex4(uint32_t* out) {
  if (end_ - p_ < 4) return false;
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    const int d = HexDigit(p_[i]);
    if (d < 0) return false;
    v = v * 16 + static_cast<uint32_t>(d);
  }
  p_ += 4;
  *out = v;
  return true;
}

// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
bool Scanner::Number(ScannedValue* value) {
  const char* start = p_;
  const bool negative = *p_ == '-';
  if (negative) ++p_;
  if (!IsDigit(p_, end_)) return false;
  uint64_t m = 0;
  bool beyond = false;  // more than 64 bits
  if (*p_ == '0') {
    ++p_;
  } else {
    for (; IsDigit(p_, end_); ++p_) {
      const auto d = static_cast<uint64_t>(*p_ - '0');
      if (m > (UINT64_MAX - d) / 10) beyond = true;
      m = m * 10 + d;
    }
  }
  bool fraction = false;
  if (p_ < end_ && *p_ == '.') {
    ++p_;
    if (!IsDigit(p_, end_)) return false;
    while (IsDigit(p_, end_)) ++p_;
    fraction = true;
  }
  if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
    ++p_;
    if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
    if (!IsDigit(p_, end_)) return false;
    while (IsDigit(p_, end_)) ++p_;
    fraction = true;
  }
  constexpr uint64_t kMinMagnitude = uint64_t{1} << 63;  // of INT64_MIN
  if (fraction || beyond || (negative && m > kMinMagnitude)) {
    // Not an int64 or uint64: a double, as the strict JSON parse reads it,
    // which refuses one past the double's range. Such a value is never an
    // integer here; only its reason depends on whether it is an integral
    // one beyond int64 (1e19: out of range; 1.5: not an integer).
    const double d = std::strtod(std::string(start, p_).c_str(), nullptr);
    if (!std::isfinite(d)) return false;
    value->kind = std::trunc(d) == d && std::fabs(d) >= std::ldexp(1.0, 63)
                      ? ValueKind::kHuge
                      : ValueKind::kOther;
  } else {
    value->kind = negative ? ValueKind::kSigned : ValueKind::kUnsigned;
    value->magnitude = m;
  }
  return true;
}

bool Scanner::Literal(std::string_view word) {
  if (static_cast<size_t>(end_ - p_) < word.size() ||
      std::string_view(p_, word.size()) != word) {
    return false;
  }
  p_ += word.size();
  return true;
}

}  // namespace

bool ScanApplyLine(std::string_view line, ScannedLine* out) {
  return Scanner(line, out).Line();
}

}  // namespace counterctl
