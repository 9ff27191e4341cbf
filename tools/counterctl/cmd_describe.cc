// describe NAME [--json]: the counter's catalog entry, marker count and
// pending merge operands as "key: value" lines, stable for scripts: lines
// are only ever added at the end.

#include <iostream>
#include <memory>

#include "commands.h"
#include "json_output.h"
#include "tally/admin.h"
#include "tally/types.h"

namespace counterctl {

int RunDescribe(const GlobalArgs& global, const ReadArgs& args) {
  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kRead, &db,
                           tally::kReadValues | tally::kReadMarkers);
  if (!s.ok()) return Fail(s);
  tally::Result<tally::CounterInfo> info = db->DescribeCounter(args.name);
  if (!info.ok()) return Fail(info.status());
  tally::Result<uint64_t> markers = db->CountMarkers(args.name);
  if (!markers.ok()) return Fail(markers.status());
  tally::Result<uint64_t> pending = tally::PendingOperands(*db, args.name);
  if (!pending.ok()) return Fail(pending.status());

  if (args.json) {
    Json doc = CounterJson(*info);
    doc["markers"] = *markers;
    doc["pending_operands"] = *pending;
    PrintJson(doc);
    return kExitOk;
  }
  std::cout << "name: " << info->name << "\n"
            << "id: " << info->id << "\n"
            << "shards: " << info->shards << "\n"
            << "policy: " << tally::ShardPolicyName(info->policy) << "\n"
            << "schema_version: " << info->schema_version << "\n"
            << "created_at: " << FormatUtcMillis(info->created_at_ms) << "\n"
            << "flags: " << DescribeFlags(info->flags) << "\n"
            << "markers: " << *markers << "\n"
            << "pending_operands: " << *pending << "\n"
            << "dedupe_window_ms: " << info->dedupe_window_ms << "\n"
            << "bucket: " << tally::BucketWidthName(info->bucket) << "\n"
            << "retention_ms: " << info->retention_ms << "\n"
            << "keyed: " << (info->keyed ? "true" : "false") << "\n"
            << "min: "
            << (info->bounds.has_min ? std::to_string(info->bounds.min)
                                     : std::string("none"))
            << "\n"
            << "max: "
            << (info->bounds.has_max ? std::to_string(info->bounds.max)
                                     : std::string("none"))
            << "\n"
            << "sliding: " << (info->sliding ? "true" : "false") << "\n";
  return kExitOk;
}

}  // namespace counterctl
