#include "progress.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

namespace counterctl {
namespace {
// The Progress currently drawn (counterctl is single-threaded where it
// draws one).
Progress* g_active = nullptr;
bool g_quiet = false;

std::string OneDecimal(double v, const char* suffix) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f%s", v, suffix);
  return buf;
}
}  // namespace

void SetProgressQuiet(bool quiet) { g_quiet = quiet; }

void ClearProgressLine() {
  if (g_active != nullptr) g_active->Finish();
}

std::string ShortCount(double n) {
  if (n < 1000) return std::to_string(static_cast<uint64_t>(n));
  if (n < 1e6) return OneDecimal(n / 1e3, "k");
  if (n < 1e9) return OneDecimal(n / 1e6, "M");
  return OneDecimal(n / 1e9, "G");
}

std::string ShortBytes(double n) {
  if (n < 1024) return std::to_string(static_cast<uint64_t>(n)) + " B";
  if (n < 1024.0 * 1024) return OneDecimal(n / 1024, " KiB");
  if (n < 1024.0 * 1024 * 1024) return OneDecimal(n / 1024 / 1024, " MiB");
  return OneDecimal(n / 1024 / 1024 / 1024, " GiB");
}

std::string ShortDuration(double seconds) {
  const uint64_t s = static_cast<uint64_t>(std::ceil(seconds));
  char buf[32];
  if (s < 60) {
    std::snprintf(buf, sizeof(buf), "%llus", static_cast<unsigned long long>(s));
  } else if (s < 3600) {
    std::snprintf(buf, sizeof(buf), "%llum%02llus",
                  static_cast<unsigned long long>(s / 60),
                  static_cast<unsigned long long>(s % 60));
  } else {
    std::snprintf(buf, sizeof(buf), "%lluh%02llum",
                  static_cast<unsigned long long>(s / 3600),
                  static_cast<unsigned long long>(s / 60 % 60));
  }
  return buf;
}

std::string ProgressText(const ProgressState& p) {
  // Bytes read as sizes ("12.0 MiB"); other units as counts with the unit.
  const bool bytes = p.unit == "bytes";
  auto amount = [bytes](uint64_t n) {
    return bytes ? ShortBytes(static_cast<double>(n)) : std::to_string(n);
  };
  std::string line = p.label + ": " + amount(p.done);
  const bool known = p.total > 0;
  if (known) line += "/" + std::string(p.estimated ? "~" : "") + amount(p.total);
  if (!bytes) line += " " + p.unit;
  if (known) {
    uint64_t percent = p.done >= p.total ? 100 : p.done * 100 / p.total;
    // An estimate may be short: never claim 100 before the end.
    if (p.estimated && percent > 99) percent = 99;
    constexpr uint64_t kWidth = 24;
    const uint64_t filled = percent * kWidth / 100;
    line += " " + std::to_string(percent) + "% [" + std::string(filled, '#') +
            std::string(kWidth - filled, ' ') + "]";
  }
  // A rate needs some time behind it; before that, none is shown.
  if (p.elapsed_s >= 0.5 && p.done > 0) {
    const double rate = static_cast<double>(p.done) / p.elapsed_s;
    line += " " + (bytes ? ShortBytes(rate) : ShortCount(rate) + " " + p.unit) +
            "/s";
    if (known && p.done < p.total) {
      line += ", " +
              ShortDuration(static_cast<double>(p.total - p.done) / rate) +
              " left";
    }
  }
  return line;
}

bool ProgressWanted() { return !g_quiet && isatty(STDERR_FILENO) == 1; }

Progress::Progress(std::string label, std::string unit, uint64_t total,
                   bool wanted)
    : enabled_(wanted && ProgressWanted()) {
  state_.label = std::move(label);
  state_.unit = std::move(unit);
  state_.total = total;
}

Progress::~Progress() { Finish(); }

void Progress::SetTotal(uint64_t total, bool estimated) {
  state_.total = total;
  state_.estimated = estimated;
}

tally::ProgressFn Progress::Callback() {
  if (!enabled_) return nullptr;
  return [this](const tally::ProgressReport& r) {
    SetTotal(r.total, r.estimated);
    Update(r.done);
  };
}

void Progress::Update(uint64_t done) {
  state_.done = done;
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  state_.elapsed_s = std::chrono::duration<double>(now - start_).count();
  Draw();
}

void Progress::Draw() {
  const std::string line = "\r" + ProgressText(state_) + "\x1b[K";
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
