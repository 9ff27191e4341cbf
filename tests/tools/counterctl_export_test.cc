// counterctl export/import: a database written through the API survives an
// export and an import into an empty directory exactly, and import refuses
// what it must.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "counterctl_fixture.h"
#include "tally/db.h"

namespace tally::test {
namespace {

using nlohmann::json;

class CounterctlExport : public CounterctlTest {
 protected:
  // Several counters: once-only, mixed once and plain, affinity, one shard,
  // one with no data at all, and one with more markers than one import
  // batch (10,000).
  void Populate() {
    std::unique_ptr<Db> db = OpenOrDie(db_);
    ASSERT_NE(db, nullptr);
    ASSERT_OK(db->CreateCounter("orders", {5}));
    ASSERT_OK(db->CreateCounter("mixed", {3}));
    ASSERT_OK(db->CreateCounter("devices", {7, ShardPolicy::kAffinity}));
    ASSERT_OK(db->CreateCounter("single", {1}));
    ASSERT_OK(db->CreateCounter("empty", {16}));
    ASSERT_OK(db->CreateCounter("bulk", {4}));
    for (int i = 0; i < 60; ++i) {
      ASSERT_OK(db->IncrementOnce("orders", "o-" + std::to_string(i), i % 9 - 3));
      ASSERT_OK(db->IncrementOnce("mixed", "m-" + std::to_string(i), 2));
    }
    for (int i = 0; i < 10; ++i) ASSERT_OK(db->Increment("mixed", 5));
    IncrementOptions dev;
    dev.affinity_key = "device-1";
    ASSERT_OK(db->Increment("devices", 11, dev));
    dev.affinity_key = "device-2";
    ASSERT_OK(db->Increment("devices", -4, dev));
    ASSERT_OK(db->IncrementOnce("devices", "d-1", 3));
    ASSERT_OK(db->IncrementOnce("single", "s-1", 1000000000000LL));
    Batch batch;
    for (int i = 0; i < 10050; ++i) {
      batch.AddOnce("bulk", "b-" + std::to_string(i), 1);
    }
    std::vector<IncrementResult> results;
    ASSERT_OK(db->Apply(batch, &results));
  }
  static std::vector<std::string> Names() {
    return {"bulk", "devices", "empty", "mixed", "orders", "single"};
  }
};

// Proves the done-means: after export and import into an empty
// directory every counter has the same get, shards and events --count,
// describe settings match, verify passes on the copy and a redelivered
// event is a duplicate there (and, stderr not being a terminal, neither
// command draws a progress line).
TEST_F(CounterctlExport, RoundTripIsExact) {
  Populate();
  const std::string file = tmp_.Sub("dump.jsonl");
  json summary = CtlJson({"export", file});
  EXPECT_EQ(summary["counters"], 6);
  EXPECT_EQ(summary["markers"], 10172);
  EXPECT_EQ(CtlOk({"export", file}),
            "exported 6 counters, " + summary["shards"].dump() +
                " shard values, 10172 markers to " + file + "\n");
  // stderr is not a terminal here: no progress line, nothing at all.
  EXPECT_EQ(Ctl({"export", file}).err, "");
  const std::string copy = tmp_.Sub("copy");
  ProcessResult imported = CtlOn(copy, {"import", file});
  EXPECT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_EQ(imported.err, "");
  const std::string out = imported.out;
  EXPECT_NE(out.find("imported 6 counters"), std::string::npos) << out;
  EXPECT_NE(out.find("10172 markers; skipped 0"), std::string::npos) << out;

  for (const std::string& name : Names()) {
    EXPECT_EQ(CtlOk({"get", name}), CtlOnOk(copy, {"get", name})) << name;
    EXPECT_EQ(CtlOk({"shards", name}), CtlOnOk(copy, {"shards", name}))
        << name;
    EXPECT_EQ(CtlOk({"events", name, "--count"}),
              CtlOnOk(copy, {"events", name, "--count"}))
        << name;
    json a = CtlJson({"describe", name});
    ProcessResult rb = CtlOn(copy, {"describe", name, "--json"});
    json b = json::parse(rb.out);
    for (const char* key :
         {"shards", "policy", "created_at_ms", "flags", "plain_increments"}) {
      EXPECT_EQ(a[key], b[key]) << name << " " << key;
    }
  }
  EXPECT_EQ(CtlOnOk(copy, {"verify"}).rfind("ok: counters=6", 0), 0u);
  EXPECT_EQ(CtlOnOk(copy, {"events", "orders", "--show", "o-7"}),
            CtlOk({"events", "orders", "--show", "o-7"}));
  // o-7 was counted with delta 7 % 9 - 3 = 4.
  ProcessResult again =
      CtlOn(copy, {"incr", "orders", "--event-id", "o-7", "--by", "4"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out.rfind("duplicate", 0), 0u) << again.out;
  // The export of the copy is the export of the original.
  const std::string file2 = tmp_.Sub("dump2.jsonl");
  CtlOnOk(copy, {"export", file2});
  std::ifstream f1(file), f2(file2);
  std::stringstream s1, s2;
  s1 << f1.rdbuf();
  s2 << f2.rdbuf();
  EXPECT_EQ(s1.str(), s2.str());
}

// Proves export - writes the JSON Lines to stdout (nothing on stderr),
// header first, then records with their keys in the documented order.
TEST_F(CounterctlExport, StdoutFormat) {
  {
    std::unique_ptr<Db> db = OpenOrDie(db_);
    ASSERT_NE(db, nullptr);
    ASSERT_OK(db->CreateCounter("a", {2}));
    ASSERT_OK(db->IncrementOnce("a", "e1", 4));
  }
  ProcessResult r = Ctl({"export", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::istringstream in(r.out);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_EQ(lines[0], "{\"tally_export\":1}");
  EXPECT_EQ(lines[1].rfind("{\"type\":\"counter\",\"name\":\"a\",\"shards\":2,"
                           "\"policy\":\"random\",\"created_at_ms\":",
                           0),
            0u)
      << lines[1];
  EXPECT_EQ(lines[2].rfind("{\"type\":\"shard\",\"counter\":\"a\",\"shard\":", 0), 0u);
  EXPECT_EQ(lines[3].rfind("{\"type\":\"marker\",\"counter\":\"a\",\"event_id\":\"e1\",", 0), 0u);
}

// Proves import into a database that holds a counter is refused with exit
// 1 and one line, changing nothing; --merge skip-existing then imports only
// the missing counters and names the skipped ones.
TEST_F(CounterctlExport, NonEmptyTargetRefusedUnlessSkipExisting) {
  Populate();
  const std::string file = tmp_.Sub("dump.jsonl");
  CtlOk({"export", file});
  const std::string copy = tmp_.Sub("copy");
  CtlOnOk(copy, {"create", "orders", "--shards", "2"});
  ProcessResult r = CtlOn(copy, {"import", file});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  EXPECT_NE(r.err.find("already holds 1 counters"), std::string::npos) << r.err;
  EXPECT_EQ(CtlOnOk(copy, {"list"}).find("mixed"), std::string::npos);

  const std::string out =
      CtlOnOk(copy, {"import", file, "--merge", "skip-existing"});
  EXPECT_NE(out.find("skipped orders (exists)\n"), std::string::npos) << out;
  EXPECT_NE(out.find("imported 5 counters"), std::string::npos) << out;
  EXPECT_EQ(CtlOnOk(copy, {"get", "orders"}), "0\n");
  EXPECT_EQ(CtlOnOk(copy, {"get", "mixed"}), CtlOk({"get", "mixed"}));
  EXPECT_EQ(CtlOnOk(copy, {"verify"}).rfind("ok:", 0), 0u);
}

// Proves a malformed line is reported with its number (exit 1, one line on
// stderr) and, since the file is validated before anything is written, no
// database is created.
TEST_F(CounterctlExport, MalformedLineNamedAndNothingWritten) {
  const std::string header = "{\"tally_export\":1}\n";
  const std::string counter =
      "{\"type\":\"counter\",\"name\":\"a\",\"shards\":2,\"policy\":"
      "\"random\",\"created_at_ms\":1,\"flags\":0}\n";
  struct Case {
    std::string text;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"", "line 1: empty input"},
      {"{\"tally_export\":2}\n", "line 1: expected the header"},
      {header + counter + "{not json\n", "line 3: not a JSON object"},
      {header + counter + "\n", "line 3: not a JSON object"},
      {header + "{\"type\":\"shard\",\"counter\":\"a\",\"shard\":0,\"value\":1}\n",
       "line 2: counter \"a\" has no counter record before this line"},
      {header + counter +
           "{\"type\":\"shard\",\"counter\":\"a\",\"shard\":2,\"value\":1}\n",
       "line 3: \"shard\" 2 >= shards 2"},
      {header + counter +
           "{\"type\":\"shard\",\"counter\":\"a\",\"shard\":0,\"value\":1.5}\n",
       "line 3: \"value\" must be an integer"},
      {header + counter + counter, "line 3: counter \"a\" appears twice"},
      {header + counter +
           "{\"type\":\"marker\",\"counter\":\"a\",\"event_id\":\"e\","
           "\"shard\":0,\"delta\":1,\"created_at_ms\":1,\"x\":1}\n",
       "line 3: unknown key \"x\""},
      {header + "{\"type\":\"counter\",\"name\":\"a\",\"shards\":2,"
                "\"policy\":\"hash\",\"created_at_ms\":1,\"flags\":0}\n",
       "line 2: \"policy\" must be random or affinity"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string file =
        WriteFile("bad" + std::to_string(i) + ".jsonl", cases[i].text);
    ProcessResult r = Ctl({"import", file});
    EXPECT_EQ(r.exit_code, 1) << i;
    EXPECT_EQ(r.out, "") << i;
    EXPECT_EQ(r.err.rfind("counterctl: " + cases[i].message, 0), 0u)
        << i << ": " << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << i << ": " << r.err;
    EXPECT_FALSE(std::filesystem::exists(db_)) << i;
  }
}

// Item 6: `import` killed at any write (every WAL append from the Nth on
// fails: what a SIGKILL there leaves), then the documented rerun
// `import --merge skip-existing`: it exits 0 and the copy's export equals
// the original's (every count and every marker), and a redelivered event
// is a duplicate that leaves the count alone.
TEST_F(CounterctlExport, Item06_RerunSkipExistingAfterKilledImport) {
  Populate();
  const std::string file = tmp_.Sub("dump.jsonl");
  CtlOk({"export", file});
  std::ifstream original(file);
  std::stringstream want;
  want << original.rdbuf();
  bool completed = false;
  int partial = 0;
  for (int cut = 0; !completed && cut < 400; cut += 3) {
    SCOPED_TRACE("cut after " + std::to_string(cut) + " WAL appends");
    const std::string copy = tmp_.Sub("copy-" + std::to_string(cut));
    {
      std::unique_ptr<Db> src;
      Options ro;
      ro.read_only = true;
      ASSERT_OK(Db::Open(ro, db_, &src));
      completed = ImportCutAfter(src.get(), copy, cut);
    }
    if (!completed) ++partial;
    ProcessResult rerun =
        CtlOn(copy, {"import", file, "--merge", "skip-existing"});
    EXPECT_EQ(rerun.exit_code, 0) << rerun.err;
    const std::string file2 =
        tmp_.Sub("copy-" + std::to_string(cut) + ".jsonl");
    CtlOnOk(copy, {"export", file2});
    std::ifstream copied(file2);
    std::stringstream got;
    got << copied.rdbuf();
    EXPECT_EQ(got.str(), want.str());
    const std::string before = CtlOnOk(copy, {"get", "orders"});
    ProcessResult again =
        CtlOn(copy, {"incr", "orders", "--event-id", "o-7", "--by", "4"});
    EXPECT_EQ(again.out.rfind("duplicate", 0), 0u) << again.out;
    EXPECT_EQ(CtlOnOk(copy, {"get", "orders"}), before);
    EXPECT_EQ(before, CtlOk({"get", "orders"}));
  }
  EXPECT_TRUE(completed);
  EXPECT_GT(partial, 1);
}

}  // namespace
}  // namespace tally::test
