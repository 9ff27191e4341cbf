#include "interrupt.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cassert>
#include <filesystem>
#include <mutex>
#include <thread>

namespace counterctl {
namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};

// SIGINT and SIGTERM, the signals that ask for a stop.
sigset_t StopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

// The signal thread: every other thread has both signals blocked, so each
// one arrives here, in sigwait, whatever the other threads are doing. (A
// handler runs on whichever thread the kernel picks; under TSAN, which
// defers handlers to the thread's next intercepted call, a pick blocked in
// RocksDB's uninstrumented code never ran it, and `watch` did not stop.)
[[noreturn]] void WaitForStops() {
  const sigset_t set = StopSignals();
  bool seen_int = false;
  bool seen_term = false;
  for (;;) {
    int sig = 0;
    if (::sigwait(&set, &sig) != 0) continue;
    bool& seen = sig == SIGINT ? seen_int : seen_term;
    if (seen) {
      // The second of its kind: its default action, at once.
      ::signal(sig, SIG_DFL);
      sigset_t one;
      sigemptyset(&one);
      sigaddset(&one, sig);
      ::pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
      ::raise(sig);
      ::_exit(128 + sig);  // not reached: the default action ends the process
    }
    seen = true;
    g_signal.store(sig);
    g_stop.store(true);
  }
}

// Threads of this process now (Linux: /proc/self/task).
size_t ThreadCount() {
  std::error_code ec;
  size_t n = 0;
  for (std::filesystem::directory_iterator it("/proc/self/task", ec), end;
       !ec && it != end; it.increment(ec)) {
    ++n;
  }
  return n;
}

}  // namespace

void InstallStopHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Blocked here, before any other thread exists, so every thread started
    // later (RocksDB's included) inherits the mask.
    assert(ThreadCount() <= 1 && "InstallStopHandlers before any thread");
    (void)ThreadCount;
    const sigset_t set = StopSignals();
    ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
    std::thread(WaitForStops).detach();
  });
}

const std::atomic<bool>& StopRequested() { return g_stop; }

int StopSignal() { return g_signal.load(); }

const char* StopSignalName() {
  switch (g_signal.load()) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "a signal";
  }
}

}  // namespace counterctl
