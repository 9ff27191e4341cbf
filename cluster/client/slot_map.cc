#include "cluster/client/slot_map.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <utility>

#include "cluster/client/connection.h"

namespace tally::cluster {
namespace {

// One node of a CLUSTER SLOTS entry: [host, port, id, metadata...].
struct NodeEntry {
  Endpoint endpoint;
  std::string id;
  bool known = true;  // false: "?" or port 0, an endpoint no one can reach
};

// One entry: [start, end, master, replica...].
struct RangeEntry {
  int start = 0;
  int end = 0;
  NodeEntry master;
  std::vector<NodeEntry> replicas;
};

bool ParseNode(const Reply& r, const Endpoint& answered_by, NodeEntry* node,
               std::string* why) {
  if (r.kind != Reply::Kind::kArray || r.elements.size() < 2) {
    *why = "a node is not an array of host, port, id";
    return false;
  }
  const Reply& host = r.elements[0];
  const Reply& port = r.elements[1];
  if (host.kind == Reply::Kind::kNil ||
      (host.kind == Reply::Kind::kString && host.str.empty())) {
    node->endpoint.host = answered_by.host;
  } else if (host.kind == Reply::Kind::kString) {
    node->endpoint.host = host.str;
    if (host.str == "?") node->known = false;
  } else {
    *why = "a node's host is not a string";
    return false;
  }
  if (port.kind != Reply::Kind::kInteger || port.integer < 0 ||
      port.integer > 65535) {
    *why = "a node's port is not an integer in 0..65535";
    return false;
  }
  node->endpoint.port = static_cast<int>(port.integer);
  if (node->endpoint.port == 0) node->known = false;
  if (r.elements.size() >= 3 && r.elements[2].kind == Reply::Kind::kString) {
    node->id = r.elements[2].str;
  }
  return true;
}

bool ParseRange(const Reply& r, const Endpoint& answered_by, RangeEntry* range,
                std::string* why) {
  if (r.kind != Reply::Kind::kArray || r.elements.size() < 3 ||
      r.elements[0].kind != Reply::Kind::kInteger ||
      r.elements[1].kind != Reply::Kind::kInteger) {
    *why = "an entry is not [start, end, master, replicas...]";
    return false;
  }
  const int64_t start = r.elements[0].integer;
  const int64_t end = r.elements[1].integer;
  if (start < 0 || end >= kSlots || start > end) {
    *why = "slot range " + std::to_string(start) + "-" + std::to_string(end) +
           " is not within 0.." + std::to_string(kSlots - 1);
    return false;
  }
  range->start = static_cast<int>(start);
  range->end = static_cast<int>(end);
  if (!ParseNode(r.elements[2], answered_by, &range->master, why)) {
    return false;
  }
  for (size_t i = 3; i < r.elements.size(); ++i) {
    NodeEntry replica;
    if (!ParseNode(r.elements[i], answered_by, &replica, why)) return false;
    if (replica.known) range->replicas.push_back(std::move(replica));
  }
  return true;
}

}  // namespace

SlotMap::SlotMap() { shard_of_slot_.fill(-1); }

Status SlotMap::Parse(const Reply& reply, const Endpoint& answered_by,
                      std::shared_ptr<const SlotMap>* map) {
  assert(map != nullptr);
  auto malformed = [&](const std::string& why) {
    return Status::IOError("malformed CLUSTER SLOTS reply from " +
                           AddressOf(answered_by) + ": " + why);
  };
  if (reply.kind != Reply::Kind::kArray) return malformed("not an array");

  std::vector<RangeEntry> ranges;
  ranges.reserve(reply.elements.size());
  for (const Reply& element : reply.elements) {
    RangeEntry range;
    std::string why;
    if (!ParseRange(element, answered_by, &range, &why)) return malformed(why);
    if (range.master.known) ranges.push_back(std::move(range));
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const RangeEntry& a, const RangeEntry& b) {
              return a.start < b.start;
            });

  std::shared_ptr<SlotMap> m(new SlotMap());
  std::map<std::string, size_t> shard_of_master;  // address -> shards_ index
  for (const RangeEntry& range : ranges) {
    const std::string address = AddressOf(range.master.endpoint);
    auto [it, added] = shard_of_master.emplace(address, m->shards_.size());
    if (added) {
      Shard shard;
      shard.master = range.master.endpoint;
      shard.master_id = range.master.id;
      m->shards_.push_back(std::move(shard));
    }
    Shard& shard = m->shards_[it->second];
    // A master with several ranges lists its replicas with each; keep one
    // copy of each.
    for (const NodeEntry& replica : range.replicas) {
      const std::string replica_address = AddressOf(replica.endpoint);
      bool seen = false;
      for (const Endpoint& e : shard.replicas) {
        seen = seen || AddressOf(e) == replica_address;
      }
      if (!seen) {
        shard.replicas.push_back(replica.endpoint);
        shard.replica_ids.push_back(replica.id);
      }
    }
    if (!shard.slot_ranges.empty() &&
        shard.slot_ranges.back().second + 1 == range.start) {
      shard.slot_ranges.back().second = range.end;  // adjacent: merge
    } else {
      shard.slot_ranges.emplace_back(range.start, range.end);
    }
    for (int slot = range.start; slot <= range.end; ++slot) {
      if (m->shard_of_slot_[slot] != -1) {
        return malformed("slot " + std::to_string(slot) + " is in two ranges");
      }
      m->shard_of_slot_[slot] = static_cast<int16_t>(it->second);
    }
    m->served_slots_ += range.end - range.start + 1;
  }
  assert(m->served_slots_ <= kSlots);
  *map = std::move(m);
  return Status::OK();
}

const SlotMap::Shard* SlotMap::ShardOf(int slot) const {
  assert(slot >= 0 && slot < kSlots);
  const int index = shard_of_slot_[slot];
  if (index < 0) return nullptr;
  assert(static_cast<size_t>(index) < shards_.size());
  return &shards_[index];
}

std::vector<NodeInfo> SlotMap::Nodes() const {
  std::vector<NodeInfo> nodes;
  for (const Shard& shard : shards_) {
    NodeInfo info;
    info.endpoint = shard.master;
    info.id = shard.master_id;
    info.master = true;
    info.slot_ranges = shard.slot_ranges;
    nodes.push_back(std::move(info));
  }
  for (const Shard& shard : shards_) {
    for (size_t i = 0; i < shard.replicas.size(); ++i) {
      NodeInfo info;
      info.endpoint = shard.replicas[i];
      info.id = shard.replica_ids[i];
      info.master = false;
      info.master_id = shard.master_id;
      nodes.push_back(std::move(info));
    }
  }
  return nodes;
}

}  // namespace tally::cluster
