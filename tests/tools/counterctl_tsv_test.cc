// counterctl --format tsv (issue 18): list, shards, events and keys print a
// header and one tab-separated line per row holding what --json holds, with
// backslash, tab, newline and carriage return escaped; a cut list says so
// on stderr, never in the rows.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "counterctl_fixture.h"
#include "json_output.h"

namespace tally::test {
namespace {

using Rows = std::vector<std::vector<std::string>>;

Rows ParseTsv(const std::string& text) {
  Rows rows;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> fields;
    size_t start = 0;
    for (;;) {
      const size_t tab = line.find('\t', start);
      fields.push_back(line.substr(start, tab - start));
      if (tab == std::string::npos) break;
      start = tab + 1;
    }
    rows.push_back(fields);
  }
  return rows;
}

// The TSV field a JSON value becomes (null empty, strings escaped).
std::string Field(const nlohmann::json& v) { return counterctl::TsvField(v); }

class CounterctlTsv : public CounterctlTest {
 protected:
  void SetUp() override {
    CtlOk({"create", "orders", "--shards", "3"});
    CtlOk({"create", "likes", "--shards", "2", "--keyed"});
    CtlOk({"create", "stock", "--shards", "1", "--min", "0", "--max", "9"});
    CtlOk({"incr", "orders", "--by", "5", "--event-id", "e1"});
    CtlOk({"incr", "orders", "--by", "2", "--event-id", "e2"});
    CtlOk({"incr", "likes", "--key", "a\\b", "--by", "4"});
    CtlOk({"incr", "likes", "--key", "post 1", "--event-id", "u1"});
  }

  // Runs with --format tsv: exit 0, nothing on stderr; the rows.
  Rows Tsv(std::vector<std::string> args) {
    args.insert(args.end(), {"--format", "tsv"});
    const ProcessResult r = Ctl(args);
    EXPECT_EQ(r.exit_code, 0) << Describe(args, r);
    EXPECT_EQ(r.err, "") << Describe(args, r);
    return ParseTsv(r.out);
  }
};

TEST_F(CounterctlTsv, ListHoldsWhatJsonHolds) {
  const Rows rows = Tsv({"list"});
  const nlohmann::json doc = CtlJson({"list"});
  ASSERT_EQ(rows.size(), 1 + doc["counters"].size());
  const std::vector<std::string>& header = rows[0];
  EXPECT_EQ(header[0], "name");
  for (size_t i = 0; i < doc["counters"].size(); ++i) {
    const nlohmann::json& c = doc["counters"][i];
    ASSERT_EQ(rows[1 + i].size(), header.size());
    for (size_t col = 0; col < header.size(); ++col) {
      ASSERT_TRUE(c.contains(header[col])) << header[col];
      EXPECT_EQ(rows[1 + i][col], Field(c[header[col]]))
          << c["name"] << " " << header[col];
    }
  }
  // A strict counter's bounds are numbers; a plain one's empty (null).
  EXPECT_EQ(rows[3][0], "stock");
  EXPECT_EQ(rows[3][8], "0");
  EXPECT_EQ(rows[3][9], "9");
  EXPECT_EQ(rows[2][8], "");
}

TEST_F(CounterctlTsv, ShardsEventsAndKeysHoldWhatJsonHolds) {
  const Rows shards = Tsv({"shards", "orders"});
  const nlohmann::json counts = CtlJson({"shards", "orders"})["counts"];
  ASSERT_EQ(shards.size(), 1 + counts.size());
  EXPECT_EQ(shards[0], (std::vector<std::string>{"shard", "value"}));
  for (size_t i = 0; i < counts.size(); ++i) {
    EXPECT_EQ(shards[1 + i],
              (std::vector<std::string>{std::to_string(i),
                                        std::to_string(counts[i].get<int64_t>())}));
  }

  const Rows events = Tsv({"events", "orders"});
  const nlohmann::json markers = CtlJson({"events", "orders"})["events"];
  ASSERT_EQ(events.size(), 3u);
  ASSERT_EQ(markers.size(), 2u);
  for (size_t i = 0; i < markers.size(); ++i) {
    for (size_t col = 0; col < events[0].size(); ++col) {
      const std::string& name = events[0][col];
      EXPECT_EQ(events[1 + i][col],
                markers[i].contains(name) ? Field(markers[i][name]) : "")
          << name;
    }
  }
  EXPECT_EQ(events[1][0], "e1");
  EXPECT_EQ(events[1][3], "5");

  // A backslash in a key is escaped, so every row stays one line.
  const Rows keys = Tsv({"keys", "likes"});
  EXPECT_EQ(keys, (Rows{{"key", "value"}, {"a\\\\b", "4"}, {"post 1", "1"}}));
}

TEST_F(CounterctlTsv, EscapesEveryByteThatWouldBreakARow) {
  EXPECT_EQ(counterctl::TsvField("a\tb\nc\rd\\e"), "a\\tb\\nc\\rd\\\\e");
  EXPECT_EQ(counterctl::TsvField(nullptr), "");
  EXPECT_EQ(counterctl::TsvField(true), "true");
  EXPECT_EQ(counterctl::TsvField(-12), "-12");
}

TEST_F(CounterctlTsv, ACutListSaysSoOnStderrOnly) {
  const ProcessResult keys =
      Ctl({"keys", "likes", "--limit", "1", "--format", "tsv"});
  EXPECT_EQ(keys.exit_code, 0);
  EXPECT_EQ(keys.out, "key\tvalue\na\\\\b\t4\n");
  EXPECT_EQ(keys.err,
            "counterctl: note: the page stopped at --limit 1; more keys "
            "follow (--start-after a\\b)\n");
  const ProcessResult events =
      Ctl({"events", "orders", "--limit", "1", "--format", "tsv"});
  EXPECT_EQ(events.exit_code, 0);
  EXPECT_EQ(ParseTsv(events.out).size(), 2u);
  EXPECT_EQ(events.err, "counterctl: note: the list stopped at --limit 1\n");
}

}  // namespace
}  // namespace tally::test
