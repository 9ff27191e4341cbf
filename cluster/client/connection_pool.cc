#include "cluster/client/connection_pool.h"

#include <cassert>
#include <utility>

namespace tally::cluster {

ConnectionPool::ConnectionPool(const ConnectionOptions& options,
                               int max_idle_per_node)
    : options_(options),
      max_idle_per_node_(static_cast<size_t>(max_idle_per_node)) {
  assert(max_idle_per_node >= 0);
}

Status ConnectionPool::Checkout(const Endpoint& node,
                                std::unique_ptr<Connection>* c) {
  assert(c != nullptr);
  const std::string address = AddressOf(node);
  for (;;) {
    std::unique_ptr<Connection> candidate;
    {
      MutexLock lock(&mu_);
      auto it = idle_.find(address);
      if (it == idle_.end() || it->second.empty()) break;
      candidate = std::move(it->second.back());
      it->second.pop_back();
    }
    if (candidate->Reusable()) {
      *c = std::move(candidate);
      return Status::OK();
    }
    dropped_.fetch_add(1, std::memory_order_relaxed);  // closed while idle
  }
  Status s = Connection::Open(node, options_, c);
  if (s.ok()) opened_.fetch_add(1, std::memory_order_relaxed);
  return s;
}

void ConnectionPool::GiveBack(std::unique_ptr<Connection> c) {
  assert(c != nullptr);
  if (c->broken()) {
    // Replies may still be owed on it: closed, never reused.
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  assert(c->buffered_bytes() == 0);
  MutexLock lock(&mu_);
  std::vector<std::unique_ptr<Connection>>& idle = idle_[c->address()];
  if (idle.size() < max_idle_per_node_) idle.push_back(std::move(c));
}

}  // namespace tally::cluster
