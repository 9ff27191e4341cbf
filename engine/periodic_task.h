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
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

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
      std::unique_lock<std::mutex> lock(mu_);
      while (!cv_.wait_for(lock, interval, [this] { return stop_; })) {
        lock.unlock();
        f();
        lock.lock();
      }
    });
  }

  // Stops and joins the thread (waits for a running f() to return).
  void Stop() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
};

}  // namespace tally::engine

#endif  // TALLY_ENGINE_PERIODIC_TASK_H_
