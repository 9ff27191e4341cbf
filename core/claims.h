// The rules of claims (Db::Claim, CompleteClaim, ReleaseClaim; docs/
// claims.md): a claim's stored record, and what one call makes of it.
//
// A claim is one record per key: the latest grant (fencing token, holder,
// lease) and, once completed, its end and result for good. A call reads
// the record (or finds none), reads the clock after that, and ClaimStep
// says the answer and the record to write back, if any. The token only
// grows: a grant writes the record's token plus one, and the record is
// never deleted (a released or expired claim keeps its token for the next
// grant). A backend makes the read, the step and the write one atomic
// unit per key (the engine: under the key's lock stripe).
//
// Thread safety: pure functions.

#ifndef TALLY_CORE_CLAIMS_H_
#define TALLY_CORE_CLAIMS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "tally/status.h"
#include "tally/types.h"

namespace tally::core {

// A claim as stored (docs/format.md, "claims").
struct ClaimRecord {
  uint8_t state = 0;  // tally::ClaimState, never kExpired
  uint64_t token = 0;
  std::string holder;
  int64_t granted_at_ms = 0;
  int64_t lease_until_ms = 0;
  int64_t ended_at_ms = 0;  // 0 while held
  std::string result;
};

enum class ClaimCall { kClaim, kComplete, kRelease };

// A call's arguments: Claim's holder and lease; CompleteClaim's and
// ReleaseClaim's token; CompleteClaim's result.
struct ClaimArgs {
  std::string_view holder;
  int64_t lease_ms = 0;
  uint64_t token = 0;
  std::string_view result;
};

// How messages name the claim at `key`: "claim 'key'".
std::string ClaimNaming(std::string_view key);

// The call's own arguments, before any lookup: the key, Claim's holder and
// lease, CompleteClaim's result, and a token (never 0) for the others.
Status CheckClaimCall(ClaimCall call, std::string_view key,
                      const ClaimArgs& args);

// What one call does to the record at `key`: `*rec` as stored when `found`
// (else ignored), `now` read after the lookup. NotFound when a complete or
// release finds no record; InvalidArgument for a token beyond the latest
// grant. Otherwise OK with the answer and `repeated` in *result, and
// *write true when *rec is the record to store.
Status ClaimStep(ClaimCall call, std::string_view key, const ClaimArgs& args,
                 bool found, int64_t now, ClaimRecord* rec,
                 ClaimResult* result, bool* write);

// The record as a caller sees it at `now` (a held claim whose lease ran
// out is kExpired).
ClaimInfo ClaimInfoOf(std::string_view key, const ClaimRecord& rec,
                      int64_t now);

// Db::ListClaims's options: the limit (1..kMaxListClaims), the filter, and
// a start_after no longer than a claim key; InvalidArgument naming the bad
// value otherwise.
Status CheckListClaims(const ListClaimsOptions& options);

// Whether `info` (as ClaimInfoOf sees it) passes ListClaims's `filter`.
bool ClaimListed(ClaimFilter filter, const ClaimInfo& info);

}  // namespace tally::core

#endif  // TALLY_CORE_CLAIMS_H_
