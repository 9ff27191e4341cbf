// CounterCache: what `apply` knows about the counters its lines name.
//
// Db::Apply refuses a whole batch for one unknown counter, so every line is
// checked against the catalog before it joins a batch. One DescribeCounter
// per distinct name and run keeps that check off the hot path; a negative
// answer (NotFound) is cached too, so a million lines for a misspelt counter
// cost one lookup.
//
// Thread safety: none; each apply worker owns one. Nothing in this process
// deletes counters while apply runs, so entries never go stale.

#ifndef TALLY_TOOLS_COUNTERCTL_COUNTER_CACHE_H_
#define TALLY_TOOLS_COUNTERCTL_COUNTER_CACHE_H_

#include <string>
#include <unordered_map>

#include "tally/db.h"
#include "tally/status.h"
#include "tally/types.h"

namespace counterctl {

class CounterCache {
 public:
  explicit CounterCache(tally::Db* db) : db_(db) {}

  // The counter's description, or the engine's answer: NotFound for an
  // unknown counter, InvalidArgument for a name it refuses, anything else
  // for a failure of the database itself. The pointer stays valid for the
  // cache's lifetime.
  tally::Status Lookup(const std::string& name,
                       const tally::CounterInfo** info);

 private:
  struct Entry {
    tally::Status status;
    tally::CounterInfo info;
  };
  tally::Db* db_;  // not owned
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace counterctl

#endif  // TALLY_TOOLS_COUNTERCTL_COUNTER_CACHE_H_
