// PerfCountersOff: turns RocksDB's per-thread perf counters off for the
// duration of one tally call.
//
// RocksDB's perf_context and iostats_context count on every thread at its
// default level (kEnableCount): each Get, Write and memtable insert adds to
// a thread-local counter, and Debian's shared librocksdb reaches those
// thread-locals through __tls_get_addr (about 450 calls per IncrementOnce).
// tally reads none of them. At kDisable, each count is skipped after one
// check of the thread's level: 11% fewer instructions per Increment and 6%
// per IncrementOnce (docs/design.md, "The write path beyond RocksDB's
// defaults", has the figures).
//
// The caller's own setting wins: a thread that asked RocksDB for more than
// the default (kEnableTime..., to profile) or already for nothing keeps it;
// only the default is switched off, and it is restored when the guard goes
// out of scope, so nothing outlives the call.
//
// Thread-compatible: one guard belongs to the thread that made it.

#ifndef TALLY_ENGINE_PERF_COUNTERS_H_
#define TALLY_ENGINE_PERF_COUNTERS_H_

#include <rocksdb/perf_level.h>

namespace tally::engine {

class PerfCountersOff {
 public:
  PerfCountersOff()
      : restore_(rocksdb::GetPerfLevel() == rocksdb::kEnableCount) {
    if (restore_) rocksdb::SetPerfLevel(rocksdb::kDisable);
  }
  ~PerfCountersOff() {
    if (restore_) rocksdb::SetPerfLevel(rocksdb::kEnableCount);
  }
  PerfCountersOff(const PerfCountersOff&) = delete;
  PerfCountersOff& operator=(const PerfCountersOff&) = delete;

 private:
  const bool restore_;
};

}  // namespace tally::engine

#endif  // TALLY_ENGINE_PERF_COUNTERS_H_
