// A Redis Cluster target as Db::Open takes it:
//   redis://[USER@]HOST:PORT[,HOST:PORT...][/NAMESPACE][?PARAMS]
// PARAMS: replicas=N, wait_ms=T, read_from=master|replicas.
// HOST:PORT are any nodes of the cluster (seeds); NAMESPACE names the
// database (its keys' prefix, default "default"); replicas/wait_ms ask
// every write to wait for N replicas (WAIT N T, docs/cluster.md,
// "Durability"); read_from=replicas sends reads of values, keys and
// markers to a replica of each slot (docs/cluster.md, "Reads": what that
// can miss). The password is never part of the target: it comes from
// the file named by TALLY_REDIS_PASSWORD_FILE, else from
// TALLY_REDIS_PASSWORD (docs/cluster.md, "Least privilege").
//
// Thread safety: plain values and pure functions.

#ifndef TALLY_CLUSTER_TARGET_H_
#define TALLY_CLUSTER_TARGET_H_

#include <string>
#include <string_view>
#include <vector>

#include "cluster/client/cluster_client.h"
#include "tally/status.h"

namespace tally::cluster {

// Bounds of the target's numbers: a replica count past the cluster's size
// only makes every WAIT time out; a wait past this would stall a writer
// longer than a failover takes (docs/cluster.md).
inline constexpr int kMaxWaitReplicas = 16;
inline constexpr int kMaxWaitMs = 10'000;
inline constexpr size_t kMaxSeeds = 64;

struct Target {
  std::string user;
  std::vector<Endpoint> seeds;
  std::string ns = "default";
  int wait_replicas = 0;
  int wait_ms = 100;
  bool read_from_replicas = false;
};

// InvalidArgument naming the bad part (never a password: a target holding
// "user:password@" is refused, naming where the password goes instead).
Status ParseTarget(std::string_view target, Target* out);

// The password for `user`: TALLY_REDIS_PASSWORD_FILE's contents (one line,
// its newline dropped), else TALLY_REDIS_PASSWORD, else empty. IOError
// naming the file when it cannot be read.
Status ReadPassword(std::string* password);

}  // namespace tally::cluster

#endif  // TALLY_CLUSTER_TARGET_H_
