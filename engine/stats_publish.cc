// Publishing a writer's engine figures for read-only processes: once at
// open, every Options::stats_publish_interval_ms from a background tick, and
// a last time, marked closed, at a clean close (engine/stats_file.h has the
// file, docs/format.md its format). The write path pays nothing: the tick
// reads counters the engine keeps anyway.

#include <chrono>

#include "engine/db_impl.h"
#include "engine/stats_file.h"

namespace tally::engine {

Status DbImpl::PublishStatsFile(bool closed) {
  Status s = CheckWritable();
  if (!s.ok()) return s;
  MutexLock lock(&publish_mu_);
  EngineStats figures = OwnStats();
  figures.origin.closed = closed;
  return WriteStatsFile(stats_env_, path_,
                        EncodeStatsFile(figures, ThisProcess()));
}

void DbImpl::StartPublishing() {
  opened_ms_ = clock_->NowMillis();
  const uint32_t interval = options_.stats_publish_interval_ms;
  if (interval == 0) {
    // An earlier writer's figures would pass for this one's: a reader then
    // says none are published. Best effort, as publishing is.
    RemoveStatsFile(stats_env_, path_).IgnoreError();
    return;
  }
  publishing_ = true;
  // A failed publish (a full disk) leaves the previous file, whose age
  // then grows: readers see how stale it is.
  PublishStatsFile(/*closed=*/false).IgnoreError();
  stats_task_.Start(std::chrono::milliseconds(interval), [this] {
    PublishStatsFile(/*closed=*/false).IgnoreError();
  });
}

void DbImpl::StopPublishing() {
  stats_task_.Stop();
  if (!publishing_) return;
  publishing_ = false;
  PublishStatsFile(/*closed=*/true).IgnoreError();
}

}  // namespace tally::engine
