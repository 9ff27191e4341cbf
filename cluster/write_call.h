// The write path's call state (cluster/redis_writes.cc plans and decides
// a call's ops, cluster/redis_commit.cc commits them): private to those
// two files.

#ifndef TALLY_CLUSTER_WRITE_CALL_H_
#define TALLY_CLUSTER_WRITE_CALL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/keys.h"
#include "cluster/records.h"
#include "core/holds.h"
#include "core/write_op.h"
#include "tally/status.h"
#include "tally/types.h"

namespace tally::cluster {

// One op of a call, as planned and decided.
struct PlannedOp {
  core::WriteOp op;
  size_t counter = 0;  // index into WriteCall::counters
  core::Decision d;
  Status status;             // what Decide answered
  size_t marker = SIZE_MAX;  // once-ops: index into WriteCall::markers
  size_t strict = SIZE_MAX;  // strict counters: index into WriteCall::strict
  size_t reset = SIZE_MAX;   // a sharded counter's reset: WriteCall::resets
  bool sent = false;         // its tally_write was sent
  bool committed = false;    // its function applied it: decided for good
};

// One call's ops, the counters they name and their distinct events.
struct WriteCall {
  bool batch = false;
  std::vector<CounterInfo> counters;
  std::vector<PlannedOp> ops;
  // An event of a counter (and key): where its marker is looked for.
  struct Marker {
    size_t counter = 0;
    std::string_view key;  // the caller's op's
    std::string name;      // in its tag (KeySpace::MarkerName)
    uint32_t home = 0;  // the event id's shard: every copy looks there first
    // The event goes to shard `at`, away from home: a forward at home says
    // so (found, or written by this call).
    bool forwarded = false;
    uint32_t at = 0;
    bool looked_up = false;
    bool stored = false;  // `info` is its stored marker
    MarkerInfo info;
  };
  std::vector<Marker> markers;
  // A strict counter's key (its one shard's value): the value the call's
  // ops are decided against, which tally_write checks is still the value
  // before it writes them (a guard), else answers TALLYSTALE.
  struct StrictKey {
    std::string value_key;
    std::string read;  // the value as read ("0" for none)
    int64_t value = 0;
    bool fresh = false;  // read for this round
    // A sliding quota's previous window (its use weighs in), read and
    // guarded with the value; empty: none.
    std::string previous_key;
    int64_t previous_bucket = 0;  // its bucket's start
    std::string previous_read;
    int64_t previous = 0;
    // A counter that takes reservations: the key's open holds, read with
    // the value and guarded with it (a Reserve in between makes the write
    // stale), whose units count against the minimum (docs/cluster.md,
    // "Reservations"). holds_key is empty for other counters.
    std::string holds_key;
    std::string holds_read;  // as read ("0" for none, as tally_write reads it)
    std::vector<core::HoldRecord> holds;
    uint64_t counter_id = 0;
  };
  std::vector<StrictKey> strict;
  // A sharded counter's key that a reset sets: the sum of its shards, and
  // its reset sequence (in shard 0's tag, where the cluster counts every
  // reset), which the reset's write guards and bumps, so that two resets
  // never both subtract the value they read.
  struct ResetKey {
    size_t counter = 0;
    std::string key;
    std::string seq_key;
    std::string seq;  // as read ("0" for none)
    int64_t value = 0;
    bool fresh = false;
  };
  std::vector<ResetKey> resets;
  bool gone = false;  // a tag answered TALLYGONE: a cached counter is stale

  bool AnyCommitted() const {
    for (const PlannedOp& p : ops) {
      if (p.committed) return true;
    }
    return false;
  }

  // The tag of marker `m` in `shard`.
  std::string TagOf(const KeySpace& keys, const Marker& m,
                    uint32_t shard) const {
    return keys.Tag(counters[m.counter], shard, m.key);
  }
};

// Whether a decided op is written: an applied op, and a strict counter's
// refused once-op (its marker keeps the refusal for its copies).
inline bool Writes(const CounterInfo& c, const core::WriteOp& op,
            const core::Decision& d) {
  return d.outcome == Outcome::kApplied ||
         (op.once && c.bounds.any() && d.outcome == Outcome::kRefused);
}

}  // namespace tally::cluster

#endif  // TALLY_CLUSTER_WRITE_CALL_H_
