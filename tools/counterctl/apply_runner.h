// ApplyLines: the engine side of `counterctl apply`. Lines are parsed,
// checked and committed in tally::Batch groups by up to 64 worker threads.
//
// Work split: the input is read in chunks of up to `batch_ops` lines (and
// at most kApplyChunkBytes, apply_input.h); each worker takes the next chunk
// from the source (one at a time, in line order), parses it, checks the
// lines (see CounterCache), and submits the good ones as one Db::Apply. A
// slow chunk never holds the others up. Exactly-once is the engine's job:
// copies of one event in different chunks, threads or runs come back as
// kDuplicate.
//
// Memory: a worker holds one chunk; the input is never held whole (the
// bound is in apply_input.h). A chunk finished while an earlier one is still
// in flight waits, with its rejections, for the earlier one, so rejections
// are reported in line order; a worker takes no chunk more than
// 2 x threads past the first unfinished one, so at most that many wait.
//
// If the engine still refuses a batch (a sum that would overflow, a rule the
// checks here do not know), nothing of it was written, so its operations are
// retried one at a time and only the refused lines are rejected.
//
// Stopping: once ApplyConfig::stop is set, no worker takes a new chunk and
// every chunk taken is finished. Chunks are taken in line order, so what is
// committed then is exactly the lines before the first chunk nobody took:
// ApplyReport::committed_through, from which a later run continues without
// counting a plain increment twice. A database failure stops the run the
// same way; the chunk it hit is not finished: if it failed while its
// operations went one at a time, the lines before the failed one are
// committed and committed_through ends there; otherwise it ends before the
// chunk (its Db::Apply may or may not have been written).

#ifndef TALLY_TOOLS_COUNTERCTL_APPLY_RUNNER_H_
#define TALLY_TOOLS_COUNTERCTL_APPLY_RUNNER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "apply_input.h"

#include "tally/db.h"
#include "tally/status.h"

namespace counterctl {

inline constexpr size_t kMaxApplyThreads = 64;

// A line that was not counted, and why.
struct Rejection {
  size_t line = 0;  // 1-based
  std::string reason;
};

struct ApplyConfig {
  size_t threads = 1;       // 1..kMaxApplyThreads
  size_t batch_ops = 1000;  // 1..tally::kMaxBatchOps
  // When set and true, stop after the chunks already taken.
  const std::atomic<bool>* stop = nullptr;
  // Called (serially) with the last line of the committed prefix each
  // time it grows.
  std::function<void(size_t)> on_committed;
  // Called (serially, in line order) with each rejected line, as the
  // committed prefix reaches it (after a database failure, the rejections
  // of chunks past the prefix at the end of the run).
  std::function<void(const Rejection&)> on_rejected;
};

struct ApplyReport {
  uint64_t lines = 0;  // non-blank lines read
  uint64_t applied = 0;
  uint64_t duplicates = 0;
  uint64_t conflicts = 0;
  uint64_t outside_window = 0;  // once-events older than their window
  uint64_t rejected = 0;
  // Not OK when the database failed (IOError, Corruption, ...): the run
  // stopped early and the figures cover only what was done before.
  tally::Status fatal;
  std::string fatal_lines;  // "lines 1001..2000": what was in flight
  // Every line up to this one (an input line number; the line before the
  // first one read when none) is committed or rejected, and no line after
  // it was written, except committed_after.
  size_t committed_through = 0;
  // Only after a database failure with several threads: whole chunks past
  // committed_through that other workers had committed (first, last line),
  // in line order. Their figures are in the counts.
  std::vector<std::pair<size_t, size_t>> committed_after;
  bool stopped = false;  // ApplyConfig::stop ended the run before the end
};

// Adds `from`'s outcome counts to `to` (nothing else).
void AddCounts(const ApplyReport& from, ApplyReport* to);

// Applies the lines of `source`, from where it stands to its end, to `db`.
ApplyReport ApplyLines(tally::Db* db, ApplySource* source,
                       const ApplyConfig& config);

}  // namespace counterctl

#endif  // TALLY_TOOLS_COUNTERCTL_APPLY_RUNNER_H_
