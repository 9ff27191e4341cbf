// describe NAME: the counter's catalog entry and marker count as
// "key: value" lines, stable for scripts.

#include <iostream>
#include <memory>

#include "commands.h"
#include "tally/types.h"

namespace counterctl {

int RunDescribe(const GlobalArgs& global, const std::string& name) {
  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kRead, &db);
  if (!s.ok()) return Fail(s);
  tally::Result<tally::CounterInfo> info = db->DescribeCounter(name);
  if (!info.ok()) return Fail(info.status());
  tally::Result<uint64_t> markers = db->CountEvents(name);
  if (!markers.ok()) return Fail(markers.status());

  std::cout << "name: " << info->name << "\n"
            << "id: " << info->id << "\n"
            << "shards: " << info->shards << "\n"
            << "policy: " << tally::ShardPolicyName(info->policy) << "\n"
            << "schema_version: " << info->schema_version << "\n"
            << "created_at: " << FormatUtcMillis(info->created_at_ms) << "\n"
            << "flags: " << info->flags << "\n"
            << "markers: " << *markers << "\n";
  return kExitOk;
}

}  // namespace counterctl
