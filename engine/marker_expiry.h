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

#include "core/decide.h"
#include "engine/engine_clock.h"

namespace tally::engine {

// core::MarkerExpired (core/decide.h) says when a marker has expired.
using core::MarkerExpired;

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
