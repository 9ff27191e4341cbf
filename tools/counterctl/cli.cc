// counterctl's command-line grammar: one small function per subcommand
// declares its flags; the behaviour lives in cmd_<name>.cc. CLI11 reports
// problems by throwing, so every parse exception stops here and becomes one
// line on stderr with exit code 2 (usage) - none reaches the library or
// escapes CommandLine::Parse.
//
// CLI11 is header-only and slow to compile, so this is the only file that
// includes it.

#include "cli.h"

#include <CLI/CLI.hpp>
#include <cassert>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <string_view>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "build_info.h"
#include "cli_spec.h"
#include "commands.h"
#include "common.h"
#include "progress.h"
#include "tally/limits.h"
#include "tally/version.h"

namespace counterctl {
namespace {

// What CommandLine needs of a subcommand: its CLI11 node and how to run it.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// Arguments of every subcommand. They live here, outside the CLI11 tree,
// because CLI11 writes into them by reference.
struct AllArgs {
  GlobalArgs global;
  CreateArgs create;
  ListArgs list;
  ReadArgs describe;
  IncrArgs incr;
  ResetArgs reset;
  ReserveArgs reserve;
  HoldArgs commit;
  HoldArgs release;
  HoldArgs reservation;
  GetArgs get;
  ShardsArgs shards;
  EventsArgs events;
  DeleteArgs del;
  KeysArgs keys;
  TopArgs top;
  ApplyArgs apply;
  VerifyArgs verify;
  CheckpointArgs checkpoint;
  RollupArgs rollup;
  StatsArgs stats;
  ExportArgs exp;
  ImportArgs imp;
  BackupArgs backup;
  OutboxArgs outbox;
  ClaimsArgs claims;
  SyncArgs sync;
  WatchArgs watch;
  WalArgs wal;
  LdbArgs ldb;
};

void AddName(CLI::App* sub, std::string* name) {
  sub->add_option("name", *name, "Counter name")->required()->type_name("NAME");
}

// --key K; `given` is set by the run function (CLI::Option::count).
CLI::Option* AddKey(CLI::App* sub, KeyArg* key, const std::string& what) {
  return sub
      ->add_option("--key", key->value,
                   "Keyed counters: " + what + " (1.." +
                       std::to_string(tally::kMaxKeyBytes) + " bytes)")
      ->type_name("KEY");
}

void AddJson(CLI::App* sub, bool* json) {
  sub->add_flag("--json", *json,
                "Print one JSON document instead of text (docs/counterctl.md)");
}

// --json, and --format text|tsv (checked by ChooseFormat, in plain words).
void AddJsonOrTsv(CLI::App* sub, bool* json, std::string* format) {
  AddJson(sub, json);
  sub->add_option("--format", *format,
                  "text (default) or tsv: a header line, then one "
                  "tab-separated line per row, for scripts")
      ->type_name("FORMAT");
}

Command AddCreate(CLI::App* root, AllArgs* a) {
  CLI::App* sub = root->add_subcommand("create", "Create a counter");
  AddName(sub, &a->create.name);
  sub->add_option("--shards", a->create.shards,
                  "Number of shards, 1..4096 (the engine checks the range)")
      ->required()
      ->type_name("N");
  sub->add_option("--policy", a->create.policy,
                  "How plain increments pick a shard: random (default) or "
                  "affinity (hash of --affinity, required on every incr)")
      ->check(CLI::IsMember({"random", "affinity"}))
      ->type_name("POLICY");
  sub->add_option("--dedupe-window", a->create.dedupe_window,
                  "How long once-increment markers are kept (7d, 12h, 90m, "
                  "30s, 500ms); older events are refused as outside_window. "
                  "Default 0: forever")
      ->type_name("DURATION");
  sub->add_flag("--outbox", a->create.outbox,
                "Append every applied increment to the outbox, for sync");
  sub->add_option("--bucket", a->create.bucket,
                  "Time buckets (UTC): minute, hour or day; reads then take "
                  "a range (get --from/--to, --today, --last). Default none")
      ->check(CLI::IsMember({"none", "minute", "hour", "day"}))
      ->type_name("WIDTH");
  sub->add_option("--retention", a->create.retention,
                  "How long a bucket is kept after it ends (30d, 12h, ...); "
                  "default 0: forever")
      ->type_name("DURATION");
  sub->add_flag("--keyed", a->create.keyed,
                "A keyed counter: one counter of this spec per key, each "
                "key made by its first increment (incr --key)");
  sub->add_option("--min", a->create.min,
                  "A strict counter: never below this (<= 0); an increment "
                  "that would go below is refused. Needs --shards 1")
      ->type_name("N");
  sub->add_option("--max", a->create.max,
                  "A strict counter: never above this (>= 0); an increment "
                  "that would go above is refused. Needs --shards 1")
      ->type_name("N");
  sub->add_flag("--sliding", a->create.sliding,
                "A sliding-window quota (with --bucket, --min 0 and --max): "
                "an increment is held to the weighted estimate of the last "
                "bucket-width of time, not its bucket alone");
  return {sub, [a] { return RunCreate(a->global, a->create); }};
}

Command AddList(CLI::App* root, AllArgs* a) {
  CLI::App* sub = root->add_subcommand("list", "List counters, by name");
  AddJsonOrTsv(sub, &a->list.json, &a->list.format);
  return {sub, [a] { return RunList(a->global, a->list); }};
}

Command AddDescribe(CLI::App* root, AllArgs* a) {
  CLI::App* sub =
      root->add_subcommand("describe", "Show a counter's settings and markers");
  AddName(sub, &a->describe.name);
  AddJson(sub, &a->describe.json);
  return {sub, [a] { return RunDescribe(a->global, a->describe); }};
}

Command AddIncr(CLI::App* root, AllArgs* a) {
  CLI::App* sub = root->add_subcommand(
      "incr", "Add to a counter; with --event-id at most once per id");
  AddName(sub, &a->incr.name);
  CLI::Option* key = AddKey(sub, &a->incr.key, "the key to add to");
  sub->add_option("--by", a->incr.by, "The delta, an int64 (default 1)")
      ->type_name("INT");
  CLI::Option* event_id =
      sub->add_option("--event-id", a->incr.event_id,
                      "Idempotency key: a redelivery is reported as duplicate "
                      "(same delta) "
                      "or conflict (another delta) and changes nothing")
          ->type_name("ID");
  CLI::Option* affinity =
      sub->add_option("--affinity", a->incr.affinity_key,
                      "Key hashed to pick the shard of a plain increment")
          ->type_name("KEY");
  sub->add_option("--time", a->incr.time,
                  "The event time (UTC, 2026-11-30T08:00:00Z or ms since the "
                  "epoch; default now): picks a bucketed counter's bucket, "
                  "and is checked against a dedupe window")
      ->type_name("TIME");
  AddJson(sub, &a->incr.json);
  return {sub, [a, event_id, affinity, key] {
            a->incr.key.given = key->count() > 0;
            a->incr.has_event_id = event_id->count() > 0;
            a->incr.has_affinity_key = affinity->count() > 0;
            return RunIncr(a->global, a->incr);
          }};
}

Command AddReset(CLI::App* root, AllArgs* a) {
  CLI::App* sub = root->add_subcommand(
      "reset", "Set a counter's value, at most once per --reset-id");
  AddName(sub, &a->reset.name);
  CLI::Option* key = AddKey(sub, &a->reset.key, "the key to reset");
  sub->add_option("--reset-id", a->reset.reset_id,
                  "Idempotency key: a redelivery with the same --value is "
                  "reported as duplicate, one with another value (or an id "
                  "an increment used) as conflict, and changes nothing")
      ->required()
      ->type_name("ID");
  sub->add_option("--value", a->reset.value,
                  "The value to set, an int64 (default 0)")
      ->type_name("INT");
  sub->add_option("--time", a->reset.time,
                  "When the reset was issued (UTC, 2026-11-30T08:00:00Z or ms "
                  "since the epoch; default now), the same in every copy: "
                  "required with a dedupe window, picks a bucketed counter's "
                  "bucket")
      ->type_name("TIME");
  AddJson(sub, &a->reset.json);
  return {sub, [a, key] {
            a->reset.key.given = key->count() > 0;
            return RunReset(a->global, a->reset);
          }};
}

// --id RID of the reservation subcommands.
void AddReservationId(CLI::App* sub, std::string* id) {
  sub->add_option("--id", *id,
                  "The reservation id (1.." +
                      std::to_string(tally::kMaxEventIdBytes) +
                      " bytes); every call is idempotent by it")
      ->required()
      ->type_name("RID");
}

Command AddReserve(CLI::App* root, AllArgs* a) {
  CLI::App* sub = root->add_subcommand(
      "reserve",
      "Hold units of a strict counter for a while; commit or release "
      "them later");
  AddName(sub, &a->reserve.name);
  CLI::Option* key = AddKey(sub, &a->reserve.key, "the key to hold units of");
  AddReservationId(sub, &a->reserve.id);
  sub->add_option("--units", a->reserve.units,
                  "How many units to hold, 1.." +
                      std::to_string(tally::kMaxDelta))
      ->required()
      ->type_name("N");
  sub->add_option("--hold-for", a->reserve.hold_for,
                  "How long the units stay held unless committed or "
                  "released (15m, 30s, 500ms; at most 30d)")
      ->required()
      ->type_name("DURATION");
  AddJson(sub, &a->reserve.json);
  return {sub, [a, key] {
            a->reserve.key.given = key->count() > 0;
            return RunReserve(a->global, a->reserve);
          }};
}

// commit, release and reservation: NAME [--key K] --id RID [--json].
Command AddHold(CLI::App* root, AllArgs* a, const std::string& name,
                const std::string& description, HoldArgs* args,
                int (*run)(const GlobalArgs&, const HoldArgs&)) {
  CLI::App* sub = root->add_subcommand(name, description);
  AddName(sub, &args->name);
  CLI::Option* key = AddKey(sub, &args->key, "the key of the reservation");
  AddReservationId(sub, &args->id);
  AddJson(sub, &args->json);
  return {sub, [a, key, args, run] {
            args->key.given = key->count() > 0;
            return run(a->global, *args);
          }};
}

Command AddGet(CLI::App* root, AllArgs* a) {
  CLI::App* sub = root->add_subcommand(
      "get", "Print the exact value (the sum of all shards)");
  AddName(sub, &a->get.name);
  sub->add_option("--key", a->get.keys,
                  "Keyed counters: the key to read (1.." +
                      std::to_string(tally::kMaxKeyBytes) +
                      " bytes); give it several times to read several keys "
                      "from one snapshot, one KEY<TAB>VALUE line each")
      ->type_name("KEY")
      ->allow_extra_args(false);
  sub->add_flag("--cached", a->get.cached,
                "Print the roll-up's value with its as-of time and lag");
  sub->add_option("--from", a->get.from,
                  "Bucketed counters: the sum of the buckets overlapping "
                  "[FROM, TO) (UTC time or ms since the epoch); needs --to")
      ->type_name("TIME");
  sub->add_option("--to", a->get.to, "End of the range (exclusive)")
      ->type_name("TIME");
  sub->add_flag("--today", a->get.today,
                "Bucketed counters: the sum of today's buckets (UTC)");
  sub->add_option("--last", a->get.last,
                  "Bucketed counters: the sum of the most recent buckets "
                  "covering DURATION, the current one included (--last 7d: "
                  "today and the 6 days before)")
      ->type_name("DURATION");
  AddJson(sub, &a->get.json);
  return {sub, [a] { return RunGet(a->global, a->get); }};
}

Command AddShards(CLI::App* root, AllArgs* a) {
  CLI::App* sub =
      root->add_subcommand("shards", "Print each shard: INDEX COUNT");
  AddName(sub, &a->shards.name);
  CLI::Option* key =
      AddKey(sub, &a->shards.key, "the key whose shards to print");
  sub->add_flag("--stats", a->shards.stats,
                "Then min, max, mean and max/mean of the shards");
  AddJsonOrTsv(sub, &a->shards.json, &a->shards.format);
  return {sub, [a, key] {
            a->shards.key.given = key->count() > 0;
            return RunShards(a->global, a->shards);
          }};
}

Command AddEvents(CLI::App* root, AllArgs* a) {
  CLI::App* sub =
      root->add_subcommand("events",
                           "List a counter's idempotency markers, --show one "
                           "or --count them (alias: markers)");
  // The API's noun (Db::ListMarkers); `events` stays the name scripts use.
  sub->alias("markers");
  AddName(sub, &a->events.name);
  CLI::Option* key =
      AddKey(sub, &a->events.key,
             "the key whose markers to list or show (--count without it "
             "counts every key's)");
  sub->add_flag("--count", a->events.count, "Print the number of markers");
  CLI::Option* show =
      sub->add_option("--show", a->events.show,
                      "Print the marker of one event id (exit 1 if none)")
          ->type_name("EVENT_ID");
  CLI::Option* limit =
      sub->add_option("--limit", a->events.limit,
                      "List at most N markers, 1.." +
                          std::to_string(kMaxEventsLimit) + " (default " +
                          std::to_string(kDefaultEventsLimit) + ")")
          ->type_name("N");
  CLI::Option* since =
      sub->add_option("--since", a->events.since,
                      "List only markers created at or after TIME: "
                      "2026-11-30T04:00:00Z (optional .mmm) or epoch ms")
          ->type_name("TIME");
  AddJsonOrTsv(sub, &a->events.json, &a->events.format);
  return {sub, [a, show, limit, since, key] {
            a->events.key.given = key->count() > 0;
            a->events.has_show = show->count() > 0;
            a->events.has_limit = limit->count() > 0;
            a->events.has_since = since->count() > 0;
            return RunEvents(a->global, a->events);
          }};
}

Command AddDelete(CLI::App* root, AllArgs* a) {
  CLI::App* sub = root->add_subcommand(
      "delete", "Delete a counter with its shards and markers");
  AddName(sub, &a->del.name);
  CLI::Option* key = AddKey(
      sub, &a->del.key, "delete only this key, with its shards and markers");
  sub->add_flag("--yes", a->del.yes, "Confirm the deletion");
  return {sub, [a, key] {
            a->del.key.given = key->count() > 0;
            return RunDelete(a->global, a->del);
          }};
}

Command AddKeys(CLI::App* root, AllArgs* a) {
  CLI::App* sub = root->add_subcommand(
      "keys", "List a keyed counter's keys with their values, in key order");
  AddName(sub, &a->keys.name);
  sub->add_option("--prefix", a->keys.prefix, "Only keys starting with PREFIX")
      ->type_name("PREFIX");
  sub->add_option("--start-after", a->keys.start_after,
                  "Only keys after KEY (exclusive): the last key of the "
                  "previous page")
      ->type_name("KEY");
  sub->add_option("--limit", a->keys.limit,
                  "At most N keys, 1.." + std::to_string(tally::kMaxListKeys) +
                      " (default " + std::to_string(kDefaultKeysLimit) + ")")
      ->type_name("N");
  AddJsonOrTsv(sub, &a->keys.json, &a->keys.format);
  return {sub, [a] { return RunKeys(a->global, a->keys); }};
}

Command AddTop(CLI::App* root, AllArgs* a) {
  CLI::App* sub = root->add_subcommand(
      "top", "The keys of a keyed counter with the largest values");
  AddName(sub, &a->top.name);
  sub->add_option("-n", a->top.n,
                  "How many keys, 1.." + std::to_string(tally::kMaxTopKeys) +
                      " (default " + std::to_string(kDefaultTopKeys) + ")")
      ->type_name("N");
  sub->add_flag("--exact", a->top.exact,
                "Scan every key now instead of reading the roll-up");
  AddJson(sub, &a->top.json);
  return {sub, [a] { return RunTop(a->global, a->top); }};
}

Command AddApply(CLI::App* root, AllArgs* a) {
  CLI::App* sub = root->add_subcommand(
      "apply", "Count a JSON Lines file of events (docs/counterctl.md)");
  sub->add_option("--file", a->apply.file,
                  "Input, one JSON object per line; - for stdin")
      ->required()
      ->type_name("FILE");
  sub->add_option("--threads", a->apply.threads,
                  "Worker threads, 1..64 (default 1)")
      ->type_name("N");
  sub->add_option("--batch", a->apply.batch,
                  "Operations per atomic batch, 1..65536 (default 1000)")
      ->type_name("N");
  sub->add_option("--skip", a->apply.skip,
                  "Skip the first N lines of FILE: continue a run that was "
                  "stopped (it prints N)")
      ->type_name("N");
  sub->add_option("--max-delay", a->apply.max_delay,
                  "--file -: commit a line within this long even when the "
                  "feed is slow, 1ms..60s (default 100ms)")
      ->type_name("DURATION");
  sub->add_flag("--progress", a->apply.progress,
                "Print \"committed through line L\" on stdout as the "
                "committed lines grow");
  AddJson(sub, &a->apply.json);
  return {sub, [a] { return RunApply(a->global, a->apply); }};
}

Command AddVerify(CLI::App* root, AllArgs* a) {
  CLI::App* sub = root->add_subcommand(
      "verify", "Check every record and invariant; exit 3 if any is broken");
  AddJson(sub, &a->verify.json);
  return {sub, [a] { return RunVerify(a->global, a->verify); }};
}

Command AddCompact(CLI::App* root, AllArgs* a) {
  CLI::App* sub = root->add_subcommand(
      "compact", "Fold every pending merge operand (needs write access)");
  return {sub, [a] { return RunCompact(a->global); }};
}

Command AddRollup(CLI::App* root, AllArgs* a) {
  CLI::App* sub = root->add_subcommand(
      "rollup",
      "Refresh the cached total of NAME, or of every changed counter "
      "(needs write access)");
  sub->add_option("name", a->rollup.name, "Counter name (default: all)")
      ->type_name("NAME");
  return {sub, [a] { return RunRollup(a->global, a->rollup); }};
}

Command AddCheckpoint(CLI::App* root, AllArgs* a) {
  CLI::App* sub = root->add_subcommand(
      "checkpoint", "Write a consistent copy of the database to DIR");
  sub->add_option("dir", a->checkpoint.dir, "Target directory; must not exist")
      ->required()
      ->type_name("DIR");
  return {sub, [a] { return RunCheckpoint(a->global, a->checkpoint); }};
}

Command AddStats(CLI::App* root, AllArgs* a) {
  CLI::App* sub = root->add_subcommand(
      "stats", "Storage, cache and throttling figures; pending operands");
  AddJson(sub, &a->stats.json);
  return {sub, [a] { return RunStats(a->global, a->stats); }};
}

Command AddExport(CLI::App* root, AllArgs* a) {
  CLI::App* sub = root->add_subcommand(
      "export", "Write every counter, shard and marker as JSON Lines");
  sub->add_option("file", a->exp.file, "Output file; - for stdout")
      ->required()
      ->type_name("FILE");
  sub->add_flag("--json", a->exp.json,
                "Print a JSON summary instead of the text one");
  return {sub, [a] { return RunExport(a->global, a->exp); }};
}

Command AddImport(CLI::App* root, AllArgs* a) {
  CLI::App* sub = root->add_subcommand(
      "import", "Load an export into a database (created if missing)");
  sub->add_option("file", a->imp.file, "Input file; - for stdin")
      ->required()
      ->type_name("FILE");
  sub->add_option("--merge", a->imp.merge,
                  "skip-existing: import into a non-empty database, skipping "
                  "counters whose name exists")
      ->check(CLI::IsMember({"skip-existing"}))
      ->type_name("MODE");
  return {sub, [a] { return RunImport(a->global, a->imp); }};
}

// backup has its own subcommands; each fills BackupArgs and names itself
// in BackupArgs::action.
Command AddBackup(CLI::App* root, AllArgs* a) {
  CLI::App* sub = root->add_subcommand(
      "backup", "Create, list, verify or restore backups (BackupEngine)");
  sub->require_subcommand(1);
  BackupArgs* b = &a->backup;
  auto add_dir = [b](CLI::App* app) {
    app->add_option("dir", b->dir, "Backup directory")
        ->required()
        ->type_name("DIR");
  };
  auto add_id = [b](CLI::App* app) {
    app->add_option("id", b->id, "Backup id (see backup list)")
        ->required()
        ->type_name("ID");
  };
  CLI::App* create = sub->add_subcommand(
      "create", "Back up the database (read-only open; created if missing)");
  add_dir(create);
  CLI::App* list = sub->add_subcommand("list", "List the backups in DIR");
  add_dir(list);
  AddJson(list, &b->json);
  CLI::App* verify = sub->add_subcommand(
      "verify", "Check sizes and checksums of backup ID's files");
  add_dir(verify);
  add_id(verify);
  CLI::App* restore = sub->add_subcommand(
      "restore", "Restore backup ID into TARGET (empty or missing)");
  add_dir(restore);
  add_id(restore);
  restore->add_option("target", b->target, "Directory to restore into")
      ->required()
      ->type_name("TARGET");
  return {sub, [a, create, list, verify, restore] {
            BackupArgs& args = a->backup;
            if (create->parsed()) args.action = "create";
            if (list->parsed()) args.action = "list";
            if (verify->parsed()) args.action = "verify";
            if (restore->parsed()) args.action = "restore";
            return RunBackup(a->global, args);
          }};
}

Command AddOutbox(CLI::App* root, AllArgs* a) {
  CLI::App* sub = root->add_subcommand(
      "outbox", "Read or acknowledge the outbox (counters created --outbox)");
  sub->require_subcommand(1);
  OutboxArgs* o = &a->outbox;
  CLI::App* status =
      sub->add_subcommand("status", "Entries, cursor and age of the oldest");
  AddJson(status, &o->json);
  CLI::App* list =
      sub->add_subcommand("list", "Entries after a cursor, in seq order");
  list->add_option("--after", o->after, "Cursor: entries with seq > SEQ")
      ->type_name("SEQ");
  list->add_option("--limit", o->limit, "At most N entries (default 100)")
      ->type_name("N");
  AddJson(list, &o->json);
  CLI::App* ack = sub->add_subcommand(
      "ack", "Acknowledge (delete) every entry with seq <= SEQ");
  ack->add_option("seq", o->seq, "Cursor")->required()->type_name("SEQ");
  return {sub, [a, status, list, ack] {
            OutboxArgs& args = a->outbox;
            if (status->parsed()) args.action = "status";
            if (list->parsed()) args.action = "list";
            if (ack->parsed()) args.action = "ack";
            return RunOutbox(a->global, args);
          }};
}

// claims has its own subcommands; each fills ClaimsArgs and names itself
// in ClaimsArgs::action.
Command AddClaims(CLI::App* root, AllArgs* a) {
  CLI::App* sub = root->add_subcommand(
      "claims", "List, show or release claims (docs/claims.md)");
  sub->require_subcommand(1);
  ClaimsArgs* c = &a->claims;
  auto add_key = [c](CLI::App* app) {
    app->add_option("key", c->key, "The claim key")
        ->required()
        ->type_name("KEY");
  };
  CLI::App* list =
      sub->add_subcommand("list", "Claims in key order, a line each");
  CLI::Option* held =
      list->add_flag("--held", c->held, "Only claims held now");
  list->add_flag("--done", c->done, "Only completed claims")->excludes(held);
  list->add_option("--limit", c->limit,
                   "At most N claims (default 100, at most " +
                       std::to_string(tally::kMaxListClaims) + ")")
      ->type_name("N");
  list->add_option("--after", c->after,
                   "Start after this key (the last of the previous page)")
      ->type_name("KEY");
  AddJson(list, &c->json);
  CLI::App* show = sub->add_subcommand(
      "show", "One claim: state, token, holder, lease, result");
  add_key(show);
  AddJson(show, &c->json);
  CLI::App* release = sub->add_subcommand(
      "release",
      "Give up a stuck claim; its next holder gets a higher token");
  add_key(release);
  release->add_option("--token", c->token,
                      "The token of the grant to give up (claims show KEY)")
      ->required()
      ->type_name("T");
  AddJson(release, &c->json);
  return {sub, [a, list, show, release] {
            ClaimsArgs& args = a->claims;
            if (list->parsed()) args.action = "list";
            if (show->parsed()) args.action = "show";
            if (release->parsed()) args.action = "release";
            return RunClaims(a->global, args);
          }};
}

Command AddSync(CLI::App* root, AllArgs* a) {
  CLI::App* sub = root->add_subcommand(
      "sync", "Ship the --db database's outbox to HUB, exactly once");
  sub->add_option("--to", a->sync.hub, "The hub database (must exist)")
      ->required()
      ->type_name("HUB");
  sub->add_option("--batch", a->sync.batch,
                  "Entries per hub write, 1..65536 (default 1000)")
      ->type_name("N");
  sub->add_flag("--no-shard-by-edge", a->sync.no_shard_by_edge,
                "Let the event id pick the hub shard instead of this "
                "database's id");
  sub->add_flag("--progress", a->sync.progress,
                "Print one line per acknowledged batch");
  AddJson(sub, &a->sync.json);
  return {sub, [a] { return RunSync(a->global, a->sync); }};
}

Command AddWatch(CLI::App* root, AllArgs* a) {
  CLI::App* sub = root->add_subcommand(
      "watch",
      "A live view beside the writer: rates, busiest counters and keys, "
      "roll-up lag, pending operands, outbox age");
  sub->add_option("--interval", a->watch.interval,
                  "Time between frames, 100ms..1h (default 1s)")
      ->type_name("DURATION");
  sub->add_option("--count", a->watch.count,
                  "Stop after N frames, 1..1000000 (default: run until "
                  "SIGINT or SIGTERM)")
      ->type_name("N");
  sub->add_option("--top", a->watch.top,
                  "How many busiest counters and largest keys, 1..100 "
                  "(default 5)")
      ->type_name("N");
  sub->add_flag("--json", a->watch.json,
                "Print JSON Lines, one object per frame (docs/counterctl.md)");
  return {sub, [a] { return RunWatch(a->global, a->watch); }};
}

// wal has one action, dump; like backup, a missing action is named.
Command AddWal(CLI::App* root, AllArgs* a) {
  CLI::App* sub =
      root->add_subcommand("wal", "Read RocksDB's write-ahead log (debugging)");
  sub->require_subcommand(1);
  CLI::App* dump = sub->add_subcommand(
      "dump",
      "Print the committed batches still in the WAL, decoded into counter "
      "operations");
  CLI::Option* since =
      dump->add_option("--since", a->wal.since,
                       "Start at the batch holding sequence number SEQ "
                       "(default: the oldest the WAL holds)")
          ->type_name("SEQ");
  dump->add_flag("--json", a->wal.json,
                 "Print JSON Lines, one object per batch (docs/counterctl.md)");
  return {sub, [a, since] {
            a->wal.has_since = since->count() > 0;
            return RunWal(a->global, a->wal);
          }};
}

// ldb takes every word after it unparsed (CommandLine::Parse hands them
// over before CLI11 sees them); the node is here for help and usage.
Command AddLdb(CLI::App* root, AllArgs* a) {
  CLI::App* sub = root->add_subcommand(
      "ldb",
      "RocksDB's ldb with tally's merge operator: scan, get, dump_wal, "
      "manifest_dump, checkconsistency, ... (counterctl ldb --help)");
  sub->prefix_command();
  return {sub, [a] { return RunLdb(a->global, a->ldb); }};
}

// `[--db DIR | -d DIR | --db=DIR]... ldb ARGS...`: whether argv runs ldb,
// and if so its words, counterctl's own --db (anywhere) taken out into
// `db`. Nullopt when argv is not an ldb command line.
std::optional<std::vector<std::string>> LdbWords(int argc,
                                                 const char* const* argv,
                                                 std::string* db) {
  auto take_db = [&](int* i) {
    const std::string_view w = argv[*i];
    if ((w == "--db" || w == "-d") && *i + 1 < argc) {
      *db = argv[*i + 1];
      *i += 2;
      return true;
    }
    if (w.rfind("--db=", 0) == 0) {
      *db = std::string(w.substr(5));
      *i += 1;
      return true;
    }
    return false;
  };
  int i = 1;
  while (i < argc && take_db(&i)) {
  }
  if (i >= argc || std::string_view(argv[i]) != "ldb") return std::nullopt;
  std::vector<std::string> words;
  for (++i; i < argc;) {
    const std::string_view w = argv[i];
    // counterctl's --db DIR / -d DIR; ldb's own --db=DIR stays ldb's.
    if ((w == "--db" || w == "-d") && take_db(&i)) continue;
    words.emplace_back(argv[i++]);
  }
  return words;
}

// The grammar as plain data, for the completion scripts and the man page.
CommandSpec SpecOf(const CLI::App* app) {
  CommandSpec spec;
  spec.name = app->get_name();
  spec.aliases = app->get_aliases();
  spec.description = app->get_description();
  for (const CLI::Option* o : app->get_options()) {
    if (o == app->get_help_ptr() || o == app->get_version_ptr()) continue;
    OptionSpec opt;
    opt.positional = !o->nonpositional();
    for (const std::string& s : o->get_snames()) opt.names.push_back("-" + s);
    for (const std::string& l : o->get_lnames()) opt.names.push_back("--" + l);
    // The placeholder the usage line shows; none for a flag.
    if (opt.positional) {
      opt.value = o->get_type_name().empty() ? o->get_name(true)
                                             : o->get_type_name();
    } else if (o->get_type_size_max() > 0) {
      opt.value = o->get_type_name();
    }
    opt.description = o->get_description();
    spec.options.push_back(std::move(opt));
  }
  for (const CLI::App* s :
       app->get_subcommands([](const CLI::App*) { return true; })) {
    spec.subcommands.push_back(SpecOf(s));
  }
  return spec;
}

// CLI11's messages, reworded where they would mislead: with no subcommand
// given, an unknown word is reported as "A subcommand is required", and so
// is a missing action of a subcommand that has actions (backup).
std::string DescribeParseError(const CLI::ParseError& e, CLI::App* root,
                               const std::vector<Command>& commands) {
  bool chosen = false;
  for (const Command& c : commands) {
    if (!c.app->parsed()) continue;
    chosen = true;
    std::vector<CLI::App*> actions =
        c.app->get_subcommands([](CLI::App*) { return true; });
    if (actions.empty()) continue;
    std::string names;
    bool given = false;
    for (size_t i = 0; i < actions.size(); ++i) {
      given = given || actions[i]->parsed();
      names += (i == 0                    ? ""
                : i + 1 == actions.size() ? " or "
                                          : ", ") +
               actions[i]->get_name();
    }
    if (!given) return c.app->get_name() + " needs an action: " + names;
  }
  const std::vector<std::string> rest = root->remaining();
  if (!chosen && !rest.empty()) return "unknown subcommand \"" + rest[0] + "\"";
  const std::string what = e.what();
  // CLI11's "--by: At Most 1 required but received 2", in plain words.
  static const std::string kAtMost1 = ": At Most 1 required but received ";
  const size_t at_most = what.find(kAtMost1);
  if (at_most != std::string::npos) {
    return what.substr(0, at_most) + " was given " +
           what.substr(at_most + kAtMost1.size()) +
           " times; it takes one value";
  }
  if (what.rfind("--db", 0) == 0 && root->get_option("--db")->count() == 0) {
    return "no database given: pass --db DIR (or -d DIR) before or after "
           "the subcommand, or set TALLY_DB";
  }
  return what;
}

}  // namespace

// The CLI11 tree and the arguments it writes into. Not movable: CLI11 and
// the subcommands' run functions hold pointers into it.
struct CommandLine::Impl {
  Impl();
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  AllArgs args;
  CLI::App root{"counterctl: inspect and change a tally database",
                "counterctl"};
  std::vector<Command> commands;
  const Command* chosen = nullptr;
};

CommandLine::Impl::Impl() {
  root.set_version_flag("--version", VersionText());
  root.add_option("-d,--db", args.global.db_path,
                  "Database directory, before or after the subcommand "
                  "(default: $TALLY_DB)")
      ->required()
      ->envname("TALLY_DB")
      ->type_name("DIR");
  root.add_flag("-q,--quiet", args.global.quiet,
                "No progress line on stderr (drawn only on a terminal)");
  // Subcommands take the root's options too: `counterctl get X --db DIR`.
  root.fallthrough();
  root.require_subcommand(1);

  commands = {AddCreate(&root, &args),     AddList(&root, &args),
              AddDescribe(&root, &args),   AddIncr(&root, &args),
              AddReset(&root, &args),      AddReserve(&root, &args),
              AddHold(&root, &args, "commit",
                      "Take a held reservation's units from the value",
                      &args.commit, RunCommit),
              AddHold(&root, &args, "release",
                      "Give a held reservation's units back",
                      &args.release, RunRelease),
              AddHold(&root, &args, "reservation",
                      "Show one reservation: its state, units and times",
                      &args.reservation, RunReservation),
              AddGet(&root, &args),        AddShards(&root, &args),
              AddEvents(&root, &args),     AddDelete(&root, &args),
              AddKeys(&root, &args),       AddTop(&root, &args),
              AddApply(&root, &args),      AddVerify(&root, &args),
              AddCompact(&root, &args),    AddRollup(&root, &args),
              AddCheckpoint(&root, &args), AddStats(&root, &args),
              AddExport(&root, &args),     AddImport(&root, &args),
              AddBackup(&root, &args),     AddWal(&root, &args),
              AddOutbox(&root, &args),     AddSync(&root, &args),
              AddClaims(&root, &args),     AddWatch(&root, &args),
              AddLdb(&root, &args)};
  // Set after the subcommands, which would otherwise inherit it: each
  // gets its own, naming itself with the database flag its usage line
  // (CLI11's) leaves out.
  root.footer(
      "Exit codes: 0 ok, 1 a tally operation failed, 2 usage error,\n"
      "3 verify found problems, 130/143 apply stopped by SIGINT/SIGTERM.\n"
      "Example: counterctl --db /var/lib/tally get orders-today\n"
      "Each subcommand takes --help (or: counterctl help SUBCOMMAND). See "
      "docs/counterctl.md.");
  for (const Command& c : commands) {
    c.app->footer("Run as: counterctl --db DIR " + c.app->get_name() +
                  " ... (--db may also follow it, as -d, or come from "
                  "TALLY_DB). Exit codes: counterctl help.");
  }
}

CommandLine::CommandLine() : impl_(std::make_unique<Impl>()) {}
CommandLine::~CommandLine() = default;

std::optional<int> CommandLine::Parse(int argc, const char* const* argv) {
  Impl& im = *impl_;
  // help [SUBCOMMAND]: --help of the whole tool or of one subcommand, with
  // no database needed.
  if (argc >= 2 && std::string_view(argv[1]) == "help") {
    if (argc > 3) return UsageError("help takes at most one subcommand");
    CLI::App* app = &im.root;
    if (argc == 3) {
      app = nullptr;
      for (const Command& c : im.commands) {
        if (c.app->get_name() == argv[2]) app = c.app;
      }
      if (app == nullptr) {
        return UsageError("help: unknown subcommand \"" +
                          std::string(argv[2]) + "\" (see counterctl help)");
      }
    }
    // As `SUBCOMMAND --help` prints it: the usage line starts with the
    // tool's name.
    std::cout << (app == &im.root ? app->help() : app->help("counterctl"));
    return kExitOk;
  }
  // completion bash|zsh, man: generated from the grammar, no database.
  if (argc >= 2 && (std::string_view(argv[1]) == "completion" ||
                    std::string_view(argv[1]) == "man")) {
    const CommandSpec spec = SpecOf(&im.root);
    const std::string_view what = argv[1];
    if (what == "man") {
      if (argc != 2) return UsageError("man takes no arguments");
      std::cout << ManPage(spec, VersionText());
      return kExitOk;
    }
    const std::string_view shell = argc == 3 ? argv[2] : "";
    if (argc != 3 || (shell != "bash" && shell != "zsh")) {
      return UsageError("completion takes one shell: bash or zsh");
    }
    std::cout << (shell == "bash" ? BashCompletion(spec) : ZshCompletion(spec));
    return kExitOk;
  }
  std::string ldb_db;
  if (std::optional<std::vector<std::string>> words =
          LdbWords(argc, argv, &ldb_db)) {
    for (const std::string& w : *words) {
      if (!ldb_db.empty() && w.rfind("--db=", 0) == 0) {
        return UsageError("ldb: the database is given twice (--db " + ldb_db +
                          " and ldb's " + w + "); give it once");
      }
    }
    if (ldb_db.empty()) {
      const char* env = std::getenv("TALLY_DB");
      if (env != nullptr) ldb_db = env;
    }
    im.args.global.db_path = ldb_db;
    im.args.ldb.args = std::move(*words);
    im.chosen = &im.commands.back();
    assert(im.chosen->app->get_name() == "ldb");
    return std::nullopt;
  }
  try {
    im.root.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version arrive as "errors" with exit code 0.
    if (e.get_exit_code() == 0) return im.root.exit(e);
    return UsageError(DescribeParseError(e, &im.root, im.commands) +
                      " (see counterctl --help)");
  }
  for (const Command& c : im.commands) {
    if (c.app->parsed()) {
      im.chosen = &c;
      return std::nullopt;
    }
  }
  return UsageError("no subcommand given (see counterctl --help)");
}

int CommandLine::Run() {
  assert(impl_->chosen != nullptr);
  SetProgressQuiet(impl_->args.global.quiet);
  return impl_->chosen->run();
}

}  // namespace counterctl
