// Helpers every counterctl subcommand shares: exit codes, the one-line error
// report, opening the database, strict number parsing, time formatting.
//
// Nothing here includes CLI11 or nlohmann/json, so a subcommand file compiles
// quickly and can be read without knowing either library.

#ifndef TALLY_TOOLS_COUNTERCTL_COMMON_H_
#define TALLY_TOOLS_COUNTERCTL_COMMON_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tally/admin.h"
#include "tally/db.h"
#include "tally/options.h"
#include "tally/status.h"

namespace counterctl {

// Exit codes are part of the tool's interface: scripts branch on them.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;  // a tally operation failed
inline constexpr int kExitUsage = 2;  // the command line was wrong
inline constexpr int kExitProblems = 3;  // verify found broken invariants

// Flags given before the subcommand.
struct GlobalArgs {
  std::string db_path;
  bool quiet = false;  // --quiet: no progress line
};

// Writes "counterctl: <message>" as exactly one line on stderr; control
// characters in the message (a newline inside an engine message or a
// counter name) are escaped so one error never spans two lines.
void PrintError(std::string_view message);

// A line on stderr beside data on stdout that must stay rows only (--format
// tsv): "counterctl: note: <message>", escaped as PrintError's.
void PrintNote(std::string_view message);

// Reports a failed operation and returns kExitError.
int Fail(const tally::Status& status);

// What a read of a counter's roll-up (get --cached, top) reports when there
// is none yet: NotFound naming the command that makes one (and
// `alternative`, another way to get an answer now), where the engine's
// message names API calls. Any other status is returned as it is.
tally::Status NoRollupYet(tally::Db& db, std::string_view counter,
                          const tally::Status& status,
                          std::string_view alternative);

// Reports a command-line mistake and returns kExitUsage.
int UsageError(std::string_view message);

// The time counterctl's runs go by: the system clock, or, when the
// environment sets COUNTERCTL_NOW (ISO-8601 UTC or epoch ms, as --time),
// that instant, frozen for the whole run, as SOURCE_DATE_EPOCH freezes a
// build's: docs/counterctl.md's examples run under it, so their dates and
// windows read the same on any day. The engine still never goes below its
// durable time mark (a database written later in real time keeps that
// time). Null when COUNTERCTL_NOW is malformed (OpenDb then fails naming
// it).
const tally::Clock* ToolClock();

// The state of the writer whose figures a read-only GetStats returned:
// "live", "closed" or "gone" (it stopped without closing); empty when no
// writer's figures are shown (origin.source kNone).
std::string WriterState(const tally::StatsOrigin& origin);

// How a subcommand opens the database named by --db.
enum class OpenMode {
  kCreate,  // read-write, creating it if missing (`create`, `import`)
  kWrite,   // read-write; Busy when another process holds it
  kRead,    // read-only, also while another process writes it
};

// Opens the database named by --db. Only `create` and `import` make a new
// database: a typo in --db for any other subcommand should be an error, not
// an empty database created on the side. Read subcommands open read-only, so
// they answer while an app holds the database. `reads` (kRead,
// tally::Options::reads): what the subcommand reads, so a read-only open
// replays and opens only that (docs/counterctl.md, "Read commands beside a
// writer").
tally::Status OpenDb(const GlobalArgs& global, OpenMode mode,
                     std::unique_ptr<tally::Db>* db,
                     uint32_t reads = tally::kReadAll);

// OK when --db names a local database; NotSupported naming `command` and
// the target when it names a server ("scheme://...", e.g. a Redis
// Cluster), for the commands that read a database's files themselves.
tally::Status NeedsLocalFiles(const GlobalArgs& global,
                              std::string_view command);

// Base-10 integers with an optional leading '-' and nothing else: no spaces,
// no '+', no "0x". CLI11 would accept "010" as octal 8, which surprises
// operators, so flags that take numbers are parsed here instead.
std::optional<int64_t> ParseInt64(std::string_view text);
std::optional<uint64_t> ParseUint64(std::string_view text);

// A duration for flags such as --dedupe-window: a base-10 count and one
// unit, ms, s, m, h or d ("7d", "90m", "500ms"), or "0"; in milliseconds.
// nullopt for anything else, or beyond int64 milliseconds.
std::optional<int64_t> ParseDurationMs(std::string_view text);

// Parses a flag that must be an integer in [min, max]. On failure reports a
// usage error naming the flag and the value and returns nullopt.
std::optional<uint64_t> ParseCountFlag(std::string_view flag,
                                       std::string_view text, uint64_t min,
                                       uint64_t max);

// "2024-11-30T02:48:00.123Z" for milliseconds since the Unix epoch.
std::string FormatUtcMillis(int64_t ms);

// The inverse, for flags that take a time: either ISO-8601 UTC
// "YYYY-MM-DDTHH:MM:SSZ" with an optional fraction of 1..3 digits
// (".5" = 500 ms) before the Z, years 0000..9999, or milliseconds since the
// Unix epoch as a base-10 integer (negative: before 1970). Nothing else: no
// offsets other than Z, no lower-case t/z, no spaces, no leap second 60.
std::optional<int64_t> ParseUtcTime(std::string_view text);

// ParseUtcTime for a flag: on failure reports a usage error naming the flag
// and the value, and returns nullopt (the caller exits kExitUsage).
std::optional<int64_t> ParseTimeFlag(std::string_view flag,
                                     std::string_view text);

// --key K: one key of a keyed counter (tally::CounterRef::key), on the
// subcommands that name a counter. Absent: the counter itself, as before.
struct KeyArg {
  std::string value;
  bool given = false;
};

// Refuses an empty --key as a usage error (it would silently mean "no key",
// the named counter); returns false after reporting it. Every other rule of
// a key (length, UTF-8, control characters, whether the counter is keyed)
// is the engine's, whose InvalidArgument names the key (exit 1).
bool CheckKeyFlag(std::string_view key);

// NAME, or key K of NAME: views into `name` and `key`.
tally::CounterRef RefOf(const std::string& name, const KeyArg& key);

// Bit 0 of CounterInfo::flags.
inline constexpr uint32_t kFlagPlainIncrements = 1u << 0;

// The flags as an operator reads them: "0", "1 (plain increments)"; bits
// this tool does not know are named by value ("4 (unknown 0x4)").
std::string DescribeFlags(uint32_t flags);

// Escapes control characters and cuts `text` to `max_bytes` (marking the
// cut), for echoing user input inside an error message.
std::string Printable(std::string_view text, size_t max_bytes = 80);

// `text` whole with control characters escaped as \xNN: an event id or a
// key in text output. The engine refuses control characters in both; should
// a damaged database hold one anyway, one record stays one line.
std::string Escaped(std::string_view text);

// Keys with their values as text, one "KEY<TAB>VALUE" line each, in the
// given order (`get --key` with several keys, `keys`, `top`). A key holds
// no control character, so the tab is never part of it. A key whose value
// lies beyond int64 (KeyValue::out_of_range) shows kOutOfRangeText.
void PrintKeyValues(const std::vector<tally::KeyValue>& keys);
inline constexpr const char* kOutOfRangeText = "out-of-range";

// After a listing: one note on stderr when keys of `counter` in `keys` have
// no value (beyond int64), naming the first and the remedy; none otherwise.
void NoteOutOfRangeKeys(const std::string& counter,
                        const std::vector<tally::KeyValue>& keys);

}  // namespace counterctl

#endif  // TALLY_TOOLS_COUNTERCTL_COMMON_H_
