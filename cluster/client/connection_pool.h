// ConnectionPool: the idle connections of a ClusterClient, per node.
//
// Checkout hands a connection to one caller (an idle one that still looks
// usable, or a new one); GiveBack takes it back, unless it is broken (it
// may owe replies) or the node already has max_idle of them. So a
// connection is never used by two Runs at once, and a pipeline never
// starts on a connection that owes replies.
//
// Ownership: owns the idle connections; the caller owns a checked-out one
// until it gives it back. Thread safety: every method may be called from
// many threads at once (one lock, held for a vector push or pop only:
// connecting and the liveness poll happen outside it).

#ifndef TALLY_CLUSTER_CLIENT_CONNECTION_POOL_H_
#define TALLY_CLUSTER_CLIENT_CONNECTION_POOL_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "cluster/client/connection.h"
#include "tally/status.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace tally::cluster {

class ConnectionPool {
 public:
  ConnectionPool(const ConnectionOptions& options, int max_idle_per_node);
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  // An idle connection to `node` that passes Connection::Reusable (the
  // others are closed), or a new one (Connection::Open's errors).
  Status Checkout(const Endpoint& node, std::unique_ptr<Connection>* c)
      TALLY_EXCLUDES(mu_);
  // Keeps `c` for a later Checkout, or closes it (broken, or too many).
  void GiveBack(std::unique_ptr<Connection> c) TALLY_EXCLUDES(mu_);

  uint64_t opened() const { return opened_.load(std::memory_order_relaxed); }
  // Closed as broken, or found dead when checked out.
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

 private:
  const ConnectionOptions options_;
  const size_t max_idle_per_node_;
  Mutex mu_;
  std::unordered_map<std::string, std::vector<std::unique_ptr<Connection>>>
      idle_ TALLY_GUARDED_BY(mu_);  // by Connection::address()
  std::atomic<uint64_t> opened_{0};
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace tally::cluster

#endif  // TALLY_CLUSTER_CLIENT_CONNECTION_POOL_H_
