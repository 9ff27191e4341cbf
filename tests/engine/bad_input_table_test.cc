// The API half of docs/bad-input.md, one test per row: each bad input gets
// exactly the Status code and message the table gives, and writes nothing
// (the database's counters, values and markers and the files beside it are
// unchanged). A second test holds the table and this file together: every
// API row of the document is here and every row here is in the document,
// with the same input, code, message and known-defect mark.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/rules.h"
#include "tally/backup.h"
#include "tally/checkpoint.h"
#include "tally/import.h"
#include "tally/limits.h"
#include "testutil/doc_table.h"
#include "testutil/status_code.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// The state every row starts from (the document describes it above the
// tables): a database at <DB> open for writing, and two paths that are not
// databases.
struct Env {
  TempDir tmp;
  std::string db_path = tmp.Sub("db");
  std::unique_ptr<Db> db;

  // Replaces the document's placeholders with this run's paths.
  std::string Expand(const std::string& text) const {
    return test::ReplaceAll(test::ReplaceAll(text, "<DB>", db_path), "<TMP>",
                            tmp.path());
  }
};

// An import of an empty counter `name` with `shards` shards.
CounterImport Import(const char* name, uint32_t shards) {
  CounterImport im;
  im.info.name = name;
  im.info.shards = shards;
  return im;
}

void Populate(Env* env) {
  env->db = test::OpenOrDie(env->db_path);
  ASSERT_NE(env->db, nullptr);
  ASSERT_OK(env->db->CreateCounter("c", {4}));
  ASSERT_OK(env->db->CreateCounter("aff", {2, ShardPolicy::kAffinity}));
  ASSERT_OK(env->db->CreateCounter("one", {1}));
  ASSERT_OK(env->db->IncrementOnce("c", "e1", 5));
  ASSERT_OK(env->db->Increment("aff", 2, IncrementOptions{"dev-1"}));
  std::ofstream(env->tmp.Sub("file")) << "not a database\n";
  fs::create_directory(env->tmp.Sub("notdb"));
  std::ofstream(env->tmp.Sub("notdb/notes.txt")) << "notes\n";
}

// Everything a bad input must leave alone: every counter's catalog entry,
// value, shards and markers, and every file under <TMP> outside <DB> (whose
// RocksDB files change on any open, so its content is compared instead).
std::string Snapshot(Env* env) {
  std::ostringstream out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(env->tmp.path(), ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path rel = fs::relative(it->path(), env->tmp.path());
    out << "file " << rel.string();
    if (it->path() == fs::path(env->db_path)) {
      it.disable_recursion_pending();
    } else if (it->is_regular_file()) {
      out << " " << it->file_size();
    }
    out << "\n";
  }
  Result<std::vector<CounterInfo>> list = env->db->ListCounters();
  if (!list.ok()) return out.str() + list.status().ToString();
  for (const CounterInfo& c : *list) {
    out << "counter " << c.name << " id=" << c.id << " shards=" << c.shards
        << " policy=" << ShardPolicyName(c.policy) << " flags=" << c.flags
        << " created=" << c.created_at_ms << "\n";
    Result<std::vector<int64_t>> counts = env->db->ShardCounts(c.name);
    if (counts.ok()) {
      for (int64_t v : *counts) out << " " << v;
    } else {
      out << " " << counts.status().ToString();
    }
    out << "\n";
    ListMarkersOptions all;
    all.limit = kMaxListMarkers;
    Result<std::vector<MarkerInfo>> markers = env->db->ListMarkers(c.name, all);
    if (!markers.ok()) {
      out << markers.status().ToString() << "\n";
      continue;
    }
    for (const MarkerInfo& m : *markers) {
      out << " marker " << m.event_id << " " << m.shard << " " << m.delta << " "
          << m.created_at_ms << "\n";
    }
  }
  return out.str();
}

// One row of the table. `input`, `code`, `message` and `known_defect` are
// what the document says; `run` performs the input and returns its Status;
// `check`, when set, replaces the nothing-was-written check (rows at a limit
// that are accepted, and known defects, do write).
struct ApiRow {
  std::string id;
  std::string input;
  Status::Code code;
  std::string message;
  bool known_defect;
  std::function<Status(Env*)> run;
  std::function<void(Env*)> check;
};

void PrintTo(const ApiRow& row, std::ostream* os) { *os << row.id; }

using Code = Status::Code;

// A Batch of `n` plain increments of counter "c".
Batch PlainBatch(size_t n) {
  Batch b;
  for (size_t i = 0; i < n; ++i) b.Add("c", 1);
  return b;
}

Status ApplyBatch(Env* env, const Batch& b) {
  std::vector<IncrementResult> results;
  return env->db->Apply(b, &results);
}

Status OpenAt(const Options& options, const std::string& path) {
  std::unique_ptr<Db> other;
  return Db::Open(options, path, &other);
}

Options ReadOnly() {
  Options o;
  o.read_only = true;
  return o;
}

std::unique_ptr<Db> OpenReadOnly(Env* env) {
  return test::OpenOrDie(env->db_path, ReadOnly());
}

// Increments two shards of counter "c" (other than e1's) by INT64_MAX
// through affinity keys: every shard is in range, their sum is not.
void TwoFullShards(Env* env) {
  std::vector<uint32_t> used = {engine::ShardOfKey("e1", 4)};
  for (int i = 0; used.size() < 3; ++i) {
    const std::string key = "k" + std::to_string(i);
    const uint32_t shard = engine::ShardOfKey(key, 4);
    if (std::find(used.begin(), used.end(), shard) != used.end()) continue;
    used.push_back(shard);
    ASSERT_OK(env->db->Increment("c", kInt64Max, IncrementOptions{key}));
  }
}

const std::vector<ApiRow>& Rows() {
  static const std::vector<ApiRow> rows = {
      // ---- Db::Open ----
      {"API-01", "Db::Open(Options(), \"\", &db)", Code::kInvalidArgument,
       "database path is empty", false,
       [](Env*) { return OpenAt(Options(), ""); }, nullptr},
      {"API-02", "Db::Open(Options(), \"<TMP>/file\", &db)",
       Code::kInvalidArgument,
       "<TMP>/file is not a directory, so it is not a tally database", false,
       [](Env* e) { return OpenAt(Options(), e->tmp.Sub("file")); }, nullptr},
      {"API-03", "Db::Open(Options(), \"<TMP>/notdb\", &db)",
       Code::kInvalidArgument,
       "<TMP>/notdb holds files but is not a tally database (no RocksDB "
       "CURRENT file)",
       false, [](Env* e) { return OpenAt(Options(), e->tmp.Sub("notdb")); },
       nullptr},
      {"API-04", "Db::Open(read_only, \"<TMP>/missing\", &db)", Code::kNotFound,
       "no tally database at <TMP>/missing (create_if_missing is off)", false,
       [](Env* e) { return OpenAt(ReadOnly(), e->tmp.Sub("missing")); },
       nullptr},
      {"API-05", "Db::Open(event_lock_stripes = 0, \"<DB>\", &db)",
       Code::kInvalidArgument, "event_lock_stripes 0 is outside 1..1048576",
       false,
       [](Env* e) {
         Options o;
         o.event_lock_stripes = 0;
         return OpenAt(o, e->db_path);
       },
       nullptr},
      {"API-06", "Db::Open(Options(), \"<DB>\", &db) while <DB> is open",
       Code::kBusy,
       "database <DB> is in use by another process (its LOCK file is held); "
       "stop that process, go through it, or open the database read-only",
       false, [](Env* e) { return OpenAt(Options(), e->db_path); }, nullptr},

      // ---- counter names and specs ----
      {"API-07", "CreateCounter(\"\", {1})", Code::kInvalidArgument,
       "counter name is empty", false,
       [](Env* e) { return e->db->CreateCounter("", {1}); }, nullptr},
      {"API-08", "CreateCounter(std::string(128, 'n'), {1})", Code::kOk, "",
       false,
       [](Env* e) { return e->db->CreateCounter(std::string(128, 'n'), {1}); },
       [](Env* e) {
         EXPECT_EQ(test::OkValue(e->db->DescribeCounter(std::string(128, 'n')))
                       .shards,
                   1u);
       }},
      {"API-09", "CreateCounter(std::string(129, 'n'), {1})",
       Code::kInvalidArgument,
       "counter name "
       "'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn...' "
       "is 129 bytes; the limit is 128",
       false,
       [](Env* e) { return e->db->CreateCounter(std::string(129, 'n'), {1}); },
       nullptr},
      {"API-10", "CreateCounter(\"bad\\xff\", {1})", Code::kInvalidArgument,
       "counter name 'bad\\xff' is not valid UTF-8", false,
       [](Env* e) { return e->db->CreateCounter("bad\xff", {1}); }, nullptr},
      {"API-11", "CreateCounter(\"tab\\there\", {1})", Code::kInvalidArgument,
       "counter name 'tab\\x09here' contains a control character", false,
       [](Env* e) { return e->db->CreateCounter("tab\there", {1}); }, nullptr},
      {"API-12", "CreateCounter(\"x\", {0})", Code::kInvalidArgument,
       "shard count 0 is outside 1..4096", false,
       [](Env* e) { return e->db->CreateCounter("x", {0}); }, nullptr},
      {"API-13", "CreateCounter(\"x\", {4096})", Code::kOk, "", false,
       [](Env* e) { return e->db->CreateCounter("x", {4096}); },
       [](Env* e) {
         EXPECT_EQ(test::OkValue(e->db->ShardCounts("x")).size(), 4096u);
       }},
      {"API-14", "CreateCounter(\"x\", {4097})", Code::kInvalidArgument,
       "shard count 4097 is outside 1..4096", false,
       [](Env* e) { return e->db->CreateCounter("x", {4097}); }, nullptr},
      {"API-15", "CreateCounter(\"x\", {1, static_cast<ShardPolicy>(9)})",
       Code::kInvalidArgument, "shard policy 9 is unknown", false,
       [](Env* e) {
         return e->db->CreateCounter("x", {1, static_cast<ShardPolicy>(9)});
       },
       nullptr},
      {"API-16", "CreateCounter(\"c\", {4})", Code::kAlreadyExists,
       "counter 'c' already exists", false,
       [](Env* e) { return e->db->CreateCounter("c", {4}); }, nullptr},

      // ---- Increment ----
      {"API-17", "Increment(\"missing\", 1)", Code::kNotFound,
       "counter 'missing' does not exist", false,
       [](Env* e) { return e->db->Increment("missing", 1).status(); }, nullptr},
      {"API-18", "Increment(\"c\", INT64_MIN)", Code::kInvalidArgument,
       "delta -9223372036854775808 is reserved (the smallest accepted delta "
       "is -9223372036854775807)",
       false, [](Env* e) { return e->db->Increment("c", kInt64Min).status(); },
       nullptr},
      {"API-19", "Increment(\"one\", INT64_MIN + 1)", Code::kOk, "", false,
       [](Env* e) { return e->db->Increment("one", kMinDelta).status(); },
       [](Env* e) {
         EXPECT_EQ(test::OkValue(e->db->ReadExact("one")), kMinDelta);
       }},
      {"API-20", "Increment(\"c\", 1, {std::string(257, 'k')})",
       Code::kInvalidArgument,
       "affinity key "
       "'kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk...' "
       "is 257 bytes; the limit is 256",
       false,
       [](Env* e) {
         const std::string key(257, 'k');
         return e->db->Increment("c", 1, IncrementOptions{key}).status();
       },
       nullptr},
      {"API-21", "Increment(\"c\", 1, {std::string(256, 'k')})", Code::kOk, "",
       false,
       [](Env* e) {
         const std::string key(256, 'k');
         return e->db->Increment("c", 1, IncrementOptions{key}).status();
       },
       [](Env* e) { EXPECT_EQ(test::OkValue(e->db->ReadExact("c")), 6); }},
      {"API-22", "Increment(\"c\", 1, {\"k\\xff\"})", Code::kInvalidArgument,
       "affinity key 'k\\xff' is not valid UTF-8", false,
       [](Env* e) {
         return e->db->Increment("c", 1, IncrementOptions{"k\xff"}).status();
       },
       nullptr},
      {"API-23", "Increment(\"aff\", 1)", Code::kInvalidArgument,
       "counter 'aff' uses affinity sharding: the increment needs an affinity "
       "key",
       false, [](Env* e) { return e->db->Increment("aff", 1).status(); },
       nullptr},

      // ---- IncrementOnce: event ids ----
      {"API-24", "IncrementOnce(\"c\", \"\", 1)", Code::kInvalidArgument,
       "event id is empty", false,
       [](Env* e) { return e->db->IncrementOnce("c", "", 1).status(); },
       nullptr},
      {"API-25", "IncrementOnce(\"c\", std::string(256, 'e'), 1)", Code::kOk,
       "", false,
       [](Env* e) {
         return e->db->IncrementOnce("c", std::string(256, 'e'), 1).status();
       },
       [](Env* e) {
         EXPECT_EQ(test::OkValue(e->db->CountMarkers("c")), 2u);
         EXPECT_EQ(test::OkValue(e->db->ReadExact("c")), 6);
       }},
      {"API-26", "IncrementOnce(\"c\", std::string(257, 'e'), 1)",
       Code::kInvalidArgument,
       "event id "
       "'eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee...' "
       "is 257 bytes; the limit is 256",
       false,
       [](Env* e) {
         return e->db->IncrementOnce("c", std::string(257, 'e'), 1).status();
       },
       nullptr},
      {"API-27", "IncrementOnce(\"c\", \"id\\xfe\", 1)", Code::kInvalidArgument,
       "event id 'id\\xfe' is not valid UTF-8", false,
       [](Env* e) { return e->db->IncrementOnce("c", "id\xfe", 1).status(); },
       nullptr},
      {"API-28", "IncrementOnce(\"c\", std::string(\"a\\0b\", 3), 1)",
       Code::kInvalidArgument,
       "event id 'a\\x00b' contains a control character", false,
       [](Env* e) {
         return e->db->IncrementOnce("c", std::string("a\0b", 3), 1).status();
       },
       nullptr},
      {"API-29", "IncrementOnce(\"c\", \"e2\", INT64_MIN)",
       Code::kInvalidArgument,
       "delta -9223372036854775808 is reserved (the smallest accepted delta "
       "is -9223372036854775807)",
       false,
       [](Env* e) {
         return e->db->IncrementOnce("c", "e2", kInt64Min).status();
       },
       nullptr},

      // ---- int64 overflow of a counter ----
      {"API-30", "Increment(\"one\", 1) after Increment(\"one\", INT64_MAX)",
       Code::kOk, "", true,
       [](Env* e) {
         Status s = e->db->Increment("one", kInt64Max).status();
         return s.ok() ? e->db->Increment("one", 1).status() : s;
       },
       [](Env* e) {
         // Today: accepted; the shard keeps its exact sum beyond int64,
         // so reads are OutOfRange until the counter comes back.
         EXPECT_TRUE(e->db->ReadExact("one").status().IsOutOfRange());
         ASSERT_OK(e->db->Increment("one", -1));
         EXPECT_EQ(test::OkValue(e->db->ReadExact("one")), kInt64Max);
       }},
      {"API-31", "ReadExact(\"one\") after API-30", Code::kOutOfRange,
       "counter 'one': the sum of its shards is beyond int64", false,
       [](Env* e) {
         Status s = e->db->Increment("one", kInt64Max).status();
         if (s.ok()) s = e->db->Increment("one", 1).status();
         return s.ok() ? e->db->ReadExact("one").status() : s;
       },
       [](Env* e) {
         EXPECT_TRUE(e->db->ShardCounts("one").status().IsOutOfRange());
       }},
      {"API-32",
       "ReadExact(\"c\") after Increment(\"c\", INT64_MAX, {key}) on two "
       "of its shards",
       Code::kOutOfRange, "counter 'c': the sum of its shards is beyond int64",
       false,
       [](Env* e) {
         TwoFullShards(e);
         return e->db->ReadExact("c").status();
       },
       [](Env* e) {
         // Each shard still holds its exact value.
         Result<std::vector<int64_t>> counts = e->db->ShardCounts("c");
         ASSERT_OK(counts);
         EXPECT_EQ(std::count(counts->begin(), counts->end(), kInt64Max), 2);
       }},

      // ---- Apply / Batch ----
      {"API-33", "Apply(batch of 65537 Add(\"c\", 1))", Code::kInvalidArgument,
       "batch of 65537 operations exceeds the limit of 65536", false,
       [](Env* e) { return ApplyBatch(e, PlainBatch(kMaxBatchOps + 1)); },
       nullptr},
      {"API-34", "Apply(batch of 65536 Add(\"c\", 1))", Code::kOk, "", false,
       [](Env* e) { return ApplyBatch(e, PlainBatch(kMaxBatchOps)); },
       [](Env* e) {
         EXPECT_EQ(test::OkValue(e->db->ReadExact("c")), 5 + 65536);
       }},
      {"API-35", "Apply({Add(\"c\", 1), Add(\"missing\", 1)})", Code::kNotFound,
       "batch op 1: counter 'missing' does not exist", false,
       [](Env* e) {
         Batch b;
         b.Add("c", 1);
         b.Add("missing", 1);
         return ApplyBatch(e, b);
       },
       nullptr},
      {"API-36", "Apply({AddOnce(\"c\", \"e2\", 1), AddOnce(\"c\", \"\", 1)})",
       Code::kInvalidArgument, "batch op 1: event id is empty", false,
       [](Env* e) {
         Batch b;
         b.AddOnce("c", "e2", 1);
         b.AddOnce("c", "", 1);
         return ApplyBatch(e, b);
       },
       nullptr},
      {"API-37", "Apply({Add(\"c\", INT64_MIN)})", Code::kInvalidArgument,
       "batch op 0: delta -9223372036854775808 is reserved (the smallest "
       "accepted delta is -9223372036854775807)",
       false,
       [](Env* e) {
         Batch b;
         b.Add("c", kInt64Min);
         return ApplyBatch(e, b);
       },
       nullptr},
      {"API-38", "Apply({Add(\"one\", INT64_MAX), Add(\"one\", 1)})",
       Code::kOutOfRange,
       "batch op 1: the batch's deltas for counter 'one' shard 0 sum beyond "
       "int64; nothing was written",
       false,
       [](Env* e) {
         Batch b;
         b.Add("one", kInt64Max);
         b.Add("one", 1);
         return ApplyBatch(e, b);
       },
       nullptr},

      // ---- reads and deletes ----
      {"API-39", "ReadExact(\"\")", Code::kInvalidArgument,
       "counter name is empty", false,
       [](Env* e) { return e->db->ReadExact("").status(); }, nullptr},
      {"API-40", "DeleteCounter(\"missing\")", Code::kNotFound,
       "counter 'missing' does not exist", false,
       [](Env* e) { return e->db->DeleteCounter("missing"); }, nullptr},
      {"API-41", "GetMarker(\"c\", \"never\")", Code::kNotFound,
       "event 'never' was never counted in counter 'c'", false,
       [](Env* e) { return e->db->GetMarker("c", "never").status(); }, nullptr},
      {"API-42", "ListMarkers(\"c\", {.limit = 0})", Code::kInvalidArgument,
       "marker list limit 0 is outside 1..100000", false,
       [](Env* e) {
         ListMarkersOptions o;
         o.limit = 0;
         return e->db->ListMarkers("c", o).status();
       },
       nullptr},
      {"API-43", "ListMarkers(\"c\", {.limit = 100000})", Code::kOk, "", false,
       [](Env* e) {
         ListMarkersOptions o;
         o.limit = kMaxListMarkers;
         Result<std::vector<MarkerInfo>> r = e->db->ListMarkers("c", o);
         if (r.ok()) {
           EXPECT_EQ(r->size(), 1u);
         }
         return r.status();
       },
       nullptr},
      {"API-44", "ListMarkers(\"c\", {.limit = 100001})",
       Code::kInvalidArgument, "marker list limit 100001 is outside 1..100000",
       false,
       [](Env* e) {
         ListMarkersOptions o;
         o.limit = kMaxListMarkers + 1;
         return e->db->ListMarkers("c", o).status();
       },
       nullptr},
      {"API-45", "ListMarkers(\"c\", {.start_after = std::string(257, 'e')})",
       Code::kInvalidArgument,
       "start_after "
       "'eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee...' "
       "is 257 bytes, longer than any event id (the "
       "limit is 256)",
       false,
       [](Env* e) {
         ListMarkersOptions o;
         o.start_after = std::string(257, 'e');
         return e->db->ListMarkers("c", o).status();
       },
       nullptr},

      // ---- import ----
      {"API-46", "ImportCounter({.info = {.name = \"x\", .shards = 0}})",
       Code::kInvalidArgument, "shard count 0 is outside 1..4096", false,
       [](Env* e) { return tally::ImportCounter(*e->db, Import("x", 0)); },
       nullptr},
      {"API-47", "ImportCounter({.info = {.name = \"c\", .shards = 4}})",
       Code::kAlreadyExists, "counter 'c' already exists", false,
       [](Env* e) { return tally::ImportCounter(*e->db, Import("c", 4)); },
       nullptr},
      {"API-48",
       "ImportCounter({.info = {.name = \"x\", .shards = 1, .flags = 6}})",
       Code::kInvalidArgument,
       "counter 'x': flags 6 sets reserved bits (only bit 0, plain "
       "increments, is defined)",
       false,
       [](Env* e) {
         CounterImport im = Import("x", 1);
         im.info.flags = 6;
         return tally::ImportCounter(*e->db, im);
       },
       nullptr},
      {"API-49", "ImportCounter({x, 4 shards, .shard_values = {1, 2}})",
       Code::kInvalidArgument,
       "counter 'x': 2 shard values for its 4 shards (give one per shard, or "
       "none)",
       false,
       [](Env* e) {
         CounterImport im = Import("x", 4);
         im.shard_values = {1, 2};
         return tally::ImportCounter(*e->db, im);
       },
       nullptr},
      {"API-50", "ImportCounter({x, 1 shard, .shard_values = {INT64_MIN}})",
       Code::kInvalidArgument,
       "counter 'x': shard 0 value -9223372036854775808 is reserved (the "
       "smallest accepted is -9223372036854775807)",
       false,
       [](Env* e) {
         CounterImport im = Import("x", 1);
         im.shard_values = {kInt64Min};
         return tally::ImportCounter(*e->db, im);
       },
       nullptr},
      {"API-51", "ImportCounter({x, 4 shards, .markers = {{\"e9\", shard 3}}})",
       Code::kInvalidArgument,
       "marker 'e9' says shard 3, but its event id hashes to shard 2", false,
       [](Env* e) {
         CounterImport im = Import("x", 4);
         im.markers = {MarkerInfo{"e9", 3, 1, 0}};
         return tally::ImportCounter(*e->db, im);
       },
       nullptr},
      {"API-52",
       "ImportCounter({x, 4 shards, .markers = {{\"e8\", shard 2}, {\"e8\", "
       "shard 2}}})",
       Code::kInvalidArgument, "marker 'e8' appears twice in one import", false,
       [](Env* e) {
         CounterImport im = Import("x", 4);
         im.markers = {MarkerInfo{"e8", 2, 1, 0}, MarkerInfo{"e8", 2, 1, 0}};
         return tally::ImportCounter(*e->db, im);
       },
       nullptr},
      {"API-53",
       "ImportCounter({x, 1 shard, hour buckets, .shard_values = {5}})",
       Code::kNotSupported,
       "counter 'x' has time buckets; importing bucketed shard values is not "
       "supported",
       false,
       [](Env* e) {
         CounterImport im = Import("x", 1);
         im.info.bucket = BucketWidth::kHour;
         im.shard_values = {5};
         return tally::ImportCounter(*e->db, im);
       },
       nullptr},
      {"API-54", "ImportCounter({x, 1 shard, .markers = {{\"\", shard 0}}})",
       Code::kInvalidArgument, "marker 0: event id is empty", false,
       [](Env* e) {
         CounterImport im = Import("x", 1);
         im.markers = {MarkerInfo{"", 0, 1, 0}};
         return tally::ImportCounter(*e->db, im);
       },
       nullptr},
      {"API-55",
       "ImportCounter({x, 1 shard, .markers = {{\"e1\", .expires_at_ms = "
       "5}}})",
       Code::kInvalidArgument,
       "marker 'e1' has expiry 5 ms, but counter 'x' has dedupe window 0 ms "
       "(an expiry is > 0 exactly when the window is)",
       false,
       [](Env* e) {
         CounterImport im = Import("x", 1);
         im.markers = {MarkerInfo{"e1", 0, 1, 0, 5}};
         return tally::ImportCounter(*e->db, im);
       },
       nullptr},

      // ---- checkpoint, backup, restore ----
      {"API-56", "Checkpoint(\"<TMP>/notdb\")", Code::kInvalidArgument,
       "checkpoint <TMP>/notdb: Invalid argument: Directory exists", false,
       [](Env* e) { return tally::Checkpoint(*e->db, e->tmp.Sub("notdb")); },
       nullptr},
      {"API-57", "Checkpoint(\"\")", Code::kInvalidArgument,
       "checkpoint directory is empty", false,
       [](Env* e) { return tally::Checkpoint(*e->db, ""); }, nullptr},
      {"API-58", "RestoreBackup(\"<TMP>/nobackups\", 1, \"<TMP>/restored\")",
       Code::kNotFound, "no backup directory at <TMP>/nobackups", false,
       [](Env* e) {
         return RestoreBackup(e->tmp.Sub("nobackups"), 1,
                              e->tmp.Sub("restored"));
       },
       nullptr},
      {"API-59", "RestoreBackup(\"<TMP>/bk\", 1, \"<TMP>/notdb\")",
       Code::kInvalidArgument,
       "restore target <TMP>/notdb is not empty; restore into a new directory",
       false,
       [](Env* e) {
         Status s = tally::CreateBackup(*e->db, e->tmp.Sub("bk")).status();
         return s.ok() ? RestoreBackup(e->tmp.Sub("bk"), 1, e->tmp.Sub("notdb"))
                       : s;
       },
       [](Env* e) {
         // The backup this row takes first is the only new file.
         EXPECT_TRUE(fs::is_directory(e->tmp.Sub("bk")));
         EXPECT_EQ(std::distance(fs::directory_iterator(e->tmp.Sub("notdb")),
                                 fs::directory_iterator()),
                   1);
         EXPECT_EQ(test::OkValue(e->db->ReadExact("c")), 5);
       }},

      // ---- writes through a read-only handle ----
      {"API-60", "Increment(\"c\", 1) on a read_only handle",
       Code::kNotSupported,
       "database <DB> was opened read-only; writes go through the process "
       "that holds it",
       false,
       [](Env* e) { return OpenReadOnly(e)->Increment("c", 1).status(); },
       nullptr},
      {"API-61", "CreateCounter(\"x\", {1}) on a read_only handle",
       Code::kNotSupported,
       "database <DB> was opened read-only; writes go through the process "
       "that holds it",
       false, [](Env* e) { return OpenReadOnly(e)->CreateCounter("x", {1}); },
       nullptr},

      // ---- reads of time-bucketed counters ----
      {"API-62",
       "ReadExact(\"m\") of a minute-bucketed counter holding 65537 buckets",
       Code::kInvalidArgument,
       "counter 'm': the read spans more than 65536 time buckets, the most "
       "one read scans (kMaxReadBuckets); read shorter ranges with "
       "ReadRange, or keep fewer buckets with a retention",
       false,
       [](Env* e) {
         CounterSpec spec;
         spec.shards = 1;
         spec.bucket = BucketWidth::kMinute;
         Status s = e->db->CreateCounter("m", spec);
         constexpr int64_t kMinute = 60'000;
         for (int64_t i = 0; s.ok() && i <= int64_t{kMaxReadBuckets}; ++i) {
           s = e->db->Increment("m", 1, IncrementOptions{{}, i * kMinute})
                   .status();
         }
         return s.ok() ? e->db->ReadExact("m").status() : s;
       },
       [](Env* e) {
         // Refused, not cut short; the parts the message points to read.
         constexpr int64_t kMinute = 60'000;
         const int64_t half = int64_t{kMaxReadBuckets} / 2 * kMinute;
         const int64_t end = (int64_t{kMaxReadBuckets} + 1) * kMinute;
         EXPECT_EQ(test::OkValue(e->db->ReadRange("m", 0, half)) +
                       test::OkValue(e->db->ReadRange("m", half, end)),
                   int64_t{kMaxReadBuckets} + 1);
         EXPECT_EQ(test::OkValue(e->db->ReadExact("c")), 5);
       }},
      // ---- Options at Open (tests/engine/options_test.cc walks every
      // field) ----
      {"API-63", "Db::Open(write_buffer_bytes = 0, \"<TMP>/new\", &db)",
       Code::kInvalidArgument,
       "write_buffer_bytes 0 is outside 65536..68719476736", false,
       [](Env* e) {
         Options o;
         o.write_buffer_bytes = 0;
         return OpenAt(o, e->tmp.Sub("new"));
       },
       nullptr},
      {"API-64", "Db::Open(block_cache_bytes = 0, \"<TMP>/new\", &db)",
       Code::kInvalidArgument,
       "block_cache_bytes 0 is outside 1048576..1099511627776", false,
       [](Env* e) {
         Options o;
         o.block_cache_bytes = 0;
         return OpenAt(o, e->tmp.Sub("new"));
       },
       nullptr},
      // ---- strict counters ----
      {"API-65", "CreateCounter(\"s\", {shards = 4, bounds = AtLeast(0)})",
       Code::kInvalidArgument,
       "a strict counter (with a minimum or maximum) is never sharded: shard "
       "count 4 must be 1",
       false,
       [](Env* e) {
         CounterSpec spec;
         spec.shards = 4;
         spec.bounds = CounterBounds::AtLeast(0);
         return e->db->CreateCounter("s", spec);
       },
       nullptr},
      {"API-66", "CreateCounter(\"s\", {bounds = AtLeast(1)})",
       Code::kInvalidArgument, "minimum 1 is above 0, where a counter starts",
       false,
       [](Env* e) {
         CounterSpec spec;
         spec.bounds = CounterBounds::AtLeast(1);
         return e->db->CreateCounter("s", spec);
       },
       nullptr},
      {"API-67", "CreateCounter(\"s\", {outbox = true, bounds = AtMost(100)})",
       Code::kNotSupported,
       "a strict counter with an outbox is not supported yet", false,
       [](Env* e) {
         CounterSpec spec;
         spec.outbox = true;
         spec.bounds = CounterBounds::AtMost(100);
         return e->db->CreateCounter("s", spec);
       },
       nullptr},
      {"API-68",
       "CreateCounter(\"s\", {sliding = true, bounds = Between(0, 100)})",
       Code::kInvalidArgument,
       "a sliding window is a quota's: it needs time buckets, minimum 0 and a "
       "maximum",
       false,
       [](Env* e) {
         CounterSpec spec;
         spec.sliding = true;
         spec.bounds = CounterBounds::Between(0, 100);
         return e->db->CreateCounter("s", spec);
       },
       nullptr},
      {"API-69",
       "CreateCounter(\"s\", {bucket = kMinute, retention_ms = 30000, "
       "sliding = true, bounds = Between(0, 100)})",
       Code::kInvalidArgument,
       "a sliding quota reads the previous window: retention 30000 ms must be "
       "0 (forever) or at least the bucket width 60000 ms",
       false,
       [](Env* e) {
         CounterSpec spec;
         spec.bucket = BucketWidth::kMinute;
         spec.retention_ms = 30'000;
         spec.sliding = true;
         spec.bounds = CounterBounds::Between(0, 100);
         return e->db->CreateCounter("s", spec);
       },
       nullptr},
      // ---- reservations and resets ----
      {"API-70", "Reserve(\"c\", \"r1\", 1, 60000)", Code::kInvalidArgument,
       "counter 'c' takes no reservations: they need a strict counter with a "
       "minimum and no time buckets",
       false,
       [](Env* e) { return e->db->Reserve("c", "r1", 1, 60'000).status(); },
       nullptr},
      {"API-71", "Reserve(\"c\", \"r1\", 0, 60000)", Code::kInvalidArgument,
       "reservation units 0 must be at least 1", false,
       [](Env* e) { return e->db->Reserve("c", "r1", 0, 60'000).status(); },
       nullptr},
      {"API-72", "Reserve(\"c\", \"r1\", 1, 2592000001)",
       Code::kInvalidArgument,
       "hold of 2592000001 ms is outside 1..2592000000 ms (kMaxHoldMs)", false,
       [](Env* e) {
         return e->db->Reserve("c", "r1", 1, kMaxHoldMs + 1).status();
       },
       nullptr},
      {"API-73", "Reset(\"c\", \"r1\", INT64_MIN)", Code::kInvalidArgument,
       "reset value -9223372036854775808 is reserved (the smallest accepted "
       "value is -9223372036854775807)",
       false,
       [](Env* e) {
         return e->db
             ->Reset("c", "r1", std::numeric_limits<int64_t>::min())
             .status();
       },
       nullptr},
      {"API-74", "Claim(\"\", \"w\", 30000)", Code::kInvalidArgument,
       "claim key is empty", false,
       [](Env* e) { return e->db->Claim("", "w", 30'000).status(); }, nullptr},
      {"API-75", "Claim(\"k\", \"\", 30000)", Code::kInvalidArgument,
       "claim holder is empty", false,
       [](Env* e) { return e->db->Claim("k", "", 30'000).status(); }, nullptr},
      {"API-76", "Claim(\"k\", \"w\", 0)", Code::kInvalidArgument,
       "lease of 0 ms is outside 1..604800000 ms (kMaxLeaseMs)", false,
       [](Env* e) { return e->db->Claim("k", "w", 0).status(); }, nullptr},
      {"API-77", "CompleteClaim(\"k\", 1, \"\")", Code::kNotFound,
       "claim 'k' was never claimed", false,
       [](Env* e) { return e->db->CompleteClaim("k", 1, "").status(); },
       nullptr},
      {"API-78", "CompleteClaim(\"k\", 0, \"\")", Code::kInvalidArgument,
       "token 0 of claim 'k' was never granted: tokens start at 1", false,
       [](Env* e) { return e->db->CompleteClaim("k", 0, "").status(); },
       nullptr},
      {"API-79", "ListClaims({limit = 0})", Code::kInvalidArgument,
       "claim list limit 0 is outside 1..10000 (kMaxListClaims)", false,
       [](Env* e) {
         ListClaimsOptions o;
         o.limit = 0;
         return e->db->ListClaims(o).status();
       },
       nullptr},
      {"API-80", "VerifyBackup(\"<TMP>/bk\", 9)", Code::kNotFound,
       "there is no backup 9 in <TMP>/bk (listing it shows the ids)", false,
       [](Env* e) {
         Status s = tally::CreateBackup(*e->db, e->tmp.Sub("bk")).status();
         return s.ok() ? VerifyBackup(e->tmp.Sub("bk"), 9) : s;
       },
       [](Env* e) {
         // The backup this row takes first is the only new file.
         EXPECT_TRUE(fs::is_directory(e->tmp.Sub("bk")));
         EXPECT_EQ(test::OkValue(e->db->ReadExact("c")), 5);
       }},
  };
  return rows;
}

class ApiBadInput : public ::testing::TestWithParam<ApiRow> {};

// Proves the row's input gets exactly the documented code and message and,
// unless the row says otherwise, writes nothing.
TEST_P(ApiBadInput, Row) {
  const ApiRow& row = GetParam();
#if defined(__SANITIZE_THREAD__)
  // As the Backup tests in the TSAN pass (scripts/dev): RocksDB's
  // BackupEngine copies on uninstrumented threads TSAN cannot follow.
  if (row.input.find("Backup") != std::string::npos) {
    GTEST_SKIP() << "BackupEngine under TSAN";
  }
#endif
  Env env;
  Populate(&env);
  if (HasFatalFailure()) return;
  const std::string before = Snapshot(&env);
  const Status s = row.run(&env);
  EXPECT_STREQ(test::StatusCodeName(s.code()), test::StatusCodeName(row.code))
      << s.ToString();
  EXPECT_EQ(s.message(), env.Expand(row.message));
  if (row.check) {
    row.check(&env);
  } else {
    EXPECT_EQ(Snapshot(&env), before) << row.id << " wrote something";
  }
}

INSTANTIATE_TEST_SUITE_P(BadInputTable, ApiBadInput,
                         ::testing::ValuesIn(Rows()),
                         [](const ::testing::TestParamInfo<ApiRow>& info) {
                           return test::ReplaceAll(info.param.id, "-", "_");
                         });

// Proves docs/bad-input.md and Rows() list the same API rows, numbered in
// order, with the same input, code, message and known-defect mark, so
// neither can drift.
TEST(BadInputTableDoc, ApiRowsMatchTheDocument) {
  const std::vector<test::DocRow> doc =
      test::ReadDocRows(TALLY_BAD_INPUT_DOC, "API-");
  ASSERT_FALSE(doc.empty()) << "no API rows in " << TALLY_BAD_INPUT_DOC;
  std::map<std::string, const test::DocRow*> by_id;
  for (size_t i = 0; i < doc.size(); ++i) {
    const test::DocRow& row = doc[i];
    char want[32];
    std::snprintf(want, sizeof(want), "API-%02zu", i + 1);
    EXPECT_EQ(row.cells.empty() ? "" : row.cells[0], want)
        << TALLY_BAD_INPUT_DOC << ":" << row.line
        << ": API rows are numbered API-01, API-02, ... in document order";
    ASSERT_EQ(row.cells.size(), 5u)
        << TALLY_BAD_INPUT_DOC << ":" << row.line
        << ": an API row has 5 cells: id, input, code, message, notes";
    EXPECT_TRUE(by_id.emplace(row.cells[0], &row).second)
        << "duplicate id " << row.cells[0];
  }
  std::map<std::string, bool> tested;
  for (const ApiRow& row : Rows()) {
    tested[row.id] = true;
    auto found = by_id.find(row.id);
    if (found == by_id.end()) {
      ADD_FAILURE() << row.id << " is tested but not in the document";
      continue;
    }
    const std::vector<std::string>& cells = found->second->cells;
    const std::string where = std::string(TALLY_BAD_INPUT_DOC) + ":" +
                              std::to_string(found->second->line);
    EXPECT_EQ(cells[1], row.input) << where;
    EXPECT_EQ(cells[2], test::StatusCodeName(row.code)) << where;
    EXPECT_EQ(cells[3], row.message.empty() ? "—" : row.message) << where;
    EXPECT_EQ(cells[4].rfind("**known defect**", 0) == 0, row.known_defect)
        << where << ": the notes of a known defect start with **known defect**";
  }
  for (const test::DocRow& row : doc) {
    EXPECT_TRUE(tested.count(row.cells[0]) != 0)
        << TALLY_BAD_INPUT_DOC << ":" << row.line << ": " << row.cells[0]
        << " has no test case in Rows()";
  }
}

// ---- The known defects of the table, as the rules want them ----
// These fail today and are disabled so the suite stays green; run them with
// --gtest_also_run_disabled_tests. Fixing a defect makes its test pass:
// enable it and update the row (whose test then fails) in the document.

class BadInputKnownDefect : public ::testing::Test {
 protected:
  void SetUp() override { Populate(&env_); }
  Env env_;
};

// API-30: an increment that would take a shard beyond int64 is refused and
// the counter keeps its value.
TEST_F(BadInputKnownDefect, DISABLED_IncrementThatOverflowsAShardIsRefused) {
  ASSERT_OK(env_.db->Increment("one", kInt64Max));
  const Status s = env_.db->Increment("one", 1).status();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("one"), std::string::npos) << s.ToString();
  EXPECT_EQ(test::OkValue(env_.db->ReadExact("one")), kInt64Max);
}

}  // namespace
}  // namespace tally
