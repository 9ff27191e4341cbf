// The claims family's records (docs/format.md, "claims"): one claim
// (Db::Claim) at its key.

#include "engine/family_record.h"
#include "engine/rules.h"
#include "tally/types.h"

namespace tally::engine {

std::string DecodeClaimsKey(std::string_view key, FamilyRecord* out) {
  out->kind = RecordKind::kClaim;
  Status s = ValidateClaimKey(key);
  if (!s.ok()) return "a claim key is a claim key's bytes: " + s.message();
  out->claim_key = std::string(key);
  return "";
}

std::string DecodeClaimsValue(std::string_view value, FamilyRecord* out) {
  Status s = schema::DecodeClaim(value, &out->claim);
  return s.ok() ? "" : s.ToString();
}

std::string RenderClaims(WriteKind write, const FamilyRecord& rec,
                         DumpOp* out) {
  if (write != WriteKind::kPut) return "unexpected write to a claim key";
  const schema::ClaimRecord& c = rec.claim;
  out->op = "claim";
  out->fields = {TextField("key", rec.claim_key, "claim_key"),
                 WordField("state",
                           ClaimStateName(static_cast<ClaimState>(c.state))),
                 UintField("token", c.token), TextField("holder", c.holder),
                 TimeField("granted_at", c.granted_at_ms),
                 TimeField("lease_until", c.lease_until_ms)};
  if (c.ended_at_ms != 0) {
    out->fields.push_back(TimeField("ended_at", c.ended_at_ms));
  }
  if (c.state == static_cast<uint8_t>(ClaimState::kDone)) {
    out->fields.push_back(TextField("result", c.result));
  }
  return "";
}

}  // namespace tally::engine
