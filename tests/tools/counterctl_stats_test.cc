// counterctl stats: the DbStats figures and per-counter pending operands,
// text and --json, read-only.

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "counterctl_fixture.h"
#include "tally/db.h"

namespace tally::test {
namespace {

using nlohmann::json;
using CounterctlStats = CounterctlTest;

// Proves stats --json parses back with every documented key, shows the
// events family holding data after once-increments, and gives a number of
// pending operands per counter; the text form has the same stable names.
TEST_F(CounterctlStats, JsonAndTextAfterOnceIncrements) {
  {
    std::unique_ptr<Db> db = OpenOrDie(db_);
    ASSERT_NE(db, nullptr);
    ASSERT_OK(db->CreateCounter("orders", {4}));
    ASSERT_OK(db->CreateCounter("views", {2}));
    for (int i = 0; i < 50; ++i) {
      ASSERT_OK(db->IncrementOnce("orders", "o-" + std::to_string(i), 2));
    }
  }
  json doc = CtlJson({"stats"});
  for (const char* family : {"meta", "shards", "events"}) {
    for (const char* key :
         {"sst_bytes", "memtable_bytes", "estimated_keys", "l0_files"}) {
      EXPECT_TRUE(doc[family][key].is_number_unsigned()) << family << key;
    }
  }
  EXPECT_GT(doc["events"]["estimated_keys"].get<uint64_t>(), 0u);
  EXPECT_GT(doc["events"]["sst_bytes"].get<uint64_t>() +
                doc["events"]["memtable_bytes"].get<uint64_t>(),
            0u);
  // The writer's last figures, published at its close.
  EXPECT_EQ(doc["engine"]["source"], "writer");
  EXPECT_EQ(doc["engine"]["writer_state"], "closed");
  EXPECT_EQ(doc["engine"]["applied"], 50);
  for (const char* key : {"duplicates", "conflicts", "rejected"}) {
    EXPECT_EQ(doc["engine"][key], 0) << key;
  }
  EXPECT_TRUE(doc["block_cache_capacity_bytes"].is_number_unsigned());
  EXPECT_TRUE(doc["block_cache_usage_bytes"].is_number_unsigned());
  EXPECT_EQ(doc["writes_stopped"], false);
  EXPECT_EQ(doc["background_errors"], 0);
  EXPECT_EQ(doc["latched_error"], "");
  ASSERT_EQ(doc["counters"].size(), 2u);
  EXPECT_EQ(doc["counters"][0]["name"], "orders");
  EXPECT_EQ(doc["counters"][1]["name"], "views");
  for (const json& c : doc["counters"]) {
    EXPECT_TRUE(c["pending_operands"].is_number_unsigned()) << c.dump();
  }

  ProcessResult r = Ctl({"stats"});
  ASSERT_EQ(r.exit_code, 0) << Describe({"stats"}, r);
  EXPECT_EQ(r.err, "");
  for (const char* line :
       {"engine.applied: 50\n", "events.estimated_keys: ",
        "block_cache_capacity_bytes: ", "writes_stopped: false\n",
        "latched_error: none\n", "counter.orders.pending_operands: ",
        "counter.views.pending_operands: "}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  }
}

// Proves stats on a missing database fails with exit 1 and one line,
// creating nothing.
TEST_F(CounterctlStats, MissingDatabaseFails) {
  ProcessResult r = Ctl({"stats"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("counterctl: ", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists(db_));
}

}  // namespace
}  // namespace tally::test
