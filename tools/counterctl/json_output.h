// --json output: every read subcommand can print exactly one JSON document
// on stdout instead of its text lines. Shapes are documented in
// docs/counterctl.md; keys are snake_case and never renamed, integers are
// JSON numbers, and every time appears twice: "<name>_ms" (milliseconds
// since the Unix epoch) and "<name>" (ISO-8601 UTC, as FormatUtcMillis).
//
// Errors do not change with --json: one line on stderr, the same exit code,
// nothing on stdout. A subcommand builds its whole document before printing,
// so a failure half-way leaves stdout empty.

#ifndef TALLY_TOOLS_COUNTERCTL_JSON_OUTPUT_H_
#define TALLY_TOOLS_COUNTERCTL_JSON_OUTPUT_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tally/types.h"

namespace counterctl {

using Json = nlohmann::json;

// Writes `doc` as one line on stdout. Bytes that are not valid UTF-8 (the
// engine refuses them in names and ids, so only a damaged database has
// them) are replaced by U+FFFD rather than failing the whole command.
void PrintJson(const Json& doc);

// --format tsv (list, shards, events, keys), for scripts: a header line of
// column names, then one line per row, fields separated by a tab. A text
// field escapes backslash, tab, newline and carriage return as \\, \t, \n,
// \r (PostgreSQL's text format), so every row is one line; null is an
// empty field; true/false and numbers as JSON writes them.
enum class Format { kText, kJson, kTsv };
// The output a subcommand was asked for: --json, or --format text|tsv (not
// both). A usage error is reported (and nullopt returned) for any other
// --format, or for --json with --format tsv.
std::optional<Format> ChooseFormat(bool json, const std::string& format);
// Prints `rows` (objects) as TSV: the header, then each row's `columns`.
void PrintTsv(const std::vector<std::string>& columns, const Json& rows);
// One TSV field, escaped as above.
std::string TsvField(const Json& value);

// Sets (*obj)[name + "_ms"] and (*obj)[name].
void SetTime(Json* obj, const std::string& name, int64_t ms);
// SetTime when `given`, else both null (a time that does not exist yet).
void SetTimeOrNull(Json* obj, const std::string& name, bool given, int64_t ms);

// A counter's catalog entry: name, id, shards, policy, schema_version,
// created_at_ms, created_at, flags, plain_increments, dedupe_window_ms,
// bucket, retention_ms, keyed.
Json CounterJson(const tally::CounterInfo& info);

// One marker: event_id, shard, delta, created_at_ms, created_at (and
// expires_at, key when set).
Json MarkerJson(const tally::MarkerInfo& marker);

// Keys with their values: [{"key": K, "value": N}, ...] in the given order.
Json KeyValuesJson(const std::vector<tally::KeyValue>& keys);

}  // namespace counterctl

#endif  // TALLY_TOOLS_COUNTERCTL_JSON_OUTPUT_H_
