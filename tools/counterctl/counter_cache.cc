#include "counter_cache.h"

#include <utility>

namespace counterctl {

tally::Status CounterCache::Lookup(const std::string& name,
                                   const tally::CounterInfo** info) {
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    tally::Result<tally::CounterInfo> described = db_->DescribeCounter(name);
    Entry entry;
    entry.status = described.status();
    // Only answers about the counter are cached; a failing database (IO
    // error) must be reported, not remembered as "no such counter".
    if (!described.ok() && !described.status().IsNotFound() &&
        !described.status().IsInvalidArgument()) {
      return described.status();
    }
    if (described.ok()) entry.info = std::move(described).value();
    it = entries_.emplace(name, std::move(entry)).first;
  }
  *info = &it->second.info;
  return it->second.status;
}

}  // namespace counterctl
