// A progress line on stderr for long subcommands, in the unit that moves
// (lines, records, bytes, families), with percent, rate and time left when
// the total is known:
//
//   apply: 24000/300000 lines 8% [##                      ] 12.0k lines/s, 23s left
//   export: 5100/~20000 records 25% [...] 4.1k records/s, 4s left   (estimate)
//   compact: 12.0 MiB/~40.0 MiB 30% [...] 8.0 MiB/s, 4s left        (bytes)
//   sync: 3000 entries 1.5k entries/s                               (no total)
//
// Drawn only when stderr is a terminal (isatty(2)) and the run was not
// given --quiet (SetProgressQuiet): scripts, pipes and the tests that
// capture stderr never see it. Redrawn at most every 100 ms with "\r";
// Finish() clears it so the result lines and any error start on a clean
// line. Not thread-safe: one thread updates it (a RocksDB callback thread
// included, as long as calls do not overlap).

#ifndef TALLY_TOOLS_COUNTERCTL_PROGRESS_H_
#define TALLY_TOOLS_COUNTERCTL_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <string>

#include "tally/admin.h"

namespace counterctl {

// --quiet: no progress line for the rest of the run.
void SetProgressQuiet(bool quiet);

// What one progress line says, apart from drawing it (tested alone).
struct ProgressState {
  std::string label;  // "apply"
  std::string unit;   // "lines", plural
  uint64_t done = 0;
  uint64_t total = 0;       // 0: unknown
  bool estimated = false;   // total is an estimate: "~", percent below 100
  double elapsed_s = 0;     // since the first update
};
// The line without "\r" and the erase sequence.
std::string ProgressText(const ProgressState& state);
// 950 -> "950", 12345 -> "12.3k", 4500000 -> "4.5M".
std::string ShortCount(double n);
// Bytes in binary units: 900 -> "900 B", 1536 -> "1.5 KiB".
std::string ShortBytes(double n);
// 42 -> "42s", 125 -> "2m05s", 7260 -> "2h01m".
std::string ShortDuration(double seconds);

// Whether a Progress made now would draw (a terminal, not --quiet).
bool ProgressWanted();

class Progress {
 public:
  // `total` 0: unknown (shows the count and rate only). `wanted` false:
  // never draw (export to stdout, where the line would mix with the data).
  Progress(std::string label, std::string unit, uint64_t total,
           bool wanted = true);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Whether it draws at all (stderr is a terminal, not --quiet, wanted).
  bool enabled() const { return enabled_; }
  // Sets the total; an estimate shows as "~N", its percent held below 100.
  void SetTotal(uint64_t total, bool estimated);
  // A callback for the library's long calls (Verify, Compact,
  // CreateBackup) that draws their reports here; `this` must outlive it.
  tally::ProgressFn Callback();
  // Sets how many units are done; redraws if due.
  void Update(uint64_t done);
  // Clears the line (idempotent; also run by the destructor).
  void Finish();

 private:
  void Draw();

  const bool enabled_;
  ProgressState state_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_ =
      std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_{};
};

// Clears the line of the Progress being drawn, if any; PrintError calls it
// so an error never lands at the end of a progress line.
void ClearProgressLine();

}  // namespace counterctl

#endif  // TALLY_TOOLS_COUNTERCTL_PROGRESS_H_
