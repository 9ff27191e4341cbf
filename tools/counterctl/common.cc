#include "common.h"

#include <charconv>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <string>

#include "tally/options.h"

namespace counterctl {

std::string Printable(std::string_view text, size_t max_bytes) {
  std::string out;
  out.reserve(text.size() < max_bytes ? text.size() : max_bytes);
  size_t i = 0;
  for (; i < text.size() && out.size() < max_bytes; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (i < text.size()) out += "...";
  return out;
}

void PrintError(std::string_view message) {
  // Messages may be long (a path, an engine message); only control
  // characters are escaped, nothing is cut.
  std::cerr << "counterctl: " << Printable(message, message.size() * 4 + 4)
            << std::endl;
}

int Fail(const tally::Status& status) {
  PrintError(status.ToString());
  return kExitError;
}

int UsageError(std::string_view message) {
  PrintError(message);
  return kExitUsage;
}

tally::Status OpenDb(const GlobalArgs& global, OpenMode mode,
                     std::unique_ptr<tally::Db>* db) {
  tally::Options options;
  options.create_if_missing = mode == OpenMode::kCreate;
  options.read_only = mode == OpenMode::kRead;
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
  char date[32];
  std::strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof(out), "%s.%03dZ", date, static_cast<int>(rem));
  return out;
}

}  // namespace counterctl
