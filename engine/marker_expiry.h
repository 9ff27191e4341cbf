// Expired markers of counters with a dedupe window (docs/design.md, "Dedupe
// windows"): the rule every reader applies, and the events column family's
// compaction filter that drops them.
//
// Thread safety: MarkerExpired is a pure function; the factory and its
// filters are called by RocksDB's background threads concurrently and only
// read the engine clock's durable mark.

#ifndef TALLY_ENGINE_MARKER_EXPIRY_H_
#define TALLY_ENGINE_MARKER_EXPIRY_H_

#include <rocksdb/compaction_filter.h>

#include <cstdint>
#include <memory>

#include "engine/engine_clock.h"

namespace tally::engine {

// True when a marker with this expiry (0: never) has expired at `now_ms`
// (strictly after expires_at). Readers treat an expired marker as gone
// before compaction drops it; the write path still answers a found one.
inline bool MarkerExpired(int64_t expires_at_ms, int64_t now_ms) {
  return expires_at_ms != 0 && expires_at_ms < now_ms;
}

// Filters for the events column family: each compaction reads the engine
// clock's durable mark once (EngineClock::Durable, never its now: a drop is
// irreversible, and only a durable time is sure to stay <= the engine's now
// after a crash and a backward clock step) and drops every marker expired
// at that time. A marker that fails to decode is kept (Verify reports it).
// The factory's name, as RocksDB records it in the OPTIONS file.
inline constexpr char kMarkerExpiryFactoryName[] =
    "tally.MarkerExpiryFilterFactory";

std::shared_ptr<rocksdb::CompactionFilterFactory> NewMarkerExpiryFilterFactory(
    std::shared_ptr<const EngineClock> clock);

}  // namespace tally::engine

#endif  // TALLY_ENGINE_MARKER_EXPIRY_H_
