// Answers: the results of asynchronous calls (Db::IncrementAsync,
// Db::IncrementOnceAsync), in the order their callbacks ran, each under
// the tag of its call. Needs no gtest.
//
// Thread safety: the callbacks it makes and every method may run on any
// thread.
#ifndef TALLY_TESTS_TESTUTIL_ANSWERS_H_
#define TALLY_TESTS_TESTUTIL_ANSWERS_H_

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

#include "tally/db.h"

namespace tally::test {

class Answers {
 public:
  // A callback recording its answer under `tag`.
  IncrementCallback Make(int tag) {
    return [this, tag](const Result<IncrementResult>& r) {
      std::lock_guard<std::mutex> lock(mu_);
      order_.push_back(tag);
      results_.push_back(r);
      cv_.notify_all();
    };
  }
  size_t count() {
    std::lock_guard<std::mutex> lock(mu_);
    return results_.size();
  }
  // Returns once `n` answers are in.
  void Wait(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return results_.size() >= n; });
  }
  // The tags, in the order their callbacks ran.
  std::vector<int> order() {
    std::lock_guard<std::mutex> lock(mu_);
    return order_;
  }
  // The answer of the call tagged `tag` (the first, if several).
  Result<IncrementResult> Of(int tag) {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < order_.size(); ++i) {
      if (order_[i] == tag) return results_[i];
    }
    return Status::NotFound("no answer tagged " + std::to_string(tag));
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<int> order_;
  std::vector<Result<IncrementResult>> results_;
};

}  // namespace tally::test

#endif  // TALLY_TESTS_TESTUTIL_ANSWERS_H_
