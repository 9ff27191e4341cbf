// Out-of-line parts of the public value types: Status rendering, enum names
// and the system clock.

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "tally/admin.h"
#include "tally/options.h"
#include "tally/status.h"
#include "tally/types.h"

namespace tally {
namespace {

const char* CodeName(Status::Code code) {
  switch (code) {
    case Status::Code::kOk: return "OK";
    case Status::Code::kNotFound: return "NotFound";
    case Status::Code::kInvalidArgument: return "InvalidArgument";
    case Status::Code::kCorruption: return "Corruption";
    case Status::Code::kIOError: return "IOError";
    case Status::Code::kOutOfRange: return "OutOfRange";
    case Status::Code::kBusy: return "Busy";
    case Status::Code::kAlreadyExists: return "AlreadyExists";
    case Status::Code::kNotSupported: return "NotSupported";
  }
  return "Unknown";
}

class SystemClock final : public Clock {
 public:
  int64_t NowMillis() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace

namespace internal {
void DieReadingFailedResult(const Status& status) {
  std::fprintf(stderr, "tally: read the value of a failed Result: %s\n",
               status.ToString().c_str());
  std::fflush(stderr);
  std::abort();
}
}  // namespace internal

const std::string& Status::message() const {
  static const std::string kEmpty;
  return msg_ ? *msg_ : kEmpty;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(CodeName(code_)) + ": " + message();
}

const Clock* Clock::System() {
  static const SystemClock clock;
  return &clock;
}

Status Status::WithContext(std::string_view prefix) const {
  if (ok()) return Status();
  return Status(code_, std::string(prefix) + ": " + message());
}

const char* ShardPolicyName(ShardPolicy policy) {
  switch (policy) {
    case ShardPolicy::kRandom: return "random";
    case ShardPolicy::kAffinity: return "affinity";
  }
  return "unknown";
}

const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kApplied: return "applied";
    case Outcome::kDuplicate: return "duplicate";
    case Outcome::kConflict: return "conflict";
    case Outcome::kOutsideWindow: return "outside_window";
    case Outcome::kRefused: return "refused";
  }
  return "unknown";
}

const char* HoldStateName(HoldState state) {
  switch (state) {
    case HoldState::kHeld: return "held";
    case HoldState::kCommitted: return "committed";
    case HoldState::kReleased: return "released";
    case HoldState::kExpired: return "expired";
    case HoldState::kRefused: return "refused";
  }
  return "unknown";
}

const char* ClaimStateName(ClaimState state) {
  switch (state) {
    case ClaimState::kHeld: return "held";
    case ClaimState::kExpired: return "expired";
    case ClaimState::kReleased: return "released";
    case ClaimState::kDone: return "done";
  }
  return "unknown";
}

const char* ClaimAnswerName(ClaimAnswer answer) {
  switch (answer) {
    case ClaimAnswer::kAcquired: return "acquired";
    case ClaimAnswer::kBusy: return "busy";
    case ClaimAnswer::kDone: return "done";
    case ClaimAnswer::kCompleted: return "completed";
    case ClaimAnswer::kReleased: return "released";
    case ClaimAnswer::kStaleToken: return "stale_token";
  }
  return "unknown";
}

const char* StatsSourceName(StatsSource source) {
  switch (source) {
    case StatsSource::kThisProcess: return "this_process";
    case StatsSource::kWriter: return "writer";
    case StatsSource::kNone: return "none";
  }
  return "unknown";
}

const char* BucketWidthName(BucketWidth width) {
  switch (width) {
    case BucketWidth::kNone: return "none";
    case BucketWidth::kMinute: return "minute";
    case BucketWidth::kHour: return "hour";
    case BucketWidth::kDay: return "day";
  }
  return "unknown";
}

}  // namespace tally
