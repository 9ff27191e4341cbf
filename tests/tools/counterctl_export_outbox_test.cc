// counterctl export/import of an outbox counter: the entries not yet synced
// travel with their identity, so the imported copy ships them to the hub,
// and a hub that also gets them from the original counts them once.

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "counterctl_fixture.h"
#include "tally/db.h"
#include "tally/outbox.h"
#include "tally/sync.h"

namespace tally::test {
namespace {

using nlohmann::json;

class CounterctlExportOutbox : public CounterctlTest {
 protected:
  // The export's records of one type.
  static std::vector<json> Records(const std::string& file,
                                   const std::string& type) {
    std::ifstream in(file);
    std::string line;
    std::vector<json> out;
    while (std::getline(in, line)) {
      json rec = json::parse(line);
      if (rec.contains("type") && rec["type"] == type) out.push_back(rec);
    }
    return out;
  }
};

TEST_F(CounterctlExportOutbox, Item03_UnsyncedEntriesReachTheHubFromTheCopy) {
  const std::string hub_path = tmp_.Sub("hub");
  {
    std::unique_ptr<Db> edge = OpenOrDie(db_);
    std::unique_ptr<Db> hub = OpenOrDie(hub_path);
    ASSERT_OK(edge->CreateCounter("orders", test::OutboxSpec(4)));
    ASSERT_OK(edge->CreateCounter("plain", {2}));  // no outbox
    ASSERT_OK(hub->CreateCounter("orders", {8}));
    for (int i = 0; i < 5; ++i) ASSERT_OK(edge->Increment("orders", 1));
    SyncReport report;
    ASSERT_OK(SyncOutbox(edge.get(), hub.get(), SyncOptions(), &report));
    ASSERT_EQ(report.applied, 5u);
    // Not synced: a plain increment, once-increments, a batch.
    ASSERT_OK(edge->Increment("orders", 10));
    ASSERT_OK(edge->IncrementOnce("orders", "o-1", 100));
    ASSERT_OK(edge->IncrementOnce("orders", "o-2", 200));
    Batch b;
    b.Add("orders", 1000);
    b.AddOnce("orders", "o-3", 2000);
    b.Add("plain", 7);
    std::vector<IncrementResult> results;
    ASSERT_OK(edge->Apply(b, &results));
  }
  const std::string file = tmp_.Sub("edge.jsonl");
  json summary = CtlJson({"export", file});
  EXPECT_EQ(summary["outbox"], 5);
  const std::vector<json> outbox = Records(file, "outbox");
  ASSERT_EQ(outbox.size(), 5u);
  EXPECT_EQ(outbox[1]["event_id"], "o-1");
  EXPECT_FALSE(outbox[0].contains("event_id"));
  EXPECT_EQ(outbox[0]["delta"], 10);
  EXPECT_EQ(outbox[0]["origin"].get<std::string>().size(), 32u);
  EXPECT_EQ(outbox[0]["origin_seq"], 6);  // 1..5 were synced

  const std::string copy = tmp_.Sub("copy");
  ProcessResult imported = CtlOn(copy, {"import", file});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_NE(imported.out.find(", 5 outbox entries; skipped 0"),
            std::string::npos)
      << imported.out;
  EXPECT_EQ(CtlOnOk(copy, {"get", "orders"}), CtlOk({"get", "orders"}));

  // The copy ships what the original had not: the hub then holds exactly
  // the edge's total.
  std::unique_ptr<Db> edge = OpenOrDie(db_);
  std::unique_ptr<Db> moved = OpenOrDie(copy);
  std::unique_ptr<Db> hub = OpenOrDie(hub_path);
  EXPECT_EQ(OkValue(tally::GetOutboxStatus(*moved)).entries, 5u);
  SyncReport report;
  ASSERT_OK(SyncOutbox(moved.get(), hub.get(), SyncOptions(), &report));
  EXPECT_EQ(report.applied, 5u);
  EXPECT_EQ(report.duplicates, 0u);
  EXPECT_EQ(OkValue(hub->ReadExact("orders")),
            OkValue(edge->ReadExact("orders")));
  EXPECT_EQ(OkValue(hub->ReadExact("orders")),
            OkValue(moved->ReadExact("orders")));
  EXPECT_EQ(OkValue(tally::GetOutboxStatus(*moved)).entries, 0u);
  // The original syncing the same entries later: duplicates, counted once.
  ASSERT_OK(SyncOutbox(edge.get(), hub.get(), SyncOptions(), &report));
  EXPECT_EQ(report.duplicates, 5u);
  EXPECT_EQ(report.applied, 0u);
  EXPECT_EQ(OkValue(hub->ReadExact("orders")), 5 + 10 + 300 + 3000);
  // What the copy counts next is its own, never a duplicate.
  ASSERT_OK(moved->Increment("orders", 1));
  ASSERT_OK(SyncOutbox(moved.get(), hub.get(), SyncOptions(), &report));
  EXPECT_EQ(report.applied, 1u);
  EXPECT_EQ(OkValue(hub->ReadExact("orders")), 5 + 10 + 300 + 3000 + 1);
}

TEST_F(CounterctlExportOutbox, Item03_AnEntryThatCannotBeCarriedIsRefused) {
  const std::string origin(32, 'a');
  const std::string header =
      "{\"tally_export\":1}\n"
      "{\"type\":\"counter\",\"name\":\"quiet\",\"shards\":1,\"policy\":"
      "\"random\",\"created_at_ms\":1,\"flags\":1}\n"
      "{\"type\":\"counter\",\"name\":\"orders\",\"shards\":1,\"policy\":"
      "\"random\",\"created_at_ms\":1,\"flags\":1,\"outbox\":true}\n"
      "{\"type\":\"shard\",\"counter\":\"orders\",\"shard\":0,\"value\":3}\n";
  // An entry of a counter without an outbox: the line is named, nothing
  // is written.
  const std::string no_outbox =
      WriteFile("no-outbox.jsonl",
                header +
                    "{\"type\":\"outbox\",\"counter\":\"quiet\",\"delta\":3,"
                    "\"time_ms\":5,\"origin\":\"" +
                    origin + "\",\"origin_seq\":1}\n");
  ProcessResult r = CtlOn(tmp_.Sub("a"), {"import", no_outbox});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("line 5: counter \"quiet\" has no outbox"),
            std::string::npos)
      << r.err;
  // The same identity twice.
  const std::string entry =
      "{\"type\":\"outbox\",\"counter\":\"orders\","
      "\"delta\":3,\"time_ms\":5,\"origin\":\"" +
      origin + "\",\"origin_seq\":1}\n";
  r = CtlOn(tmp_.Sub("b"),
            {"import", WriteFile("twice.jsonl", header + entry + entry)});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("line 6: outbox entry " + origin + "/1 appears twice"),
            std::string::npos)
      << r.err;
  // An origin that is not an identity: the engine refuses, the counter is
  // not left behind half imported.
  const std::string bad =
      WriteFile("bad-origin.jsonl",
                header +
                    "{\"type\":\"outbox\",\"counter\":\"orders\",\"delta\":3,"
                    "\"time_ms\":5,\"origin\":\"edge-1\",\"origin_seq\":1}\n");
  r = CtlOn(tmp_.Sub("c"), {"import", bad});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("counter \"orders\" not imported"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("32 lowercase hex"), std::string::npos) << r.err;
  EXPECT_NE(CtlOn(tmp_.Sub("c"), {"get", "orders"}).exit_code, 0);
}

}  // namespace
}  // namespace tally::test
