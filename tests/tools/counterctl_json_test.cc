// counterctl --json: every read subcommand's document, parsed back and
// compared with what the test wrote through the API (with a ManualClock) or
// read back through the API itself; errors stay text on stderr; and the same
// documents while another process holds the database.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "counterctl_fixture.h"
#include "engine/coding.h"
#include "tally/admin.h"
#include "tally/db.h"
#include "testutil/raw_db.h"

namespace tally::test {
namespace {

using nlohmann::json;

// 2026-11-30T04:00:00.000Z
constexpr int64_t kT0 = 1796011200000;

struct Written {
  std::map<std::string, int64_t> deltas;  // once events of "orders"
  std::vector<int64_t> orders_shards = std::vector<int64_t>(4, 0);
  int64_t alpha_value = 0;
};

class CounterctlJson : public CounterctlTest {
 protected:
  // "orders": 4 shards, random, created at kT0, five once-events one second
  // apart from kT0 + 10 s. "alpha": 2 shards, affinity, created at
  // kT0 + 1 s, plain increments only (flags bit 0).
  void WriteDatabase(Db* db, ManualClock* clock) {
    ASSERT_OK(db->CreateCounter("orders", {4, ShardPolicy::kRandom}));
    clock->Advance(1000);
    ASSERT_OK(db->CreateCounter("alpha", {2, ShardPolicy::kAffinity}));
    clock->Advance(9000);
    for (int i = 1; i <= 5; ++i) {
      const std::string id = "e-" + std::to_string(i);
      Result<IncrementResult> r = db->IncrementOnce("orders", id, i * 10);
      ASSERT_OK(r);
      written_.deltas[id] = i * 10;
      written_.orders_shards[r->shard] += i * 10;
      clock->Advance(1000);
    }
    for (const char* key : {"dev-1", "dev-2", "dev-3"}) {
      ASSERT_OK(db->Increment("alpha", 7, IncrementOptions{key}));
      written_.alpha_value += 7;
    }
  }

  void WriteAndClose() {
    ManualClock clock(kT0);
    Options options;
    options.clock = &clock;
    std::unique_ptr<Db> db = OpenOrDie(db_, options);
    ASSERT_NE(db, nullptr);
    WriteDatabase(db.get(), &clock);
  }

  // A read-only Db on the test's database, to compare with.
  std::unique_ptr<Db> OpenReader() {
    Options options;
    options.read_only = true;
    std::unique_ptr<Db> db;
    EXPECT_OK(Db::Open(options, db_, &db));
    return db;
  }

  // Checks every read subcommand's --json document against `api` (a Db on
  // the same data: the holder, or a reader after close).
  void CheckEveryDocument(Db* api) {
    // list
    Result<std::vector<CounterInfo>> counters = api->ListCounters();
    ASSERT_OK(counters);
    json doc = CtlJson({"list"});
    ASSERT_TRUE(doc["counters"].is_array()) << doc;
    ASSERT_EQ(doc["counters"].size(), 2u) << doc;
    for (size_t i = 0; i < 2; ++i) {
      const CounterInfo& c = (*counters)[i];
      const json& j = doc["counters"][i];
      EXPECT_EQ(j["name"], c.name);
      EXPECT_EQ(j["id"], c.id);
      EXPECT_EQ(j["shards"], c.shards);
      EXPECT_EQ(j["policy"], ShardPolicyName(c.policy));
      EXPECT_EQ(j["schema_version"], c.schema_version);
      EXPECT_EQ(j["created_at_ms"], c.created_at_ms);
      EXPECT_EQ(j["flags"], c.flags);
      EXPECT_EQ(j["plain_increments"], (c.flags & 1) != 0);
    }
    // By name: alpha, then orders; values from the writer's clock.
    EXPECT_EQ(doc["counters"][0]["name"], "alpha");
    EXPECT_EQ(doc["counters"][0]["policy"], "affinity");
    EXPECT_EQ(doc["counters"][0]["created_at_ms"], kT0 + 1000);
    EXPECT_EQ(doc["counters"][0]["created_at"], "2026-11-30T04:00:01.000Z");
    EXPECT_EQ(doc["counters"][0]["flags"], 1);
    EXPECT_EQ(doc["counters"][0]["plain_increments"], true);
    EXPECT_EQ(doc["counters"][1]["name"], "orders");
    EXPECT_EQ(doc["counters"][1]["created_at_ms"], kT0);
    EXPECT_EQ(doc["counters"][1]["created_at"], "2026-11-30T04:00:00.000Z");
    EXPECT_EQ(doc["counters"][1]["flags"], 0);
    EXPECT_EQ(doc["counters"][1]["plain_increments"], false);

    // describe
    for (const CounterInfo& c : *counters) {
      doc = CtlJson({"describe", c.name});
      EXPECT_EQ(doc["name"], c.name);
      EXPECT_EQ(doc["id"], c.id);
      EXPECT_EQ(doc["shards"], c.shards);
      EXPECT_EQ(doc["policy"], ShardPolicyName(c.policy));
      EXPECT_EQ(doc["schema_version"], c.schema_version);
      EXPECT_EQ(doc["created_at_ms"], c.created_at_ms);
      EXPECT_EQ(doc["flags"], c.flags);
      Result<uint64_t> markers = api->CountMarkers(c.name);
      ASSERT_OK(markers);
      EXPECT_EQ(doc["markers"], *markers);
      Result<uint64_t> pending = tally::PendingOperands(*api, c.name);
      ASSERT_OK(pending);
      EXPECT_EQ(doc["pending_operands"], *pending) << c.name;
      EXPECT_TRUE(doc["pending_operands"].is_number_unsigned());
    }
    EXPECT_EQ(CtlJson({"describe", "orders"})["markers"], 5);

    // get
    doc = CtlJson({"get", "orders"});
    int64_t orders_value = 0;
    for (const auto& [id, delta] : written_.deltas) orders_value += delta;
    EXPECT_EQ(doc, (json{{"counter", "orders"}, {"value", orders_value}}));
    EXPECT_EQ(CtlJson({"get", "alpha"})["value"], written_.alpha_value);

    // shards, without and with --stats
    doc = CtlJson({"shards", "orders"});
    EXPECT_EQ(doc["counter"], "orders");
    EXPECT_EQ(doc["counts"], json(written_.orders_shards));
    EXPECT_FALSE(doc.contains("stats")) << doc;
    doc = CtlJson({"shards", "orders", "--stats"});
    EXPECT_EQ(doc["counts"], json(written_.orders_shards));
    const auto [mn, mx] = std::minmax_element(written_.orders_shards.begin(),
                                              written_.orders_shards.end());
    const double mean = static_cast<double>(orders_value) / 4;
    EXPECT_EQ(doc["stats"]["min"], *mn);
    EXPECT_EQ(doc["stats"]["max"], *mx);
    EXPECT_DOUBLE_EQ(doc["stats"]["mean"].get<double>(), mean);
    EXPECT_DOUBLE_EQ(doc["stats"]["max_over_mean"].get<double>(), *mx / mean);

    // events: listing, --limit, --since, --show, --count
    doc = CtlJson({"events", "orders"});
    EXPECT_EQ(doc["counter"], "orders");
    EXPECT_EQ(doc["limit"], 100);
    EXPECT_EQ(doc["since_ms"], nullptr);
    EXPECT_EQ(doc["since"], nullptr);
    EXPECT_EQ(doc["more"], false);
    ASSERT_EQ(doc["events"].size(), 5u) << doc;
    int i = 1;
    for (const json& e : doc["events"]) {  // e-1..e-5 is also id order
      const std::string id = "e-" + std::to_string(i);
      EXPECT_EQ(e["event_id"], id);
      EXPECT_EQ(e["delta"], written_.deltas[id]);
      EXPECT_EQ(e["created_at_ms"], kT0 + 10000 + (i - 1) * 1000);
      EXPECT_EQ(e["created_at"],
                "2026-11-30T04:00:" + std::to_string(10 + i - 1) + ".000Z");
      Result<MarkerInfo> m = api->GetMarker("orders", id);
      ASSERT_OK(m);
      EXPECT_EQ(e["shard"], m->shard);
      ++i;
    }
    doc = CtlJson({"events", "orders", "--limit", "2", "--since",
                   "2026-11-30T04:00:11Z"});
    EXPECT_EQ(doc["limit"], 2);
    EXPECT_EQ(doc["since_ms"], kT0 + 11000);
    EXPECT_EQ(doc["since"], "2026-11-30T04:00:11.000Z");
    EXPECT_EQ(doc["more"], true);
    ASSERT_EQ(doc["events"].size(), 2u) << doc;
    EXPECT_EQ(doc["events"][0]["event_id"], "e-2");
    EXPECT_EQ(doc["events"][1]["event_id"], "e-3");
    doc = CtlJson({"events", "orders", "--limit", "4", "--since",
                   "2026-11-30T04:00:11Z"});
    EXPECT_EQ(doc["events"].size(), 4u);
    EXPECT_EQ(doc["more"], false);

    doc = CtlJson({"events", "orders", "--show", "e-4"});
    Result<MarkerInfo> e4 = api->GetMarker("orders", "e-4");
    ASSERT_OK(e4);
    EXPECT_EQ(doc, (json{{"counter", "orders"},
                         {"event_id", "e-4"},
                         {"shard", e4->shard},
                         {"delta", 40},
                         {"created_at_ms", kT0 + 13000},
                         {"created_at", "2026-11-30T04:00:13.000Z"}}));
    EXPECT_EQ(CtlJson({"events", "orders", "--count"}),
              (json{{"counter", "orders"}, {"markers", 5}}));

    // verify
    doc = CtlJson({"verify"});
    VerifyReport report;
    ASSERT_OK(tally::Verify(*api, &report));
    EXPECT_EQ(doc["ok"], true);
    EXPECT_EQ(doc["counters"], 2);
    EXPECT_EQ(doc["counters"], report.counters);
    EXPECT_EQ(doc["shard_keys"], report.shard_keys);
    EXPECT_EQ(doc["markers"], 5);
    EXPECT_EQ(doc["sums_compared"], 1);  // alpha had plain increments
    EXPECT_EQ(doc["problems"], json::array());
    EXPECT_EQ(doc["problems_dropped"], 0);
    EXPECT_EQ(doc["problem_count"], 0);
  }

  Written written_;
};

// Proves every read subcommand's --json document carries the values written
// through the API, after the writer closed.
TEST_F(CounterctlJson, EveryDocumentMatchesTheApi) {
  WriteAndClose();
  std::unique_ptr<Db> reader = OpenReader();
  ASSERT_NE(reader, nullptr);
  CheckEveryDocument(reader.get());
}

// Proves the same documents are right while this process holds the
// database open for writing, with the writes still only in its WAL.
TEST_F(CounterctlJson, EveryDocumentWhileHeld) {
  ManualClock clock(kT0);
  Options options;
  options.clock = &clock;
  std::unique_ptr<Db> holder = OpenOrDie(db_, options);
  ASSERT_NE(holder, nullptr);
  WriteDatabase(holder.get(), &clock);
  CheckEveryDocument(holder.get());
  // The holder keeps writing; a new command sees it.
  ASSERT_OK(holder->IncrementOnce("orders", "e-6", 60));
  EXPECT_EQ(CtlJson({"get", "orders"})["value"], 150 + 60);
  EXPECT_EQ(CtlJson({"events", "orders", "--count"})["markers"], 6);
}

// Proves text output is unchanged by the new flags' existence and carries
// the readable flags and pending_operands lines.
TEST_F(CounterctlJson, DescribeTextFlagsAndPendingOperands) {
  WriteAndClose();
  std::unique_ptr<Db> reader = OpenReader();
  ASSERT_NE(reader, nullptr);
  Result<uint64_t> pending = tally::PendingOperands(*reader, "alpha");
  ASSERT_OK(pending);
  const std::string out = CtlOk({"describe", "alpha"});
  EXPECT_NE(out.find("\nflags: 1 (plain increments)\nmarkers: 0\n"
                     "pending_operands: " +
                     std::to_string(*pending) + "\n"),
            std::string::npos)
      << out;
  EXPECT_NE(CtlOk({"describe", "orders"}).find("\nflags: 0\nmarkers: 5\n"),
            std::string::npos);
}

// Proves errors under --json stay one text line on stderr with the usual
// exit code and leave stdout empty.
TEST_F(CounterctlJson, ErrorsStayTextOnStderr) {
  WriteAndClose();
  const std::vector<std::vector<std::string>> failing = {
      {"get", "nope", "--json"},
      {"describe", "nope", "--json"},
      {"shards", "nope", "--stats", "--json"},
      {"events", "nope", "--json"},
      {"events", "nope", "--count", "--json"},
      {"events", "orders", "--show", "e-9", "--json"},
  };
  for (const auto& args : failing) {
    ProcessResult r = Ctl(args);
    EXPECT_EQ(r.exit_code, 1) << Describe(args, r);
    EXPECT_EQ(r.out, "") << Describe(args, r);
    EXPECT_EQ(r.ErrLines(), 1u) << Describe(args, r);
    EXPECT_EQ(r.err.rfind("counterctl: ", 0), 0u) << Describe(args, r);
  }
  ProcessResult r = Ctl({"events", "orders", "--count", "--limit", "1",
                         "--json"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.ErrLines(), 1u) << r.err;
  // A missing database, with --json too.
  r = CtlRaw({"--db", tmp_.Sub("no-such-db"), "list", "--json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.ErrLines(), 1u) << r.err;
}

// Proves verify --json reports broken invariants in the document and still
// exits 3.
TEST_F(CounterctlJson, VerifyProblemsExitThree) {
  WriteAndClose();
  uint64_t id = 0;
  {
    std::unique_ptr<Db> reader = OpenReader();
    ASSERT_NE(reader, nullptr);
    id = OkValue(reader->DescribeCounter("orders")).id;
  }
  char shard_key[engine::kShardKeyBytes];
  engine::EncodeShardKey(id, 0, shard_key);
  {
    RawDb raw(db_);
    ASSERT_NE(raw.db(), nullptr);
    ASSERT_TRUE(raw.db()
                    ->Put(rocksdb::WriteOptions(), raw.family(engine::kShards),
                          rocksdb::Slice(shard_key, sizeof shard_key), "12345")
                    .ok());
  }
  json doc = CtlJson({"verify"}, /*exit_code=*/3);
  EXPECT_EQ(doc["ok"], false);
  ASSERT_TRUE(doc["problems"].is_array());
  ASSERT_GE(doc["problems"].size(), 1u);
  EXPECT_EQ(doc["problem_count"],
            doc["problems"].size() + doc["problems_dropped"].get<uint64_t>());
  const std::string hex =
      engine::HexKey(std::string_view(shard_key, sizeof shard_key));
  bool named = false;
  for (const json& p : doc["problems"]) {
    named = named || p.get<std::string>().find(hex) != std::string::npos;
  }
  EXPECT_TRUE(named) << doc;
}

}  // namespace
}  // namespace tally::test
