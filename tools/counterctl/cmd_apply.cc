// apply --file F [--threads N] [--batch N] [--skip N] [--progress]
//       [--max-delay DURATION]: counts a JSON Lines file of events (format
// in apply_line.h and docs/counterctl.md).
//
// A file is read whole and applied by the workers of apply_runner.h. Stdin
// (--file -) is a feed: its lines are applied as they arrive, one batch at
// a time in line order, a batch committed once it holds --batch lines or
// its first line has waited --max-delay (default 100 ms), so a slow feed
// (`tail -f events.log | counterctl apply --file -`) is counted as it goes.
//
// Output: each rejected line as "counterctl: F:LINE: reason" on stderr, in
// line order; with --progress, "committed through line L" on stdout each
// time the committed prefix grows; then "applied=A duplicates=D
// conflicts=C outside_window=W rejected=R lines=L" on stdout, where L
// (non-blank lines read) = A + D + C + W + R unless the run stopped on a
// database failure. Exit 1 when any line was rejected. --json prints the
// summary as one document instead: {"applied", "duplicates", "conflicts",
// "outside_window", "rejected", "lines", "committed_through", "stopped"}
// (not with --progress, whose lines would make stdout more than one
// document).
//
// SIGINT or SIGTERM stops the run cleanly (interrupt.h): the batches
// already started are finished, nothing more is read or written, the
// summary is printed, then one line on stderr saying which lines are
// committed and how to continue ("--skip L": a later run skips lines
// 1..L, so no plain increment counts twice), and the exit code is 130
// (SIGINT) or 143 (SIGTERM).

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
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
#include "interrupt.h"
#include "json_output.h"
#include "tally/limits.h"

namespace counterctl {
namespace {

// How long a feed's first pending line may wait for its batch, at most:
// a bound so a typo ("100d") is refused rather than a feed that never
// commits; a minute is already far past any live view's patience.
constexpr int64_t kMaxApplyDelayMs = 60'000;
// How often a feed with nothing pending looks at the stop flag (a poll
// timeout; a signal interrupts the poll anyway).
constexpr int kIdlePollMs = 500;

// Reads the whole file in one go: one large read is far cheaper than a
// getline per event, and the lines can then be handed to the workers as
// views without copying.
bool ReadAll(const std::string& path, std::string* out, std::string* error) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
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
  std::fclose(f);
  if (failed) {
    *error = path + ": " + std::strerror(err);
    return false;
  }
  return true;
}

// Appends the complete lines of `text` to *lines; returns the length of the
// complete part (the rest is a line still being written).
size_t SplitLines(std::string_view text, std::vector<std::string_view>* lines) {
  size_t start = 0;
  while (start < text.size()) {
    const void* nl =
        std::memchr(text.data() + start, '\n', text.size() - start);
    if (nl == nullptr) break;
    const size_t end =
        static_cast<size_t>(static_cast<const char*>(nl) - text.data());
    lines->push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return start;
}

// A feed's batch added to its run so far.
void Add(const ApplyReport& part, ApplyReport* total) {
  AddCounts(part, total);
  total->committed_through = part.committed_through;
  if (!part.fatal.ok()) {
    total->fatal = part.fatal;
    total->fatal_lines = part.fatal_lines;
  }
  total->stopped = total->stopped || part.stopped;
}

// Applies stdin as a feed (see the top of this file).
ApplyReport ApplyFeed(tally::Db* db, ApplyConfig config, int64_t max_delay_ms) {
  using Clock = std::chrono::steady_clock;
  ApplyReport total;
  total.committed_through = config.first_line - 1;
  std::string buffer;   // bytes read, from the first uncommitted line on
  size_t complete = 0;  // bytes of `buffer` that are whole lines
  std::vector<std::string_view> pending;
  Clock::time_point first_pending{};
  bool eof = false;
  const std::atomic<bool>& stop = StopRequested();
  while (true) {
    const bool due =
        !pending.empty() &&
        (pending.size() >= config.batch_ops || eof || stop.load() ||
         Clock::now() - first_pending >= std::chrono::milliseconds(max_delay_ms));
    if (due) {
      // Lines past a full batch stay for the next one.
      const size_t take = std::min(pending.size(), config.batch_ops);
      std::vector<std::string_view> batch(pending.begin(),
                                          pending.begin() + take);
      ApplyConfig one = config;
      one.threads = 1;
      one.stop = nullptr;  // a started batch is finished
      ApplyReport part = ApplyLines(db, batch, one);
      Add(part, &total);
      if (!part.fatal.ok()) return total;
      config.first_line += take;
      const size_t used = static_cast<size_t>(
          batch.back().data() + batch.back().size() + 1 - buffer.data());
      // Keep the views valid: move the rest to the front and re-split.
      buffer.erase(0, std::min(used, buffer.size()));
      pending.clear();
      // Lines left over from a full batch keep their first one's wait.
      complete = SplitLines(buffer, &pending);
      continue;
    }
    if (stop.load()) {
      total.stopped = true;
      return total;
    }
    if (eof) {
      // A last line without its newline still counts.
      if (complete < buffer.size()) {
        buffer.push_back('\n');
        if (pending.empty()) first_pending = Clock::now();
        complete = SplitLines(buffer, &pending);
        continue;
      }
      return total;
    }
    int timeout = kIdlePollMs;
    if (!pending.empty()) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          first_pending + std::chrono::milliseconds(max_delay_ms) -
          Clock::now());
      timeout = static_cast<int>(std::max<int64_t>(0, left.count()));
    }
    pollfd in{STDIN_FILENO, POLLIN, 0};
    const int ready = ::poll(&in, 1, timeout);
    if (ready < 0) {
      if (errno == EINTR) continue;  // a signal: the loop looks at `stop`
      total.fatal = tally::Status::IOError(std::string("stdin: ") +
                                           std::strerror(errno));
      return total;
    }
    if (ready == 0) continue;  // the wait for a batch is over
    char chunk[1 << 16];
    const ssize_t got = ::read(STDIN_FILENO, chunk, sizeof chunk);
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      total.fatal = tally::Status::IOError(std::string("stdin: ") +
                                           std::strerror(errno));
      return total;
    }
    if (got == 0) {
      eof = true;
      continue;
    }
    const bool was_empty = pending.empty();
    buffer.append(chunk, static_cast<size_t>(got));
    pending.clear();
    complete = SplitLines(buffer, &pending);
    if (was_empty && !pending.empty()) first_pending = Clock::now();
  }
}

}  // namespace

int RunApply(const GlobalArgs& global, const ApplyArgs& args) {
  std::optional<uint64_t> threads =
      ParseCountFlag("--threads", args.threads, 1, kMaxApplyThreads);
  if (!threads) return kExitUsage;
  std::optional<uint64_t> batch =
      ParseCountFlag("--batch", args.batch, 1, tally::kMaxBatchOps);
  if (!batch) return kExitUsage;
  std::optional<uint64_t> skip = ParseUint64(args.skip);
  if (!skip) {
    return UsageError("--skip " + Printable(args.skip) +
                      ": expected a count of lines, an integer of at least 0");
  }
  std::optional<int64_t> max_delay = ParseDurationMs(args.max_delay);
  if (!max_delay || *max_delay < 1 || *max_delay > kMaxApplyDelayMs) {
    return UsageError("--max-delay " + Printable(args.max_delay) +
                      ": expected a duration of 1ms..60s, such as 100ms");
  }
  if (args.json && args.progress) {
    return UsageError(
        "--json prints one document at the end; --progress prints lines as "
        "it goes: choose one");
  }
  const bool feed = args.file == "-";
  if (feed && *skip != 0) {
    return UsageError(
        "--skip needs a file: a feed on stdin has no lines to skip (its "
        "writer resends from where it stopped)");
  }

  std::string content;
  std::vector<std::string_view> lines;
  if (!feed) {
    std::string error;
    if (!ReadAll(args.file, &content, &error)) {
      PrintError(error);
      return kExitError;
    }
    const size_t complete = SplitLines(content, &lines);
    if (complete < content.size()) {
      lines.push_back(std::string_view(content).substr(complete));
    }
    if (*skip > lines.size()) {
      return UsageError("--skip " + std::to_string(*skip) + ": " + args.file +
                        " has only " + std::to_string(lines.size()) +
                        " lines");
    }
    lines.erase(lines.begin(), lines.begin() + static_cast<ptrdiff_t>(*skip));
  }

  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kWrite, &db);
  if (!s.ok()) return Fail(s);

  InstallStopHandlers();
  ApplyConfig config;
  config.threads = *threads;
  config.batch_ops = *batch;
  config.first_line = *skip + 1;
  config.stop = &StopRequested();
  if (args.progress) {
    config.on_committed = [](size_t line) {
      std::cout << "committed through line " << line << std::endl;
    };
  }
  const ApplyReport report = feed ? ApplyFeed(db.get(), config, *max_delay)
                                  : ApplyLines(db.get(), lines, config);

  for (const Rejection& r : report.rejections) {
    PrintError(args.file + ":" + std::to_string(r.line) + ": " + r.reason);
  }
  if (!report.fatal.ok()) {
    PrintError(args.file + ": stopped at " + report.fatal_lines + ": " +
               report.fatal.ToString());
  }
  if (args.json) {
    PrintJson(Json{{"applied", report.applied},
                   {"duplicates", report.duplicates},
                   {"conflicts", report.conflicts},
                   {"outside_window", report.outside_window},
                   {"rejected", report.rejected},
                   {"lines", report.lines},
                   {"committed_through", report.committed_through},
                   {"stopped", report.stopped}});
  } else {
    std::cout << "applied=" << report.applied
              << " duplicates=" << report.duplicates
              << " conflicts=" << report.conflicts
              << " outside_window=" << report.outside_window
              << " rejected=" << report.rejected << " lines=" << report.lines
              << std::endl;
  }
  if (report.stopped) {
    const std::string done =
        report.committed_through == 0
            ? "no line was committed"
            : "lines 1.." + std::to_string(report.committed_through) +
                  " are committed";
    PrintError(std::string("interrupted by ") + StopSignalName() + ": " +
               done + " (the batches in flight were finished)" +
               (feed ? "; stdin was not read further"
                     : "; continue with --skip " +
                           std::to_string(report.committed_through)));
    return 128 + StopSignal();
  }
  return report.fatal.ok() && report.rejected == 0 ? kExitOk : kExitError;
}

}  // namespace counterctl
