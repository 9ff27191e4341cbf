// Verify's report of what it found (tally::VerifyReport), kept the same
// way by every backend: at most kMaxVerifyProblems lines, the rest
// counted.
//
// Thread safety: a Findings is used by one verifying thread.

#ifndef TALLY_CORE_FINDINGS_H_
#define TALLY_CORE_FINDINGS_H_

#include <string>
#include <utility>

#include "tally/admin.h"
#include "tally/limits.h"

namespace tally::core {

class Findings {
 public:
  explicit Findings(VerifyReport* report) : report_(report) {}
  void Add(std::string problem) {
    if (report_->problems.size() < kMaxVerifyProblems) {
      report_->problems.push_back(std::move(problem));
    } else {
      ++report_->problems_dropped;
    }
  }

 private:
  VerifyReport* report_;
};

}  // namespace tally::core

#endif  // TALLY_CORE_FINDINGS_H_
