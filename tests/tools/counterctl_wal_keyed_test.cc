// counterctl wal dump of keyed counters, against the real binary: writes
// made through the tally API (keyed shard merges, once-increment markers,
// batches across keys, the roll-up's top list, DeleteKey's range deletes,
// a keyed counter's outbox entries) come back decoded with their key, in
// the text and the --json forms.

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "counterctl_fixture.h"
#include "tally/batch.h"
#include "tally/db.h"

namespace tally::test {
namespace {

using nlohmann::json;
using CounterctlWalKeyed = CounterctlTest;

// 2026-11-30T10:00:00Z.
constexpr int64_t kNow = 1796032800000;
const char* const kCreated = "2026-11-30T10:00:00.000Z";

// A fixed clock (times are in the dump) and no roll-up worker (its writes
// would land in the WAL at random moments).
Options Fixed(const Clock* clock) {
  Options o;
  o.clock = clock;
  o.rollup_interval_ms = 0;
  return o;
}

CounterSpec KeyedSpec() {
  CounterSpec spec;
  spec.keyed = true;
  spec.shards = 1;  // every write lands in shard 0: the dump is fixed
  return spec;
}

// The op lines of a text dump (the indented ones), without their indent.
std::vector<std::string> OpLines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("  ", 0) == 0) out.push_back(line.substr(2));
  }
  return out;
}

// Every op of a --json dump, in order.
std::vector<json> JsonOps(const std::string& text) {
  std::vector<json> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    json doc = json::parse(line, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(doc.is_discarded()) << line;
    if (doc.is_discarded()) continue;
    for (const json& op : doc["ops"]) out.push_back(op);
  }
  return out;
}

// The ops from the first line that starts with `first` on.
std::vector<std::string> From(const std::vector<std::string>& lines,
                              const std::string& first) {
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind(first, 0) == 0) {
      return std::vector<std::string>(lines.begin() + i, lines.end());
    }
  }
  ADD_FAILURE() << "no line starts with " << first;
  return {};
}

void WriteLikes(const std::string& path, const Clock* clock) {
  std::unique_ptr<Db> db = OpenOrDie(path, Fixed(clock));
  ASSERT_NE(db, nullptr);
  ASSERT_OK(db->CreateCounter("likes", KeyedSpec()));
  ASSERT_OK(db->Increment({"likes", "post-1"}, 2));
  ASSERT_OK(db->IncrementOnce({"likes", "post-2"}, "user-1", 1));
  ASSERT_OK(db->IncrementOnce({"likes", "post-2"}, "user-1", 1));  // dup
  Batch batch;
  batch.AddOnce({"likes", "post-1"}, "user-2", 1);
  batch.AddOnce({"likes", "post/3"}, "user-2", 1);
  std::vector<IncrementResult> results;
  ASSERT_OK(db->Apply(batch, &results));
  ASSERT_OK(db->RollupNow("likes"));
  ASSERT_OK(db->DeleteKey("likes", "post-1"));
}

TEST_F(CounterctlWalKeyed, TextDumpNamesEveryKey) {
  ManualClock clock(kNow);
  WriteLikes(db_, &clock);
  const std::string created(kCreated);
  const std::vector<std::string> ops =
      From(OpLines(CtlOk({"wal", "dump"})), "counter-meta put name=likes");
  // clang-format off
  const std::vector<std::string> want = {
      "counter-meta put name=likes id=1 shards=1 flags=0 keyed=1",
      "merge counter=likes key=post-1 shard=0 delta=+2",
      "counter-meta put name=likes id=1 shards=1 flags=1 keyed=1",
      "marker counter=likes key=post-2 event=user-1 shard=0 delta=1 "
      "created_at=" + created,
      "merge counter=likes key=post-2 shard=0 delta=+1",
      "marker counter=likes key=post-1 event=user-2 shard=0 delta=1 "
      "created_at=" + created,
      "marker counter=likes key=post/3 event=user-2 shard=0 delta=1 "
      "created_at=" + created,
      "merge counter=likes key=post-1 shard=0 delta=+1",
      "merge counter=likes key=post/3 shard=0 delta=+1",
      "rollup counter=likes value=5 as_of_seq=ROLLUP_SEQ as_of=" + created,
      "top counter=likes keys=3 total=5 listed=3 as_of_seq=ROLLUP_SEQ as_of=" +
          created,
      "delete-range family=shards counter=likes key=post-1",
      "delete-range family=events counter=likes key=post-1",
  };
  // clang-format on
  ASSERT_EQ(ops.size(), want.size()) << ::testing::PrintToString(ops);
  for (size_t i = 0; i < want.size(); ++i) {
    // The roll-up's sequence number is whatever the WAL numbered it.
    std::string line = ops[i];
    const size_t at = line.find("as_of_seq=");
    if (at != std::string::npos) {
      const size_t end = line.find(' ', at);
      line.replace(at + 10, end - at - 10, "ROLLUP_SEQ");
    }
    EXPECT_EQ(line, want[i]) << i;
  }
}

TEST_F(CounterctlWalKeyed, JsonDumpCarriesTheKeyField) {
  ManualClock clock(kNow);
  WriteLikes(db_, &clock);
  ProcessResult r = Ctl({"wal", "dump", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::vector<json> merges, markers, ranges, tops;
  for (const json& op : JsonOps(r.out)) {
    if (op["op"] == "merge") merges.push_back(op);
    if (op["op"] == "marker") markers.push_back(op);
    if (op["op"] == "delete-range") ranges.push_back(op);
    if (op["op"] == "top") tops.push_back(op);
  }
  ASSERT_EQ(merges.size(), 4u) << r.out;
  EXPECT_EQ(merges[0], (json{{"op", "merge"},
                             {"counter", "likes"},
                             {"counter_id", 1},
                             {"key", "post-1"},
                             {"shard", 0},
                             {"delta", 2}}));
  EXPECT_EQ(merges[3]["key"], "post/3");
  ASSERT_EQ(markers.size(), 3u) << r.out;
  EXPECT_EQ(markers[0]["key"], "post-2");
  EXPECT_EQ(markers[0]["event_id"], "user-1");
  EXPECT_EQ(markers[0]["counter"], "likes");
  ASSERT_EQ(tops.size(), 1u) << r.out;
  EXPECT_EQ(tops[0]["keys"], 3);
  EXPECT_EQ(tops[0]["total"], 5);
  EXPECT_EQ(tops[0]["listed"], 3);
  EXPECT_EQ(tops[0]["as_of_ms"], kNow);
  ASSERT_EQ(ranges.size(), 2u) << r.out;
  EXPECT_EQ(ranges[0], (json{{"op", "delete-range"},
                             {"family", "shards"},
                             {"counter", "likes"},
                             {"counter_id", 1},
                             {"key", "post-1"}}));
  EXPECT_EQ(ranges[1]["family"], "events");
  EXPECT_EQ(ranges[1]["key"], "post-1");
}

TEST_F(CounterctlWalKeyed, DeletedCounterAndOutboxEntriesShowTheirKeys) {
  // A keyed counter's whole-counter delete is the counter's range (no key);
  // once it is gone, its keys still print, by id. A keyed counter with an
  // outbox writes the key into each outbox entry.
  ManualClock clock(kNow);
  {
    std::unique_ptr<Db> db = OpenOrDie(db_, Fixed(&clock));
    ASSERT_NE(db, nullptr);
    ASSERT_OK(db->CreateCounter("gone", KeyedSpec()));
    ASSERT_OK(db->Increment({"gone", "k1"}, 1));
    ASSERT_OK(db->DeleteCounter("gone"));
    CounterSpec synced = KeyedSpec();
    synced.outbox = true;
    ASSERT_OK(db->CreateCounter("synced", synced));
    ASSERT_OK(db->IncrementOnce({"synced", "post-9"}, "user-1", 3));
  }
  const std::vector<std::string> ops = OpLines(CtlOk({"wal", "dump"}));
  const std::vector<std::string> gone = From(ops, "counter-meta put name=gone");
  ASSERT_GE(gone.size(), 7u);
  EXPECT_EQ(gone[0],
            "counter-meta put name=gone id=1 shards=1 flags=0 keyed=1");
  EXPECT_EQ(gone[1], "merge id=1 key=k1 shard=0 delta=+1");
  EXPECT_EQ(gone[3], "counter-meta delete name=gone");
  EXPECT_EQ(gone[4], "delete-range family=shards id=1");
  EXPECT_EQ(gone[5], "delete-range family=events id=1");
  EXPECT_EQ(gone[6], "delete-range family=rollups id=1");
  const std::vector<std::string> synced =
      From(ops, "counter-meta put name=synced");
  ASSERT_FALSE(synced.empty());
  EXPECT_EQ(synced[0],
            "counter-meta put name=synced id=2 shards=1 flags=0 outbox=1 "
            "keyed=1");
  bool entry = false;
  for (const std::string& line : synced) {
    if (line.rfind("outbox-entry ", 0) != 0) continue;
    entry = true;
    EXPECT_NE(line.find(" counter=synced key=post-9 event=user-1 delta=+3 "),
              std::string::npos)
        << line;
  }
  EXPECT_TRUE(entry) << ::testing::PrintToString(synced);
  bool json_entry = false;
  for (const json& op : JsonOps(CtlOk({"wal", "dump", "--json"}))) {
    if (op["op"] != "outbox-entry") continue;
    json_entry = true;
    EXPECT_EQ(op["key"], "post-9");
    EXPECT_EQ(op["counter"], "synced");
  }
  EXPECT_TRUE(json_entry);
}

}  // namespace
}  // namespace tally::test
