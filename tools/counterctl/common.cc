#include "common.h"

#include <charconv>
#include <cstdlib>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <string>

#include "progress.h"
#include "tally/limits.h"
#include "tally/text.h"
#include "tally/options.h"

namespace counterctl {

std::string Printable(std::string_view text, size_t max_bytes) {
  std::string out;
  out.reserve(text.size() < max_bytes ? text.size() : max_bytes);
  size_t i = 0;
  for (; i < text.size() && out.size() < max_bytes; ++i) {
    const size_t n = tally::ControlCharacterAt(text, i);
    if (n == 0) {
      out += text[i];
      continue;
    }
    for (size_t j = 0; j < n; ++j, ++i) {  // a C1 control: both bytes
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x",
                    static_cast<unsigned char>(text[i]));
      out += buf;
    }
    --i;
  }
  if (i < text.size()) out += "...";
  return out;
}

std::string Escaped(std::string_view text) {
  return Printable(text, text.size() * 4 + 4);
}

void PrintKeyValues(const std::vector<tally::KeyValue>& keys) {
  for (const tally::KeyValue& kv : keys) {
    std::cout << Escaped(kv.key) << '\t';
    if (kv.out_of_range) {
      std::cout << kOutOfRangeText << '\n';
    } else {
      std::cout << kv.value << '\n';
    }
  }
}

void NoteOutOfRangeKeys(const std::string& counter,
                        const std::vector<tally::KeyValue>& keys) {
  size_t bad = 0;
  const tally::KeyValue* first = nullptr;
  for (const tally::KeyValue& kv : keys) {
    if (!kv.out_of_range) continue;
    if (bad++ == 0) first = &kv;
  }
  if (first == nullptr) return;
  PrintNote(std::to_string(bad) + " key(s) hold a value beyond int64 (" +
            kOutOfRangeText + "), the first \"" + Printable(first->key) +
            "\": delete such a key (counterctl delete " + Printable(counter) +
            " --key KEY --yes)");
}

void PrintNote(std::string_view message) {
  PrintError("note: " + std::string(message));
}

void PrintError(std::string_view message) {
  // Messages may be long (a path, an engine message); only control
  // characters are escaped, nothing is cut.
  ClearProgressLine();
  std::cerr << "counterctl: " << Escaped(message) << std::endl;
}

int Fail(const tally::Status& status) {
  PrintError(status.ToString());
  return kExitError;
}

tally::Status NoRollupYet(tally::Db& db, std::string_view counter,
                          const tally::Status& status,
                          std::string_view alternative) {
  // NotFound for a counter that exists: its roll-up is what is missing.
  if (!status.IsNotFound() || !db.DescribeCounter(counter).ok()) return status;
  const std::string name(counter);
  return tally::Status::NotFound("counter '" + name +
                                 "' has no roll-up yet: run `counterctl "
                                 "rollup " + name + "` first" +
                                 std::string(alternative));
}

int UsageError(std::string_view message) {
  PrintError(message);
  return kExitUsage;
}

std::string WriterState(const tally::StatsOrigin& o) {
  if (o.source == tally::StatsSource::kNone) return "";
  if (o.live) return "live";
  return o.closed ? "closed" : "gone";
}

namespace {
class FrozenClock final : public tally::Clock {
 public:
  explicit FrozenClock(int64_t ms) : ms_(ms) {}
  int64_t NowMillis() const override { return ms_; }

 private:
  const int64_t ms_;
};
}  // namespace

const tally::Clock* ToolClock() {
  static const tally::Clock* const clock = []() -> const tally::Clock* {
    const char* now = std::getenv("COUNTERCTL_NOW");
    if (now == nullptr) return tally::Clock::System();
    const std::optional<int64_t> ms = ParseUtcTime(now);
    if (!ms) return nullptr;
    return new FrozenClock(*ms);  // lives as long as the process
  }();
  return clock;
}

tally::Status NeedsLocalFiles(const GlobalArgs& global,
                              std::string_view command) {
  if (global.db_path.find("://") == std::string::npos) {
    return tally::Status::OK();
  }
  return tally::Status::NotSupported(
      std::string(command) + " reads a local database's files, and " +
      global.db_path.substr(0, global.db_path.find("://") + 3) +
      "... names a server: there are none to read");
}

tally::Status OpenDb(const GlobalArgs& global, OpenMode mode,
                     std::unique_ptr<tally::Db>* db, uint32_t reads) {
  tally::Options options;
  options.clock = ToolClock();
  if (options.clock == nullptr) {
    return tally::Status::InvalidArgument(
        "COUNTERCTL_NOW=" + std::string(std::getenv("COUNTERCTL_NOW")) +
        ": expected an ISO-8601 UTC time or epoch milliseconds");
  }
  options.create_if_missing = mode == OpenMode::kCreate;
  options.read_only = mode == OpenMode::kRead;
  options.reads = options.read_only ? reads : tally::kReadAll;
  // A command-line run is too short for a background pass; `rollup` asks.
  options.rollup_interval_ms = 0;
  return tally::Db::Open(options, global.db_path, db);
}

std::optional<int64_t> ParseInt64(std::string_view text) {
  int64_t value = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(first, last, value, 10);
  if (text.empty() || ec != std::errc() || ptr != last) return std::nullopt;
  return value;
}

std::optional<uint64_t> ParseUint64(std::string_view text) {
  uint64_t value = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  // from_chars for unsigned refuses '-', so "-1" cannot wrap around.
  auto [ptr, ec] = std::from_chars(first, last, value, 10);
  if (text.empty() || ec != std::errc() || ptr != last) return std::nullopt;
  return value;
}

std::optional<int64_t> ParseTimeFlag(std::string_view flag,
                                     std::string_view text) {
  std::optional<int64_t> t = ParseUtcTime(text);
  if (!t) {
    UsageError(std::string(flag) + " " + Printable(text) +
               ": expected ISO-8601 UTC such as 2026-11-30T04:00:00Z or "
               "2026-11-30T04:00:00.250Z, or milliseconds since the Unix "
               "epoch");
  }
  return t;
}

std::optional<int64_t> ParseDurationMs(std::string_view text) {
  static constexpr std::pair<std::string_view, int64_t> kUnits[] = {
      {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", 86400000}};
  if (text == "0") return 0;
  for (const auto& [unit, scale] : kUnits) {
    if (text.size() <= unit.size() ||
        text.substr(text.size() - unit.size()) != unit) {
      continue;
    }
    const std::string_view digits = text.substr(0, text.size() - unit.size());
    // "5ms" also ends in "s": only the unit whose number parses counts.
    std::optional<uint64_t> n = ParseUint64(digits);
    if (!n) continue;
    if (*n > static_cast<uint64_t>(INT64_MAX / scale)) return std::nullopt;
    return static_cast<int64_t>(*n) * scale;
  }
  return std::nullopt;
}

std::optional<uint64_t> ParseCountFlag(std::string_view flag,
                                       std::string_view text, uint64_t min,
                                       uint64_t max) {
  std::optional<uint64_t> value = ParseUint64(text);
  if (!value || *value < min || *value > max) {
    UsageError(std::string(flag) + " " + Printable(text) +
               ": expected an integer in " + std::to_string(min) + ".." +
               std::to_string(max));
    return std::nullopt;
  }
  return value;
}

std::string FormatUtcMillis(int64_t ms) {
  // Floor division, so times before 1970 still get a 0..999 millisecond
  // part instead of a negative one.
  int64_t secs = ms / 1000;
  int64_t rem = ms % 1000;
  if (rem < 0) {
    rem += 1000;
    secs -= 1;
  }
  const std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  if (gmtime_r(&t, &tm) == nullptr) return std::to_string(ms) + "ms";
  // Not strftime's %Y: it prints year 999 as "999", which ParseUtcTime
  // (like ISO 8601) refuses; years are four digits.
  char out[64];
  std::snprintf(out, sizeof(out), "%04lld-%02d-%02dT%02d:%02d:%02d.%03dZ",
                tm.tm_year + 1900LL, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                tm.tm_min, tm.tm_sec, static_cast<int>(rem));
  return out;
}

namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
// days_from_civil), exact for every year this tool accepts.
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool IsLeapYear(int64_t y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

// Reads exactly `n` digits at text[*pos] into *out.
bool Digits(std::string_view text, size_t* pos, size_t n, int* out) {
  if (*pos + n > text.size()) return false;
  int v = 0;
  for (size_t i = 0; i < n; ++i) {
    const char c = text[*pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *pos += n;
  *out = v;
  return true;
}

bool Expect(std::string_view text, size_t* pos, char c) {
  if (*pos >= text.size() || text[*pos] != c) return false;
  ++*pos;
  return true;
}

}  // namespace

std::optional<int64_t> ParseUtcTime(std::string_view text) {
  if (std::optional<int64_t> ms = ParseInt64(text)) return ms;
  size_t pos = 0;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!Digits(text, &pos, 4, &year) || !Expect(text, &pos, '-') ||
      !Digits(text, &pos, 2, &month) || !Expect(text, &pos, '-') ||
      !Digits(text, &pos, 2, &day) || !Expect(text, &pos, 'T') ||
      !Digits(text, &pos, 2, &hour) || !Expect(text, &pos, ':') ||
      !Digits(text, &pos, 2, &minute) || !Expect(text, &pos, ':') ||
      !Digits(text, &pos, 2, &second)) {
    return std::nullopt;
  }
  int millis = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    size_t digits = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (++digits > 3) return std::nullopt;  // finer than a millisecond
      millis = millis * 10 + (text[pos] - '0');
      ++pos;
    }
    if (digits == 0) return std::nullopt;
    for (; digits < 3; ++digits) millis *= 10;
  }
  if (!Expect(text, &pos, 'Z') || pos != text.size()) return std::nullopt;
  static constexpr int kDaysInMonth[] = {31, 28, 31, 30, 31, 30,
                                         31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 ||
      second > 59) {
    return std::nullopt;
  }
  const int month_days =
      kDaysInMonth[month - 1] + (month == 2 && IsLeapYear(year) ? 1 : 0);
  if (day > month_days) return std::nullopt;
  const int64_t days = DaysFromCivil(year, month, day);
  return ((days * 24 + hour) * 60 + minute) * 60000 + int64_t{second} * 1000 +
         millis;
}

bool CheckKeyFlag(std::string_view key) {
  if (!key.empty()) return true;
  UsageError("--key '': expected a key of 1.." +
             std::to_string(tally::kMaxKeyBytes) + " bytes");
  return false;
}

tally::CounterRef RefOf(const std::string& name, const KeyArg& key) {
  return key.given ? tally::CounterRef(name, key.value)
                   : tally::CounterRef(name);
}

std::string DescribeFlags(uint32_t flags) {
  std::string out = std::to_string(flags);
  if (flags == 0) return out;
  std::string names;
  if (flags & kFlagPlainIncrements) names = "plain increments";
  const uint32_t unknown = flags & ~kFlagPlainIncrements;
  if (unknown != 0) {
    char buf[24];
    std::snprintf(buf, sizeof(buf), "unknown 0x%x", unknown);
    names += names.empty() ? buf : std::string(", ") + buf;
  }
  return out + " (" + names + ")";
}

}  // namespace counterctl
