// The subcommands of counterctl. cli.cc declares each one's flags with
// CLI11 and fills its Args struct; the Run function (one cmd_*.cc each) does
// the work and returns the process exit code (see common.h).
//
// Flags that take numbers arrive as strings and are parsed strictly by the
// Run function, so "12abc" or "010" is a usage error rather than 12 or 8.

#ifndef TALLY_TOOLS_COUNTERCTL_COMMANDS_H_
#define TALLY_TOOLS_COUNTERCTL_COMMANDS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common.h"

namespace counterctl {

// create NAME --shards N [--policy random|affinity] [--keyed]
struct CreateArgs {
  std::string name;
  std::string shards;
  std::string policy = "random";
  std::string dedupe_window = "0";  // a duration (ParseDurationMs)
  bool outbox = false;
  std::string bucket = "none";      // none, minute, hour or day
  std::string retention = "0";      // a duration
  bool keyed = false;               // CounterSpec::keyed
  std::string min;                  // CounterSpec::bounds; empty: no bound
  std::string max;
  bool sliding = false;             // CounterSpec::sliding
};
int RunCreate(const GlobalArgs& global, const CreateArgs& args);

// Read subcommands take --json: one JSON document on stdout instead of the
// text lines (json_output.h).

// list [--json]
struct ListArgs {
  bool json = false;
  std::string format = "text";  // or tsv (json_output.h, ChooseFormat)
};
int RunList(const GlobalArgs& global, const ListArgs& args);

// describe NAME [--json]
struct ReadArgs {
  std::string name;
  bool json = false;
};
int RunDescribe(const GlobalArgs& global, const ReadArgs& args);

// get NAME [--key K]... [--cached] [--json]; a strict counter with a
// minimum also shows its reservations (Db::ReadHeld) while any are held.
struct GetArgs {
  std::string name;
  std::vector<std::string> keys;  // --key, any number of times
  bool cached = false;
  bool json = false;
  // Bucketed counters: a range (--from/--to times), --today, or --last DUR.
  std::string from, to, last;
  bool today = false;
};
int RunGet(const GlobalArgs& global, const GetArgs& args);

// rollup [NAME]
struct RollupArgs {
  std::string name;  // empty: every counter that changed
};
int RunRollup(const GlobalArgs& global, const RollupArgs& args);

// incr NAME [--key K] [--by D] [--event-id ID] [--affinity KEY]
struct IncrArgs {
  std::string name;
  KeyArg key;
  std::string by = "1";
  std::string event_id;
  bool has_event_id = false;
  std::string affinity_key;
  bool has_affinity_key = false;
  std::string time;  // event time (ParseUtcTime); empty: now
  bool json = false;
};
int RunIncr(const GlobalArgs& global, const IncrArgs& args);

// reset NAME [--key K] --reset-id ID [--value V] [--json]: sets the value
// (Db::Reset), once per reset id; prints the outcome, the shard, the value
// and the delta it took.
struct ResetArgs {
  std::string name;
  KeyArg key;
  std::string reset_id;
  std::string value = "0";  // an int64, parsed strictly by RunReset
  std::string time;         // --time: when the reset was issued
  bool json = false;
};
int RunReset(const GlobalArgs& global, const ResetArgs& args);

// Reservations of a strict counter with a minimum (Db::Reserve and the
// rest); each call is idempotent by (counter, key, reservation id) and
// prints the outcome and the reservation's state after it (cmd_reserve.cc).
// reserve NAME [--key K] --id RID --units N --hold-for DURATION [--json]
struct ReserveArgs {
  std::string name;
  KeyArg key;
  std::string id;
  std::string units;     // 1..kMaxDelta, parsed strictly by RunReserve
  std::string hold_for;  // a duration (ParseDurationMs)
  bool json = false;
};
int RunReserve(const GlobalArgs& global, const ReserveArgs& args);

// commit NAME [--key K] --id RID [--json]
// release NAME [--key K] --id RID [--json]
// reservation NAME [--key K] --id RID [--json]: one reservation as stored
// (Db::GetReservation), read-only.
struct HoldArgs {
  std::string name;
  KeyArg key;
  std::string id;
  bool json = false;
};
int RunCommit(const GlobalArgs& global, const HoldArgs& args);
int RunRelease(const GlobalArgs& global, const HoldArgs& args);
int RunReservation(const GlobalArgs& global, const HoldArgs& args);

// shards NAME [--key K] [--stats] [--json]
struct ShardsArgs {
  std::string name;
  KeyArg key;
  bool stats = false;
  bool json = false;
  std::string format = "text";
};
int RunShards(const GlobalArgs& global, const ShardsArgs& args);

// events NAME [--key K] [--limit N] [--since TIME] [--json]
// events NAME --show EVENT_ID [--json]
// events NAME --count [--json]
inline constexpr uint64_t kDefaultEventsLimit = 100;
// What one `events` run lists at most; the tool pages through
// Db::ListMarkers (kMaxListMarkers per call) up to this many.
inline constexpr uint64_t kMaxEventsLimit = 1000000;
struct EventsArgs {
  std::string name;
  KeyArg key;
  bool count = false;
  std::string show;
  bool has_show = false;
  std::string limit = std::to_string(kDefaultEventsLimit);
  bool has_limit = false;
  std::string since;
  bool has_since = false;
  bool json = false;
  std::string format = "text";  // tsv: listing only
};
int RunEvents(const GlobalArgs& global, const EventsArgs& args);

// delete NAME [--key K] --yes
struct DeleteArgs {
  std::string name;
  KeyArg key;
  bool yes = false;
};
int RunDelete(const GlobalArgs& global, const DeleteArgs& args);

// keys NAME [--prefix P] [--start-after K] [--limit N] [--json]: one
// Db::ListKeys page.
inline constexpr uint64_t kDefaultKeysLimit = 100;
struct KeysArgs {
  std::string name;
  std::string prefix;
  std::string start_after;
  std::string limit = std::to_string(kDefaultKeysLimit);
  bool json = false;
  std::string format = "text";
};
int RunKeys(const GlobalArgs& global, const KeysArgs& args);

// top NAME [-n N] [--exact] [--json]: Db::TopKeys.
inline constexpr uint64_t kDefaultTopKeys = 10;
struct TopArgs {
  std::string name;
  std::string n = std::to_string(kDefaultTopKeys);
  bool exact = false;
  bool json = false;
};
int RunTop(const GlobalArgs& global, const TopArgs& args);

// apply --file F [--threads N] [--batch N]
struct ApplyArgs {
  std::string file;
  std::string threads = "1";
  std::string batch = "1000";
  std::string skip = "0";            // input lines to skip (a resumed run)
  std::string max_delay = "100ms";   // stdin: a pending line's longest wait
  bool progress = false;             // "committed through line L" lines
  bool json = false;                 // the summary as one JSON document
};
int RunApply(const GlobalArgs& global, const ApplyArgs& args);

// verify [--json]
struct VerifyArgs {
  bool json = false;
};
int RunVerify(const GlobalArgs& global, const VerifyArgs& args);

// compact
int RunCompact(const GlobalArgs& global);

// checkpoint DIR
struct CheckpointArgs {
  std::string dir;
};
int RunCheckpoint(const GlobalArgs& global, const CheckpointArgs& args);

// stats [--json]
struct StatsArgs {
  bool json = false;
};
int RunStats(const GlobalArgs& global, const StatsArgs& args);

// export FILE [--json]  (FILE - is stdout)
struct ExportArgs {
  std::string file;
  bool json = false;
};
int RunExport(const GlobalArgs& global, const ExportArgs& args);

// import FILE [--merge skip-existing]  (FILE - is stdin)
struct ImportArgs {
  std::string file;
  std::string merge;
};
int RunImport(const GlobalArgs& global, const ImportArgs& args);

// backup create DIR | list DIR [--json] | verify DIR ID |
// restore DIR ID TARGET
struct BackupArgs {
  std::string action;  // create, list, verify, restore
  std::string dir;
  std::string id;
  std::string target;
  bool json = false;
};
int RunBackup(const GlobalArgs& global, const BackupArgs& args);

// wal dump [--since SEQ] [--json]: the batches still in RocksDB's WAL,
// decoded into counter operations; --json prints JSON Lines, one object per
// batch (docs/counterctl.md).
struct WalArgs {
  std::string since;  // a sequence number; parsed strictly by RunWal
  bool has_since = false;
  bool json = false;
};
int RunWal(const GlobalArgs& global, const WalArgs& args);

// ldb ARGS...: RocksDB's ldb on the database (tally::RunLdb), every word
// after `ldb` passed to it but counterctl's own --db DIR / -d DIR, which
// becomes ldb's --db=DIR. Returns ldb's exit code.
struct LdbArgs {
  std::vector<std::string> args;
};
int RunLdb(const GlobalArgs& global, const LdbArgs& args);

// outbox status [--json] | list [--after SEQ] [--limit N] [--json] |
// ack SEQ: the change feed of counters created with --outbox (docs/sync.md).
struct OutboxArgs {
  std::string action;  // status, list, ack
  std::string after = "0";
  std::string limit = "100";
  std::string seq;
  bool json = false;
};
int RunOutbox(const GlobalArgs& global, const OutboxArgs& args);

// claims list [--held|--done] [--limit N] [--after KEY] [--json] |
// claims show KEY [--json] | claims release KEY --token T [--json]
// (docs/claims.md).
struct ClaimsArgs {
  std::string action;  // list, show, release
  bool held = false;
  bool done = false;
  std::string limit = "100";
  std::string after;
  std::string key;
  std::string token;
  bool json = false;
};
int RunClaims(const GlobalArgs& global, const ClaimsArgs& args);

// sync --to HUB [--batch N] [--no-shard-by-edge] [--progress] [--json]:
// ships the --db database's outbox to HUB exactly once (tally/sync.h).
struct SyncArgs {
  std::string hub;
  std::string batch = "1000";
  bool no_shard_by_edge = false;
  bool progress = false;  // one line per acknowledged batch on stdout
  bool json = false;
};
int RunSync(const GlobalArgs& global, const SyncArgs& args);

// watch [--interval DURATION] [--count N] [--top N] [--json]: a live view of
// the database beside its writer, one frame per interval, from one
// read-only instance caught up by Db::Refresh (cmd_watch.cc).
struct WatchArgs {
  std::string interval = "1s";  // a duration, 100ms..1h (ParseDurationMs)
  std::string count;            // frames, 1..1000000; empty: until stopped
  std::string top = "5";        // busiest counters and keys, 1..100
  bool json = false;            // JSON Lines, one object per frame
};
int RunWatch(const GlobalArgs& global, const WatchArgs& args);

}  // namespace counterctl

#endif  // TALLY_TOOLS_COUNTERCTL_COMMANDS_H_
