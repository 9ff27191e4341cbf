// PeriodicTask: a background thread that runs one function at a fixed
// interval (real time, not Options::clock) until stopped. The roll-up worker
// and the time-mark tick use it.
//
// Ownership: owns its thread; Stop() (or the destructor) joins it, after
// which the function is never called again. Thread safety: Start and Stop
// are called by the owner, not concurrently with each other.

#ifndef TALLY_ENGINE_PERIODIC_TASK_H_
#define TALLY_ENGINE_PERIODIC_TASK_H_

#include <chrono>
#include <functional>
#include <thread>

#include "util/mutex.h"

namespace tally::engine {

class PeriodicTask {
 public:
  PeriodicTask() = default;
  PeriodicTask(const PeriodicTask&) = delete;
  PeriodicTask& operator=(const PeriodicTask&) = delete;
  ~PeriodicTask() { Stop(); }

  // Calls f() every `interval`, the first time one interval from now.
  void Start(std::chrono::milliseconds interval, std::function<void()> f) {
    thread_ = std::thread([this, interval, f = std::move(f)] {
      mu_.Lock();
      for (;;) {
        const auto due = std::chrono::steady_clock::now() + interval;
        while (!stop_ && cv_.WaitUntil(&mu_, due)) {
        }
        if (stop_) break;
        mu_.Unlock();
        f();
        mu_.Lock();
      }
      mu_.Unlock();
    });
  }

  // Stops and joins the thread (waits for a running f() to return).
  void Stop() {
    if (!thread_.joinable()) return;
    {
      MutexLock lock(&mu_);
      stop_ = true;
    }
    cv_.NotifyAll();
    thread_.join();
  }

 private:
  std::thread thread_;
  Mutex mu_;
  CondVar cv_;
  bool stop_ TALLY_GUARDED_BY(mu_) = false;
};

}  // namespace tally::engine

#endif  // TALLY_ENGINE_PERIODIC_TASK_H_
