// The driver half of the crash test: runs tally_crash_writer, SIGKILLs it at
// a random moment of real progress, reopens the database and checks every
// invariant; repeats for a number of cycles on the same database.
//
// Invariants checked after every kill:
//   - every marker decodes and agrees with its key (read with raw RocksDB);
//   - tally::Verify is clean;
//   - each once-counter's exact value equals its markers' delta sum (read
//     independently of the engine's Verify);
//   - every once-increment the writer logged as acknowledged has its marker,
//     with the logged delta (nothing acknowledged is lost);
//   - the plain counter holds at least every acknowledged plain delta and at
//     most that plus what the killed calls could have carried (nothing is
//     counted twice);
//   - each counter's roll-up lies between 0 and its exact value (deltas are
//     positive), and equals it after a RollupNow;
//   - keyed counters (issue 15): every key of the once-only keyed counter
//     equals its markers' delta sum (ListKeys and ReadKeys both), every key
//     of the plain keyed counter holds at least its acknowledged deltas and
//     all its keys together at most what the killed calls could add; their
//     roll-ups (total, top 10) lie between 0 and exact and equal a scan
//     after a RollupNow;
//   - a batch across keys the kill caught in flight (its intent logged, its
//     result not) is all or nothing: every once-increment of it has its
//     marker (and then its plain deltas count as acknowledged) or none has;
//   - redelivering once-increments acknowledged in the cycle (named and
//     keyed) returns kDuplicate and changes nothing;
//   - the strict counter (issue 16): every key's value is >= 0 and equals
//     its markers' delta sum (accepted takes are exactly the stock
//     consumed); every acknowledged strict once-increment asked again gets
//     its first answer (refusals included, with the same value); a take
//     batched with its order and refused left no marker in either.
//   - reservations: every acknowledged Reserve, commit and release asked
//     again (the same call) gets its answer; values, holds (check 13);
//   - resets (issue 28, item 13): each "gauge" key holds exactly what its
//     acknowledged calls give, a reset took exactly what the key held to
//     its value, the call in flight at the kill is whole or absent, and
//     every acknowledged reset and once-increment asked again gets its
//     first answer (op_checks.h, GaugeModel);
//   - claims: tokens never go back, acknowledged answers asked again come
//     back the same, and done and counted agree (op_checks.h);
//   - with sync, every other kill is also a modelled power cut (each WAL
//     cut to its last sync) before the checks, which must all hold.
// After the last cycle every acknowledged answer is checked again.
// While the writer runs, a read-only Db beside it refreshes and runs Verify
// in a loop (every refreshed point must be one point across families:
// issue 12, item 1); any finding is a violation.

#ifndef TALLY_TESTS_CRASH_CRASH_CHECK_H_
#define TALLY_TESTS_CRASH_CRASH_CHECK_H_

#include <cstdint>
#include <string>
#include <vector>

namespace tally::crash {

struct CrashConfig {
  std::string writer;  // path of tally_crash_writer
  std::string dir;     // holds the database and the ack log
  int cycles = 20;
  bool sync = false;  // Options::sync in the writer, fsynced ack log,
                      // every other kill a modelled power cut
  uint64_t seed = 0;
  int max_progress = 120;  // kill after 1..max_progress progress bytes
  // Import mode: kill tally_crash_writer --import (see RunImportCycles).
  bool import = false;
};

struct CrashReport {
  int cycles = 0;
  uint64_t checks = 0;             // invariant checks passed
  uint64_t acknowledged = 0;       // acknowledged calls checked
  uint64_t reader_points = 0;      // points a read-only reader verified live
  uint64_t reader_stopped_points = 0;  // and with the writer stopped, 1 a cycle
  uint64_t keys_checked = 0;       // keyed counters' keys checked, all cycles
  uint64_t in_flight_batches = 0;  // batches across keys caught by a kill
  uint64_t in_flight_applied = 0;  // of those, the ones applied (wholly)
  int interrupted_imports = 0;     // import mode: kills inside an ImportCounter
  uint64_t power_cuts = 0;         // sync: kills modelled as power cuts too
  uint64_t cut_wal_bytes = 0;      // WAL bytes those cuts dropped (unsynced)
  uint64_t in_flight_gauge = 0;    // "gauge" calls caught in flight
  std::vector<std::string> violations;  // empty when everything held
};

CrashReport RunCrashCycles(const CrashConfig& config);

// Import mode (issue 12, item 6): builds a source database of several
// counters (once and plain increments, one with more markers than one
// write holds), then per cycle runs tally_crash_writer --import into the
// target and SIGKILLs it as it starts the import of a random counter (so
// the kill lands inside that import, or just after it). After every
// kill: each source counter the target holds equals it (value, shards,
// marker count), Verify is clean and a redelivered exported event is a
// duplicate that changes nothing; a complete target starts over empty. The
// last cycle lets the import finish and checks every counter. Among them
// a keyed counter and a keyed strict one with refusals, a reset and holds
// (issue 28, item 13): its events answer as in the source, and the
// target holds none of the source's reservations.
CrashReport RunImportCycles(const CrashConfig& config);

}  // namespace tally::crash

#endif  // TALLY_TESTS_CRASH_CRASH_CHECK_H_
