// apply --file F [--threads N] [--batch N] [--skip N] [--progress]
//       [--max-delay DURATION]: counts a JSON Lines file of events (format
// in apply_line.h and docs/counterctl.md).
//
// A file is read as it is applied, a chunk of --batch lines at a time, by
// the workers of apply_runner.h: memory stays bounded by --batch and
// --threads whatever the file's size (the bound: apply_input.h). Stdin
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
// database failure; that failure is reported with the lines in flight and
// the lines committed ("lines 1..L are committed; continue with --skip L").
// Exit 1 when any line was rejected. --json prints the
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

#include <unistd.h>

#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "apply_input.h"
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

// "lines 1..L are committed" or "no line was committed".
std::string CommittedText(size_t through) {
  return through == 0 ? "no line was committed"
                      : "lines 1.." + std::to_string(through) +
                            " are committed";
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

  // A file is opened, read once and skipped through --skip before the
  // database opens, so a missing file or a short one touches nothing.
  std::unique_ptr<FileSource> file;
  if (!feed) {
    std::string error;
    uint64_t lines_in_file = 0;
    file = FileSource::Open(args.file, *skip, &error, &lines_in_file);
    if (file == nullptr && !error.empty()) {
      PrintError(error);
      return kExitError;
    }
    if (file == nullptr) {
      return UsageError("--skip " + std::to_string(*skip) + ": " + args.file +
                        " has only " + std::to_string(lines_in_file) +
                        " lines");
    }
  }

  // Before the open: the signal thread must come before RocksDB's threads.
  InstallStopHandlers();
  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kWrite, &db);
  if (!s.ok()) return Fail(s);

  ApplyConfig config;
  config.threads = *threads;
  config.batch_ops = *batch;
  config.stop = &StopRequested();
  if (args.progress) {
    config.on_committed = [](size_t line) {
      std::cout << "committed through line " << line << std::endl;
    };
  }
  const std::string& name = args.file;
  config.on_rejected = [&name](const Rejection& r) {
    PrintError(name + ":" + std::to_string(r.line) + ": " + r.reason);
  };
  // A feed: one batch at a time, in line order; the source itself watches
  // the stop flag, so the lines already read are committed before it ends.
  std::unique_ptr<FeedSource> stdin_feed;
  if (feed) {
    config.threads = 1;
    config.stop = nullptr;
    stdin_feed = std::make_unique<FeedSource>(STDIN_FILENO, *max_delay,
                                              &StopRequested());
  }
  ApplySource* source = feed ? static_cast<ApplySource*>(stdin_feed.get())
                             : static_cast<ApplySource*>(file.get());
  const ApplyReport report = ApplyLines(db.get(), source, config);

  if (!report.fatal.ok()) {
    std::string also;
    for (const auto& [first, last] : report.committed_after) {
      also += (also.empty() ? "" : ", ") + std::to_string(first) + ".." +
              std::to_string(last);
    }
    PrintError(args.file + ": stopped at " + report.fatal_lines + ": " +
               report.fatal.ToString() + "; " +
               CommittedText(report.committed_through) +
               (also.empty() ? ""
                             : ", and lines " + also +
                                   " (other threads' batches)") +
               (feed || !also.empty()
                    ? ""
                    : "; continue with --skip " +
                          std::to_string(report.committed_through)));
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
    PrintError(std::string("interrupted by ") + StopSignalName() + ": " +
               CommittedText(report.committed_through) + " (the batches in flight were finished)" +
               (feed ? "; stdin was not read further"
                     : "; continue with --skip " +
                           std::to_string(report.committed_through)));
    return 128 + StopSignal();
  }
  return report.fatal.ok() && report.rejected == 0 ? kExitOk : kExitError;
}

}  // namespace counterctl
