// How the client reads Redis Cluster's error replies: which ones redirect
// (MOVED, ASK), which ones may succeed if the same command is sent again
// later (TRYAGAIN, CLUSTERDOWN, ...), and the node a redirection names.
//
// Thread safety: pure functions.

#ifndef TALLY_CLUSTER_CLIENT_REDIRECT_H_
#define TALLY_CLUSTER_CLIENT_REDIRECT_H_

#include <string>

#include "cluster/client/cluster_client.h"

namespace tally::cluster {

enum class ErrorClass {
  kMoved,  // MOVED <slot> <host>:<port>: the slot has a new owner
  kAsk,    // ASK <slot> <host>:<port>: this key is mid-migration
  // Nothing ran; the same command may succeed later on the same node:
  // TRYAGAIN (a multi-key command while its slot migrates), LOADING (the
  // node is loading its data).
  kRetry,
  // Nothing ran; the map may be wrong: CLUSTERDOWN (slots unserved, e.g.
  // during a failover), MASTERDOWN (a replica lost its master), READONLY
  // (a write reached a replica: a failover demoted the node the map named).
  kRetryAfterRefresh,
  kFinal,  // anything else: the command's answer
};

// By the error's first word.
ErrorClass ClassifyError(const std::string& error);

// The node a MOVED or ASK error names. An empty host (":6380") is the host
// of the node that answered, `from`. False when the text is not
// "<WORD> <slot> <host>:<port>".
bool ParseRedirect(const std::string& error, const Endpoint& from,
                   Endpoint* target);

}  // namespace tally::cluster

#endif  // TALLY_CLUSTER_CLIENT_REDIRECT_H_
