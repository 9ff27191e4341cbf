// apply --file F [--threads N] [--batch N]: counts a JSON Lines file of
// events (format in apply_line.h and docs/counterctl.md).
//
// Output: each rejected line as "counterctl: F:LINE: reason" on stderr, in
// line order; then "applied=A duplicates=D conflicts=C outside_window=W
// rejected=R lines=L" on stdout, where L (non-blank lines read) =
// A + D + C + W + R unless the run stopped on a database failure. Exit 1 when any line was rejected.

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "apply_runner.h"
#include "commands.h"
#include "tally/limits.h"

namespace counterctl {
namespace {

// Reads the whole input in one go ("-" is stdin): one large read is far
// cheaper than a getline per event, and the lines can then be handed to the
// workers as views without copying.
bool ReadAll(const std::string& path, std::string* out, std::string* error) {
  const bool is_stdin = path == "-";
  std::FILE* f = is_stdin ? stdin : std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    *error = path + ": " + std::strerror(errno);
    return false;
  }
  constexpr size_t kChunk = size_t{1} << 20;
  out->clear();
  size_t used = 0;
  for (;;) {
    out->resize(used + kChunk);
    const size_t got = std::fread(out->data() + used, 1, kChunk, f);
    used += got;
    if (got < kChunk) break;
  }
  out->resize(used);
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  if (!is_stdin) std::fclose(f);
  if (failed) {
    *error = path + ": " + std::strerror(err);
    return false;
  }
  return true;
}

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    const void* nl =
        std::memchr(text.data() + start, '\n', text.size() - start);
    const size_t end =
        nl ? static_cast<size_t>(static_cast<const char*>(nl) - text.data())
           : text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace

int RunApply(const GlobalArgs& global, const ApplyArgs& args) {
  std::optional<uint64_t> threads =
      ParseCountFlag("--threads", args.threads, 1, kMaxApplyThreads);
  if (!threads) return kExitUsage;
  std::optional<uint64_t> batch =
      ParseCountFlag("--batch", args.batch, 1, tally::kMaxBatchOps);
  if (!batch) return kExitUsage;

  std::string content;
  std::string error;
  if (!ReadAll(args.file, &content, &error)) {
    PrintError(error);
    return kExitError;
  }
  const std::vector<std::string_view> lines = SplitLines(content);

  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kWrite, &db);
  if (!s.ok()) return Fail(s);

  ApplyConfig config;
  config.threads = *threads;
  config.batch_ops = *batch;
  const ApplyReport report = ApplyLines(db.get(), lines, config);

  for (const Rejection& r : report.rejections) {
    PrintError(args.file + ":" + std::to_string(r.line) + ": " + r.reason);
  }
  if (!report.fatal.ok()) {
    PrintError(args.file + ": stopped at " + report.fatal_lines + ": " +
               report.fatal.ToString());
  }
  std::cout << "applied=" << report.applied
            << " duplicates=" << report.duplicates
            << " conflicts=" << report.conflicts
            << " outside_window=" << report.outside_window
            << " rejected=" << report.rejected << " lines=" << report.lines
            << "\n";
  return report.fatal.ok() && report.rejected == 0 ? kExitOk : kExitError;
}

}  // namespace counterctl
