// The rules of claims (core/claims.h).

#include "core/claims.h"

#include <cassert>

#include "core/deadline.h"
#include "core/validate.h"
#include "tally/limits.h"

namespace tally::core {
namespace {

constexpr auto kHeldState = static_cast<uint8_t>(ClaimState::kHeld);
constexpr auto kReleasedState = static_cast<uint8_t>(ClaimState::kReleased);
constexpr auto kDoneState = static_cast<uint8_t>(ClaimState::kDone);

// Claim: the holder acquires (new, renewed, or a new grant), or is told it
// is busy or done.
bool StepClaim(const ClaimArgs& args, bool found, int64_t now,
               ClaimRecord* rec, ClaimResult* r) {
  const bool running =
      found && rec->state == kHeldState && now < rec->lease_until_ms;
  if (found && rec->state == kDoneState) {
    r->answer = ClaimAnswer::kDone;
    return false;
  }
  if (running && rec->holder != args.holder) {
    r->answer = ClaimAnswer::kBusy;
    return false;
  }
  r->answer = ClaimAnswer::kAcquired;
  if (running) {
    // Its own holder again (a retried call, or a renewal): the same
    // token, the lease from now.
    r->repeated = true;
    rec->lease_until_ms = DeadlineAfter(now, args.lease_ms);
    return true;
  }
  // New, released, or its lease ran out: a new grant.
  rec->state = kHeldState;
  rec->token = found ? rec->token + 1 : 1;
  rec->holder = std::string(args.holder);
  rec->granted_at_ms = now;
  rec->lease_until_ms = DeadlineAfter(now, args.lease_ms);
  rec->ended_at_ms = 0;
  return true;
}

bool StepComplete(const ClaimArgs& args, int64_t now, ClaimRecord* rec,
                  ClaimResult* r) {
  if (args.token < rec->token || rec->state == kReleasedState) {
    r->answer = ClaimAnswer::kStaleToken;
    return false;
  }
  r->answer = ClaimAnswer::kCompleted;
  if (rec->state == kDoneState) {
    r->repeated = true;  // this token completed it
    return false;
  }
  // The current grant, held (its lease may have run out: nobody was
  // granted the key since, so no other holder can act on it).
  assert(rec->state == kHeldState);
  rec->state = kDoneState;
  rec->ended_at_ms = now;
  rec->result = std::string(args.result);
  return true;
}

bool StepRelease(const ClaimArgs& args, int64_t now, ClaimRecord* rec,
                 ClaimResult* r) {
  if (rec->state == kDoneState) {
    r->answer = ClaimAnswer::kDone;
    return false;
  }
  if (args.token < rec->token) {
    r->answer = ClaimAnswer::kStaleToken;
    return false;
  }
  r->answer = ClaimAnswer::kReleased;
  if (rec->state == kReleasedState) {
    r->repeated = true;
    return false;
  }
  rec->state = kReleasedState;
  rec->ended_at_ms = now;
  return true;
}

}  // namespace

std::string ClaimNaming(std::string_view key) { return "claim " + Quote(key); }

Status CheckClaimCall(ClaimCall call, std::string_view key,
                      const ClaimArgs& args) {
  Status s = ValidateClaimKey(key);
  if (s.ok() && call == ClaimCall::kClaim) {
    s = ValidateClaim(args.holder, args.lease_ms);
  }
  if (s.ok() && call == ClaimCall::kComplete) {
    s = ValidateClaimResult(args.result);
  }
  if (s.ok() && call != ClaimCall::kClaim && args.token == 0) {
    s = Status::InvalidArgument("token 0 of " + ClaimNaming(key) +
                                " was never granted: tokens start at 1");
  }
  return s;
}

Status ClaimStep(ClaimCall call, std::string_view key, const ClaimArgs& args,
                 bool found, int64_t now, ClaimRecord* rec,
                 ClaimResult* result, bool* write) {
  *write = false;
  if (call == ClaimCall::kClaim) {
    *write = StepClaim(args, found, now, rec, result);
    return Status::OK();
  }
  if (!found) return Status::NotFound(ClaimNaming(key) + " was never claimed");
  if (args.token > rec->token) {
    return Status::InvalidArgument(
        "token " + std::to_string(args.token) + " of " + ClaimNaming(key) +
        " was never granted (the latest grant is token " +
        std::to_string(rec->token) + ")");
  }
  *write = call == ClaimCall::kComplete
               ? StepComplete(args, now, rec, result)
               : StepRelease(args, now, rec, result);
  return Status::OK();
}

ClaimInfo ClaimInfoOf(std::string_view key, const ClaimRecord& rec,
                      int64_t now) {
  ClaimInfo info;
  info.key = std::string(key);
  info.state = static_cast<ClaimState>(rec.state);
  if (rec.state == kHeldState && now >= rec.lease_until_ms) {
    info.state = ClaimState::kExpired;
  }
  info.token = rec.token;
  info.holder = rec.holder;
  info.granted_at_ms = rec.granted_at_ms;
  info.lease_until_ms = rec.lease_until_ms;
  info.ended_at_ms = rec.ended_at_ms;
  info.result = rec.result;
  return info;
}

Status CheckListClaims(const ListClaimsOptions& options) {
  if (options.limit < 1 || options.limit > kMaxListClaims) {
    return Status::InvalidArgument(
        "claim list limit " + std::to_string(options.limit) +
        " is outside 1.." + std::to_string(kMaxListClaims) +
        " (kMaxListClaims)");
  }
  if (options.filter != ClaimFilter::kAll &&
      options.filter != ClaimFilter::kHeld &&
      options.filter != ClaimFilter::kDone) {
    return Status::InvalidArgument(
        "claim list filter " +
        std::to_string(static_cast<int>(options.filter)) +
        " is not kAll, kHeld or kDone");
  }
  return ValidateStartAfter(options.start_after, kMaxClaimKeyBytes,
                            "claim key");
}

bool ClaimListed(ClaimFilter filter, const ClaimInfo& info) {
  return !((filter == ClaimFilter::kHeld && info.state != ClaimState::kHeld) ||
           (filter == ClaimFilter::kDone && info.state != ClaimState::kDone));
}

}  // namespace tally::core
