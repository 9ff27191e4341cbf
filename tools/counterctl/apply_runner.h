// ApplyLines: the engine side of `counterctl apply`. Lines are parsed,
// checked and committed in tally::Batch groups by up to 64 worker threads.
//
// Work split: the lines are cut into contiguous chunks of `batch_ops` lines;
// workers take the next chunk from an atomic index, so a slow chunk never
// holds the others up. Each worker parses its chunk, checks the lines (see
// CounterCache), and submits the good ones as one Db::Apply. Exactly-once is
// the engine's job: copies of one event in different chunks, threads or runs
// come back as kDuplicate.
//
// If the engine still refuses a batch (a sum that would overflow, a rule the
// checks here do not know), nothing of it was written, so its operations are
// retried one at a time and only the refused lines are rejected.
//
// Stopping: once ApplyConfig::stop is set, no worker takes a new chunk and
// every chunk taken is finished. Chunks are taken in line order, so what is
// committed then is exactly the lines before the first chunk nobody took:
// ApplyReport::committed_through, from which a later run continues without
// counting a plain increment twice.

#ifndef TALLY_TOOLS_COUNTERCTL_APPLY_RUNNER_H_
#define TALLY_TOOLS_COUNTERCTL_APPLY_RUNNER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tally/db.h"
#include "tally/status.h"

namespace counterctl {

inline constexpr size_t kMaxApplyThreads = 64;

struct ApplyConfig {
  size_t threads = 1;       // 1..kMaxApplyThreads
  size_t batch_ops = 1000;  // 1..tally::kMaxBatchOps
  size_t first_line = 1;    // the input line number of lines[0]
  // When set and true, stop after the chunks already taken.
  const std::atomic<bool>* stop = nullptr;
  // Called (serially) with the last line of the committed prefix each
  // time it grows.
  std::function<void(size_t)> on_committed;
};

// A line that was not counted, and why.
struct Rejection {
  size_t line = 0;  // 1-based
  std::string reason;
};

struct ApplyReport {
  uint64_t lines = 0;  // non-blank lines read
  uint64_t applied = 0;
  uint64_t duplicates = 0;
  uint64_t conflicts = 0;
  uint64_t outside_window = 0;  // once-events older than their window
  uint64_t rejected = 0;
  std::vector<Rejection> rejections;  // ordered by line
  // Not OK when the database failed (IOError, Corruption, ...): the run
  // stopped early and the figures cover only what was done before.
  tally::Status fatal;
  std::string fatal_lines;  // "lines 1001..2000": what was in flight
  // Every line up to this one (an input line number; first_line - 1 when
  // none) is committed or rejected, and no line after it was written.
  size_t committed_through = 0;
  bool stopped = false;  // ApplyConfig::stop ended the run before the end
};

// Adds `from`'s outcome counts and rejections to `to` (nothing else).
void AddCounts(const ApplyReport& from, ApplyReport* to);

// Applies `lines` (lines[i] is line config.first_line + i of the input) to
// `db`.
ApplyReport ApplyLines(tally::Db* db,
                       const std::vector<std::string_view>& lines,
                       const ApplyConfig& config);

}  // namespace counterctl

#endif  // TALLY_TOOLS_COUNTERCTL_APPLY_RUNNER_H_
