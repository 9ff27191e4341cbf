// The stats file: the engine figures a writer publishes in its database
// directory for read-only processes (tally::GetStats there, `counterctl
// stats`). docs/format.md ("Stats file") specifies it.
//
// A writer replaces the whole file at each publish (a temporary file, then
// a rename), so a reader sees the previous figures or the new ones, never
// a mix; a checksum catches what a power cut or a stray writer leaves. The
// file names its writer's process, so a reader can tell a live writer's
// figures from a killed one's.
//
// Thread safety: the functions are pure or touch only the file; the caller
// serialises writers (one publisher per database).

#ifndef TALLY_ENGINE_STATS_FILE_H_
#define TALLY_ENGINE_STATS_FILE_H_

#include <rocksdb/env.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "tally/status.h"
#include "tally/admin.h"

namespace tally::engine {

// A process as the stats file names it: its pid and, on Linux, its start
// time in clock ticks since boot (/proc/PID/stat field 22; 0 where that is
// unknown), so a pid reused by another process is not mistaken for it.
struct ProcessIdentity {
  uint64_t pid = 0;
  uint64_t start_ticks = 0;
};

ProcessIdentity ThisProcess();

// Whether the process still runs as this process sees it: the pid exists
// (and is not a zombie), with the same start time when one is recorded.
bool ProcessRuns(const ProcessIdentity& p);

// The file's bytes for `figures`, taken by process `writer` (the origin's
// writer_started_ms, as_of_ms, publish_interval_ms and closed are stored;
// its other fields are the reader's).
std::string EncodeStatsFile(const EngineStats& figures,
                            const ProcessIdentity& writer);

// Decodes `bytes`; false with `why` (a phrase: "checksum mismatch", ...)
// when they are not a whole stats file this tally reads.
bool DecodeStatsFile(std::string_view bytes, EngineStats* figures,
                     ProcessIdentity* writer, std::string* why);

// Replaces the stats file of the database at `db_path` with `bytes`
// (through a temporary file and a rename; not synced: after a power cut
// the file may be damaged, which readers report).
Status WriteStatsFile(rocksdb::Env* env, const std::string& db_path,
                      const std::string& bytes);

// Removes the stats file, if any.
Status RemoveStatsFile(rocksdb::Env* env, const std::string& db_path);

// The figures published in the database at `db_path`, their origin filled
// in: source kWriter with their age at `now_ms` and whether the writer is
// live, or source kNone with every figure 0 and the problem (no file, a
// damaged one) named.
EngineStats ReadStatsFile(rocksdb::Env* env, const std::string& db_path,
                          int64_t now_ms);

}  // namespace tally::engine

#endif  // TALLY_ENGINE_STATS_FILE_H_
