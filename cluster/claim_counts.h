// A claim's counts on the cluster (docs/cluster.md, "Claims"): the record
// and the counters live in different slots, so CompleteClaim applies its
// counts batch in a step of its own, as once-ops whose event ids are
// derived from the claim, its token and its completion attempt, so that
// a retry of that step counts each op once.
//
// Thread safety: pure functions.

#ifndef TALLY_CLUSTER_CLAIM_COUNTS_H_
#define TALLY_CLUSTER_CLAIM_COUNTS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/records.h"
#include "core/write_op.h"
#include "tally/batch.h"

namespace tally::cluster {

// The event id of op `op` of the counts of claim `key`'s grant `token`,
// attempt `attempt`: "claim:KEY#TOKEN.ATTEMPT.OP", or, where that would
// pass kMaxEventIdBytes, "claim~H#TOKEN.ATTEMPT.OP" with H 32 hex digits
// of two stable hashes of the key. (The part after the last '#' holds no
// '#', so distinct claims, grants, attempts and ops never share an id.)
std::string DerivedEventId(std::string_view key, uint64_t token,
                           uint64_t attempt, size_t op);

// The ops `counts` applies for completing record `c` of claim `key`: a
// once-op keeps its event id; a plain op becomes a once-op under its
// derived id, with the completion's time (c.rec.ended_at_ms) as its event
// time unless it carries one. `ops` views `ids` and `counts`: both must
// outlive it (moving the struct keeps them in place).
struct DerivedCounts {
  std::vector<std::string> ids;
  std::vector<core::WriteOp> ops;
};
DerivedCounts DeriveCounts(std::string_view key, const StoredClaim& c,
                           const Batch& counts);

// A stable digest of every field of every op of `counts`, in order: a
// completion's retry must carry the batch it was marked with.
uint64_t CountsDigest(const Batch& counts);

}  // namespace tally::cluster

#endif  // TALLY_CLUSTER_CLAIM_COUNTS_H_
