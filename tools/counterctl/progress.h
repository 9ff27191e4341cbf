// A progress line on stderr for long subcommands, drawn only when stderr is
// a terminal (isatty(2)): scripts, pipes and the tests that capture stderr
// never see it. Redrawn at most every 100 ms with "\r"; Finish() clears it
// so the result lines and any error start on a clean line.

#ifndef TALLY_TOOLS_COUNTERCTL_PROGRESS_H_
#define TALLY_TOOLS_COUNTERCTL_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <string>

namespace counterctl {

class Progress {
 public:
  // `total` 0: unknown (shows only the count). `wanted` false: never draw
  // (export to stdout, where the line would mix with the data).
  Progress(std::string label, uint64_t total, bool wanted = true);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Whether it draws at all (stderr is a terminal and it was wanted).
  bool enabled() const { return enabled_; }
  // Sets how many units are done; redraws if due.
  void Update(uint64_t done);
  // Clears the line (idempotent; also run by the destructor).
  void Finish();

 private:
  void Draw();

  const bool enabled_;
  const std::string label_;
  const uint64_t total_;
  uint64_t done_ = 0;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_{};
};

// Clears the line of the Progress being drawn, if any; PrintError calls it
// so an error never lands at the end of a progress line.
void ClearProgressLine();

}  // namespace counterctl

#endif  // TALLY_TOOLS_COUNTERCTL_PROGRESS_H_
