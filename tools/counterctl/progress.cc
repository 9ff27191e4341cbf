#include "progress.h"

#include <unistd.h>

#include <cstdio>
#include <string>
#include <utility>

namespace counterctl {
namespace {
// The Progress currently drawn (counterctl is single-threaded where it
// draws one).
Progress* g_active = nullptr;
}  // namespace

void ClearProgressLine() {
  if (g_active != nullptr) g_active->Finish();
}

Progress::Progress(std::string label, uint64_t total, bool wanted)
    : enabled_(wanted && isatty(STDERR_FILENO) == 1),
      label_(std::move(label)),
      total_(total) {}

Progress::~Progress() { Finish(); }

void Progress::Update(uint64_t done) {
  done_ = done;
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  Draw();
}

void Progress::Draw() {
  std::string line = "\r" + label_ + " " + std::to_string(done_);
  if (total_ > 0) {
    constexpr uint64_t kWidth = 30;
    const uint64_t filled = done_ >= total_ ? kWidth : done_ * kWidth / total_;
    line += "/" + std::to_string(total_) + " [" + std::string(filled, '#') +
            std::string(kWidth - filled, ' ') + "]";
  }
  line += "\x1b[K";  // erase the rest of the line
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  drawn_ = true;
  g_active = this;
}

void Progress::Finish() {
  if (!enabled_ || !drawn_) return;
  std::fputs("\r\x1b[K", stderr);
  std::fflush(stderr);
  drawn_ = false;
  g_active = nullptr;
}

}  // namespace counterctl
