// sync --to HUB: ships the outbox of the --db database (the edge) to HUB
// exactly once (tally/sync.h, docs/sync.md). Both are opened for writing;
// the hub with Options::sync, so an acknowledged batch is on the hub's disk
// before the edge deletes it. Output: "synced E entries (A applied, D
// duplicates) in B batches; acked through S"; --progress adds one line per
// batch before it ("batch B acked_through=S").

#include <iostream>
#include <memory>
#include <optional>

#include "commands.h"
#include "json_output.h"
#include "progress.h"
#include "tally/outbox.h"
#include "tally/limits.h"
#include "tally/sync.h"

namespace counterctl {

int RunSync(const GlobalArgs& global, const SyncArgs& args) {
  std::optional<uint64_t> batch =
      ParseCountFlag("--batch", args.batch, 1, tally::kMaxBatchOps);
  if (!batch) return kExitUsage;
  std::unique_ptr<tally::Db> edge;
  tally::Status s = OpenDb(global, OpenMode::kWrite, &edge);
  if (!s.ok()) return Fail(s);
  tally::Options hub_options;
  hub_options.create_if_missing = false;
  hub_options.clock = ToolClock();  // non-null: the edge opened with it
  hub_options.sync = true;
  hub_options.rollup_interval_ms = 0;
  std::unique_ptr<tally::Db> hub;
  s = tally::Db::Open(hub_options, args.hub, &hub);
  if (!s.ok()) return Fail(s.WithContext("hub"));

  tally::SyncOptions options;
  options.batch_entries = *batch;
  options.shard_by_edge = !args.no_shard_by_edge;
  // The line on a terminal, in entries, of those pending now (entries
  // written while it runs are shipped too, past the total).
  Progress bar("sync", "entries", 0);
  if (bar.enabled()) {
    tally::Result<tally::OutboxStatus> pending = tally::GetOutboxStatus(*edge);
    if (pending.ok()) bar.SetTotal(pending->entries, false);
  }
  const bool lines = args.progress;
  options.on_batch = [&bar, lines](const tally::SyncReport& r) {
    bar.Update(r.entries);
    if (lines) {
      bar.Finish();
      std::cout << "batch " << r.batches << " acked_through=" << r.acked_through
                << std::endl;  // flushed: a watcher acts on each line
    }
  };
  tally::SyncReport report;
  s = tally::SyncOutbox(edge.get(), hub.get(), options, &report);
  bar.Finish();
  if (!s.ok()) return Fail(s);
  if (args.json) {
    PrintJson(Json{{"entries", report.entries},
                   {"applied", report.applied},
                   {"duplicates", report.duplicates},
                   {"batches", report.batches},
                   {"acked_through", report.acked_through}});
    return kExitOk;
  }
  std::cout << "synced " << report.entries << " entries (" << report.applied
            << " applied, " << report.duplicates << " duplicates) in "
            << report.batches << " batches; acked through "
            << report.acked_through << "\n";
  return kExitOk;
}

}  // namespace counterctl
