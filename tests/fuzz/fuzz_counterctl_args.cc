// Fuzzes counterctl's argument handling: the argv is the fuzz input split on
// NUL bytes, parsed by the real CLI11 grammar (tools/counterctl/cli.h)
// without running a command; each argument is also fed to the strict value
// parsers of tools/counterctl/common.h. Properties:
//  - no exception escapes CommandLine::Parse, for any argv;
//  - Parse ends in one of three ways: a subcommand chosen (nothing
//    printed), exit 0 after --help/--version (stdout only), or exit 2 with
//    exactly one "counterctl: " line on stderr and nothing on stdout;
//  - ParseInt64/ParseUint64 accept exactly the base-10 grammar of
//    common.h and agree with a 128-bit reference; ParseCountFlag agrees
//    with ParseUint64 and its range;
//  - ParseUtcTime: an integer is epoch milliseconds; an ISO time that
//    parses formats back (FormatUtcMillis) to the same instant, in the
//    canonical form with three fraction digits;
//  - Printable never lets a control character through and bounds its
//    output; DescribeFlags starts with the number.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "tally/text.h"
#include <vector>

#include "cli.h"
#include "common.h"
#include "fuzz_check.h"

namespace counterctl {
namespace {

using Wide = __int128;

// The value of a base-10 integer with an optional '-', or nullopt when the
// text is not one; values beyond 2^65 are clamped (they fit nothing).
std::optional<Wide> Reference(std::string_view text, bool allow_minus) {
  size_t i = 0;
  bool negative = false;
  if (allow_minus && !text.empty() && text[0] == '-') {
    negative = true;
    i = 1;
  }
  if (i == text.size()) return std::nullopt;
  Wide v = 0;
  const Wide clamp = static_cast<Wide>(1) << 65;
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    v = v * 10 + (text[i] - '0');
    if (v > clamp) v = clamp;
  }
  return negative ? -v : v;
}

void CheckIntegers(std::string_view text) {
  const std::optional<int64_t> i = ParseInt64(text);
  const std::optional<Wide> ri = Reference(text, /*allow_minus=*/true);
  const bool fits_i = ri && *ri >= INT64_MIN && *ri <= INT64_MAX;
  FUZZ_CHECK(i.has_value() == fits_i);
  if (i) FUZZ_CHECK(static_cast<Wide>(*i) == *ri);

  const std::optional<uint64_t> u = ParseUint64(text);
  const std::optional<Wide> ru = Reference(text, /*allow_minus=*/false);
  const bool fits_u = ru && *ru <= static_cast<Wide>(UINT64_MAX);
  FUZZ_CHECK(u.has_value() == fits_u);
  if (u) FUZZ_CHECK(static_cast<Wide>(*u) == *ru);

  // The ranges the subcommands use (--threads, --limit, backup ids).
  static constexpr std::pair<uint64_t, uint64_t> kRanges[] = {
      {1, 64}, {1, 1000000}, {1, UINT32_MAX}};
  for (const auto& [min, max] : kRanges) {
    const std::optional<uint64_t> c = ParseCountFlag("--n", text, min, max);
    FUZZ_CHECK(c.has_value() == (u && *u >= min && *u <= max));
    if (c) FUZZ_CHECK(*c == *u);
  }
}

// "YYYY-MM-DDTHH:MM:SS[.f{1,3}]Z" with the fraction padded to three digits.
std::string Canonical(std::string_view iso) {
  std::string out(iso.substr(0, 19));
  std::string fraction;
  if (iso.size() > 20) fraction = std::string(iso.substr(20, iso.size() - 21));
  fraction.resize(3, '0');
  return out + "." + fraction + "Z";
}

void CheckTime(std::string_view text) {
  const std::optional<int64_t> t = ParseUtcTime(text);
  if (const std::optional<int64_t> ms = ParseInt64(text)) {
    FUZZ_CHECK(t == ms);
    return;
  }
  if (!t) return;
  // Accepted as ISO: 20..24 bytes ending in Z, and it prints the same way.
  FUZZ_CHECK(text.size() >= 20 && text.size() <= 24 && text.back() == 'Z');
  const std::string formatted = FormatUtcMillis(*t);
  if (formatted != Canonical(text)) {
    std::fprintf(stderr, "ParseUtcTime(\"%s\") = %lld formats as \"%s\"\n",
                 std::string(text).c_str(), static_cast<long long>(*t),
                 formatted.c_str());
  }
  FUZZ_CHECK(formatted == Canonical(text));
  FUZZ_CHECK(ParseUtcTime(formatted) == t);
}

void CheckPrintable(std::string_view text, size_t max_bytes) {
  const std::string p = Printable(text, max_bytes);
  for (char c : p) {
    const unsigned char b = static_cast<unsigned char>(c);
    FUZZ_CHECK(b >= 0x20 && b != 0x7f);
  }
  // An escape (4 bytes, 8 for a C1 control's two) may start just below the
  // limit; "..." marks a cut.
  FUZZ_CHECK(p.size() <= max_bytes - 1 + 8 + 3);
  // Text without a control character (C0, DEL, or a C1 control in UTF-8:
  // tally/text.h, the rule Printable escapes by) comes back unchanged.
  const bool plain =
      text.size() <= max_bytes && !tally::HasControlCharacter(text);
  if (plain) FUZZ_CHECK(p == text);
}

// What Parse printed; std::cout and std::cerr point here during one call.
struct Captured {
  std::ostringstream out;
  std::ostringstream err;
};

void CheckParse(const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  argv.push_back("counterctl");
  for (const std::string& a : args) argv.push_back(a.c_str());

  Captured captured;
  std::streambuf* old_out = std::cout.rdbuf(captured.out.rdbuf());
  std::streambuf* old_err = std::cerr.rdbuf(captured.err.rdbuf());
  std::optional<int> code;
  try {
    CommandLine command_line;
    code = command_line.Parse(static_cast<int>(argv.size()), argv.data());
  } catch (const std::exception& e) {
    std::cerr.rdbuf(old_err);
    std::fprintf(stderr, "exception escaped Parse: %s\n", e.what());
    std::abort();
  } catch (...) {
    std::cerr.rdbuf(old_err);
    std::fprintf(stderr, "unknown exception escaped Parse\n");
    std::abort();
  }
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);

  const std::string out = captured.out.str();
  const std::string err = captured.err.str();
  if (!code) {
    // A subcommand was chosen; nothing is printed before it runs.
    FUZZ_CHECK(out.empty() && err.empty());
  } else if (*code == kExitOk) {
    FUZZ_CHECK(!out.empty() && err.empty());
  } else {
    FUZZ_CHECK(*code == kExitUsage);
    FUZZ_CHECK(out.empty());
    FUZZ_CHECK(err.rfind("counterctl: ", 0) == 0);
    FUZZ_CHECK(err.find('\n') == err.size() - 1);
  }
}

}  // namespace
}  // namespace counterctl

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace counterctl;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  // Up to 32 arguments: longer command lines only repeat what these cover.
  std::vector<std::string> args;
  size_t start = 0;
  while (start <= input.size() && args.size() < 32) {
    size_t end = input.find('\0', start);
    if (end == std::string_view::npos) end = input.size();
    args.emplace_back(input.substr(start, end - start));
    start = end + 1;
  }
  if (size == 0) args.clear();

  // The value parsers print usage errors (ParseCountFlag); keep them quiet.
  std::ostringstream sink;
  std::streambuf* old_err = std::cerr.rdbuf(sink.rdbuf());
  for (const std::string& a : args) {
    CheckIntegers(a);
    CheckTime(a);
    CheckPrintable(a, 40);
  }
  std::cerr.rdbuf(old_err);
  if (size >= 4) {
    uint32_t flags;
    std::memcpy(&flags, data, sizeof(flags));
    FUZZ_CHECK(DescribeFlags(flags).rfind(std::to_string(flags), 0) == 0);
  }

  CheckParse(args);
  return 0;
}
