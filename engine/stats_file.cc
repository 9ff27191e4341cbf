#include "engine/stats_file.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "engine/coding.h"
#include "engine/format.h"
#include "engine/rules.h"
#include "util/rocks_status.h"

namespace tally::engine {
namespace {

constexpr size_t kMagicBytes = sizeof kStatsFileMagic - 1;
static_assert(kMagicBytes == 8, "the magic is 8 bytes");
constexpr size_t kHeaderBytes = kMagicBytes + 4 + 4;  // magic, version, L
constexpr size_t kChecksumBytes = 8;
constexpr uint64_t kClosedFlag = 1;

// The record of version 1, field by field (docs/format.md, "Stats file").
enum Field : size_t {
  kFlags,
  kPid,
  kStartTicks,
  kWriterStartedMs,
  kAsOfMs,
  kIntervalMs,
  kApplied,
  kDuplicates,
  kConflicts,
  kOutsideWindow,
  kRejected,
  kRollupsBehind,
  kRollupLagIncrements,
  kRollupLagMs,
  kGroupCommits,
  kGroupMembers,
  kGroupLargest,
  kPendingOperands,
  kFieldCount1,  // the fields every version-1 record has
  kRefused = kFieldCount1,  // appended: strict counters' refusals
  kFieldCount,
};
constexpr size_t kRecordBytes = kFieldCount * 8;

void PutU32(uint32_t v, std::string* out) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}
uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}
void PutU64(uint64_t v, std::string* out) {
  char b[8];
  EncodeInt64(static_cast<int64_t>(v), b);
  out->append(b, sizeof b);
}
uint64_t GetU64(std::string_view bytes) {
  int64_t v = 0;
  DecodeInt64(bytes.substr(0, 8), &v);
  return static_cast<uint64_t>(v);
}

std::string FilePath(const std::string& db_path, const char* name) {
  return db_path + "/" + name;
}

// This process's start time from /proc/self/stat, 0 where unknown.
uint64_t StartTicks(const std::string& stat_path, char* state) {
  std::ifstream in(stat_path);
  std::string line;
  if (!in || !std::getline(in, line)) return 0;
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(line.substr(close + 1));
  std::vector<std::string> fields;  // fields 3, 4, ... of proc(5)
  for (std::string f; rest >> f;) fields.push_back(f);
  constexpr size_t kStartTimeIndex = 22 - 3;
  if (fields.size() <= kStartTimeIndex) return 0;
  if (state != nullptr && !fields[0].empty()) *state = fields[0][0];
  return std::strtoull(fields[kStartTimeIndex].c_str(), nullptr, 10);
}

}  // namespace

ProcessIdentity ThisProcess() {
  ProcessIdentity p;
  p.pid = static_cast<uint64_t>(::getpid());
  p.start_ticks = StartTicks("/proc/self/stat", nullptr);
  return p;
}

bool ProcessRuns(const ProcessIdentity& p) {
  if (p.pid == 0 || p.pid > static_cast<uint64_t>(INT32_MAX)) return false;
  const pid_t pid = static_cast<pid_t>(p.pid);
  // EPERM: it exists, owned by someone else.
  if (::kill(pid, 0) != 0 && errno != EPERM) return false;
  char state = '?';
  const uint64_t ticks =
      StartTicks("/proc/" + std::to_string(p.pid) + "/stat", &state);
  if (state == 'Z' || state == 'X') return false;  // exited, not yet reaped
  // No /proc (or no start time recorded): the pid alone decides.
  return p.start_ticks == 0 || ticks == 0 || ticks == p.start_ticks;
}

std::string EncodeStatsFile(const EngineStats& s,
                            const ProcessIdentity& writer) {
  uint64_t f[kFieldCount];
  f[kFlags] = s.origin.closed ? kClosedFlag : 0;
  f[kPid] = writer.pid;
  f[kStartTicks] = writer.start_ticks;
  f[kWriterStartedMs] = static_cast<uint64_t>(s.origin.writer_started_ms);
  f[kAsOfMs] = static_cast<uint64_t>(s.origin.as_of_ms);
  f[kIntervalMs] = s.origin.publish_interval_ms;
  f[kApplied] = s.applied;
  f[kDuplicates] = s.duplicates;
  f[kConflicts] = s.conflicts;
  f[kOutsideWindow] = s.outside_window;
  f[kRejected] = s.rejected;
  f[kRollupsBehind] = s.rollups_behind;
  f[kRollupLagIncrements] = s.rollup_lag_increments;
  f[kRollupLagMs] = static_cast<uint64_t>(s.rollup_lag_ms);
  f[kGroupCommits] = s.group_commits;
  f[kGroupMembers] = s.group_members;
  f[kGroupLargest] = s.group_largest;
  f[kPendingOperands] = s.pending_operands;
  f[kRefused] = s.refused;
  std::string out(kStatsFileMagic, kMagicBytes);
  PutU32(kStatsFileVersion, &out);
  PutU32(static_cast<uint32_t>(kRecordBytes), &out);
  for (uint64_t v : f) PutU64(v, &out);
  PutU64(StableHash(out), &out);
  return out;
}

bool DecodeStatsFile(std::string_view bytes, EngineStats* s,
                     ProcessIdentity* writer, std::string* why) {
  const std::string size = std::to_string(bytes.size()) + " bytes";
  if (bytes.size() < kHeaderBytes + kChecksumBytes) {
    *why = size + ", shorter than a header and checksum (" +
           std::to_string(kHeaderBytes + kChecksumBytes) + ")";
    return false;
  }
  if (bytes.substr(0, kMagicBytes) != kStatsFileMagic) {
    *why = "not a tally stats file (its first 8 bytes are not " +
           std::string(kStatsFileMagic) + ")";
    return false;
  }
  const uint32_t version = GetU32(bytes.data() + kMagicBytes);
  const uint64_t length = GetU32(bytes.data() + kMagicBytes + 4);
  if (kHeaderBytes + length + kChecksumBytes != bytes.size()) {
    *why = size + " where its header says " +
           std::to_string(kHeaderBytes + length + kChecksumBytes) +
           " (torn or truncated)";
    return false;
  }
  const std::string_view covered = bytes.substr(0, kHeaderBytes + length);
  if (StableHash(covered) != GetU64(bytes.substr(covered.size()))) {
    *why = "checksum mismatch (torn or damaged)";
    return false;
  }
  if (version != kStatsFileVersion) {
    *why = "stats format " + std::to_string(version) + ", this tally reads " +
           std::to_string(kStatsFileVersion) +
           (version > kStatsFileVersion ? " (upgrade tally)" : "");
    return false;
  }
  // A later writer of the same version may append fields: read ours; an
  // earlier one's record ends before the appended ones (they read 0).
  if (length < kFieldCount1 * 8) {
    *why = "a record of " + std::to_string(length) + " bytes, version 1 has " +
           std::to_string(kFieldCount1 * 8);
    return false;
  }
  const std::string_view record = bytes.substr(kHeaderBytes, length);
  auto get = [record](Field f) {
    return f * 8 + 8 <= record.size() ? GetU64(record.substr(f * 8, 8)) : 0;
  };
  *s = EngineStats();
  s->origin.closed = (get(kFlags) & kClosedFlag) != 0;
  writer->pid = get(kPid);
  writer->start_ticks = get(kStartTicks);
  s->origin.writer_pid = writer->pid;
  s->origin.writer_started_ms = static_cast<int64_t>(get(kWriterStartedMs));
  s->origin.as_of_ms = static_cast<int64_t>(get(kAsOfMs));
  s->origin.publish_interval_ms = static_cast<uint32_t>(get(kIntervalMs));
  s->applied = get(kApplied);
  s->duplicates = get(kDuplicates);
  s->conflicts = get(kConflicts);
  s->outside_window = get(kOutsideWindow);
  s->rejected = get(kRejected);
  s->rollups_behind = get(kRollupsBehind);
  s->rollup_lag_increments = get(kRollupLagIncrements);
  s->rollup_lag_ms = static_cast<int64_t>(get(kRollupLagMs));
  s->group_commits = get(kGroupCommits);
  s->group_members = get(kGroupMembers);
  s->group_largest = get(kGroupLargest);
  s->pending_operands = get(kPendingOperands);
  s->refused = get(kRefused);
  return true;
}

Status WriteStatsFile(rocksdb::Env* env, const std::string& db_path,
                      const std::string& bytes) {
  const std::string temp = FilePath(db_path, kStatsFileTemp);
  Status s = FromRocks(
      rocksdb::WriteStringToFile(env, bytes, temp, /*should_sync=*/false),
      "write " + temp);
  if (!s.ok()) return s;
  return FromRocks(env->RenameFile(temp, FilePath(db_path, kStatsFile)),
                   "rename " + temp);
}

Status RemoveStatsFile(rocksdb::Env* env, const std::string& db_path) {
  const std::string file = FilePath(db_path, kStatsFile);
  if (env->FileExists(file).IsNotFound()) return Status::OK();
  return FromRocks(env->DeleteFile(file), "remove " + file);
}

EngineStats ReadStatsFile(rocksdb::Env* env, const std::string& db_path,
                          int64_t now_ms) {
  const std::string file = FilePath(db_path, kStatsFile);
  EngineStats none;
  none.origin.source = StatsSource::kNone;
  std::string bytes;
  rocksdb::Status rs = rocksdb::ReadFileToString(env, file, &bytes);
  if (rs.IsNotFound() ||
      (rs.IsIOError() && env->FileExists(file).IsNotFound())) {
    none.origin.problem =
        "no engine figures published: " + file +
        " does not exist (the writer publishes none with "
        "Options::stats_publish_interval_ms 0, or is an older tally)";
    return none;
  }
  if (!rs.ok()) {
    none.origin.problem = "cannot read " + file + ": " + rs.ToString();
    return none;
  }
  EngineStats out;
  ProcessIdentity writer;
  std::string why;
  if (!DecodeStatsFile(bytes, &out, &writer, &why)) {
    none.origin.problem = file + " is damaged, ignored: " + why;
    return none;
  }
  out.origin.source = StatsSource::kWriter;
  out.origin.age_ms = std::max<int64_t>(0, now_ms - out.origin.as_of_ms);
  out.origin.live = !out.origin.closed && ProcessRuns(writer);
  return out;
}

}  // namespace tally::engine
