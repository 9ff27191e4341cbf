// The checker half of the outbox power-cut crash test (issue 12, item 4):
// runs tally_crash_outbox_writer, SIGKILLs it at a random moment of real
// progress, models a power cut on the edge (its WAL truncated to the last
// fsync the writer's PowerCutFs logged; the sync=true hub keeps what it
// committed), reopens both and checks:
//   - SyncOutbox of what survived on the edge succeeds (no entry is a
//     conflict with another one on the hub) and leaves the outbox empty;
//   - the hub then holds at least the edge's total (nothing the edge
//     counted is missing at the hub: no entry was answered duplicate of a
//     different one);
//   - increments made after the cut all count on the hub: the sync reports
//     each applied, none duplicate, and the hub grows by exactly their sum;
//   - the hub holds at most every increment ever acknowledged (the ack log)
//     plus what the killed calls could carry (nothing counted twice).
// Repeats on the same pair of databases for a number of cycles.

#ifndef TALLY_TESTS_CRASH_OUTBOX_CHECK_H_
#define TALLY_TESTS_CRASH_OUTBOX_CHECK_H_

#include <cstdint>
#include <string>
#include <vector>

namespace tally::crash {

struct OutboxCrashConfig {
  std::string writer;  // path of tally_crash_outbox_writer
  std::string dir;     // holds the edge, the hub and the logs
  int cycles = 10;
  uint64_t seed = 0;
  int max_progress = 40;  // kill after 1..max_progress progress bytes
};

struct OutboxCrashReport {
  int cycles = 0;
  uint64_t checks = 0;       // invariant checks passed
  uint64_t cut_entries = 0;  // entries the modelled power cuts dropped
  std::vector<std::string> violations;  // empty when everything held
};

OutboxCrashReport RunOutboxPowerCutCycles(const OutboxCrashConfig& config);

}  // namespace tally::crash

#endif  // TALLY_TESTS_CRASH_OUTBOX_CHECK_H_
