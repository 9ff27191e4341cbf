// SlotMap: one immutable snapshot of the cluster's hash-slot map (slot ->
// master and replicas), parsed from one CLUSTER SLOTS reply.
//
// ClusterClient keeps the current snapshot in a shared_ptr and swaps in a
// new one after each refresh: a Run copies the pointer (under a lock held
// for the copy only) and routes all its commands by that snapshot without
// further locking, while a refresh builds the next one beside it.
//
// Ownership: a snapshot owns its copies of the endpoints and ids. Thread
// safety: immutable after Parse; safe to read from any number of threads.

#ifndef TALLY_CLUSTER_CLIENT_SLOT_MAP_H_
#define TALLY_CLUSTER_CLIENT_SLOT_MAP_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cluster/client/cluster_client.h"
#include "tally/status.h"

namespace tally::cluster {

class SlotMap {
 public:
  // One master and the replicas CLUSTER SLOTS lists for its slots.
  struct Shard {
    Endpoint master;
    std::string master_id;
    std::vector<Endpoint> replicas;
    std::vector<std::string> replica_ids;          // parallel to `replicas`
    std::vector<std::pair<int, int>> slot_ranges;  // inclusive, ascending
  };

  // Parses a CLUSTER SLOTS reply that `answered_by` gave. A node listed
  // with an empty or nil host is `answered_by`'s host (Redis 7: "the same
  // endpoint as the node that answered"); one listed as "?" (unknown
  // endpoint) is left out, and so are the slots of a master left out.
  // IOError, naming `answered_by`, for a reply not shaped like CLUSTER
  // SLOTS' (a slot outside 0..16383, overlapping ranges, a bad port).
  static Status Parse(const Reply& reply, const Endpoint& answered_by,
                      std::shared_ptr<const SlotMap>* map);

  // The shard serving `slot`, or nullptr when no node serves it.
  // Precondition: 0 <= slot < kSlots.
  const Shard* ShardOf(int slot) const;

  // One per master, ordered by their first slot.
  const std::vector<Shard>& shards() const { return shards_; }

  // The masters (in shards() order) and then their replicas.
  std::vector<NodeInfo> Nodes() const;

  // How many slots some master serves (16384 in a healthy cluster).
  int served_slots() const { return served_slots_; }

 private:
  SlotMap();

  std::vector<Shard> shards_;
  std::array<int16_t, kSlots> shard_of_slot_;  // index into shards_; -1: none
  int served_slots_ = 0;
};

}  // namespace tally::cluster

#endif  // TALLY_CLUSTER_CLIENT_SLOT_MAP_H_
