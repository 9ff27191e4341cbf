// counterctl's administration subcommands: shards --stats, compact and
// checkpoint, against databases written through the API.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
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

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string Fixed3(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

using CounterctlAdmin = CounterctlTest;

// Proves shards --stats keeps the INDEX COUNT lines and adds min, max, mean
// and max/mean computed from the shards the engine reported for each
// once-increment, in text and JSON.
TEST_F(CounterctlAdmin, ShardStats) {
  std::vector<int64_t> shards(5, 0);
  {
    std::unique_ptr<Db> db = OpenOrDie(db_);
    ASSERT_NE(db, nullptr);
    ASSERT_OK(db->CreateCounter("orders", {5}));
    for (int i = 0; i < 40; ++i) {
      const int64_t delta = 1 + (i * 7) % 13;
      Result<IncrementResult> r =
          db->IncrementOnce("orders", "o-" + std::to_string(i), delta);
      ASSERT_OK(r);
      shards[r->shard] += delta;
    }
  }
  int64_t sum = 0;
  for (int64_t c : shards) sum += c;
  const int64_t mn = *std::min_element(shards.begin(), shards.end());
  const int64_t mx = *std::max_element(shards.begin(), shards.end());
  const double mean = static_cast<double>(sum) / 5;
  ASSERT_NE(mn, mx) << "40 events should not spread perfectly evenly";

  const std::vector<std::string> lines =
      Lines(CtlOk({"shards", "orders", "--stats"}));
  ASSERT_EQ(lines.size(), 9u);
  EXPECT_EQ(CtlOk({"shards", "orders"}),
            lines[0] + "\n" + lines[1] + "\n" + lines[2] + "\n" + lines[3] +
                "\n" + lines[4] + "\n");
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(lines[i], std::to_string(i) + " " + std::to_string(shards[i]));
  }
  EXPECT_EQ(lines[5], "min: " + std::to_string(mn));
  EXPECT_EQ(lines[6], "max: " + std::to_string(mx));
  EXPECT_EQ(lines[7], "mean: " + Fixed3(mean));
  EXPECT_EQ(lines[8], "max/mean: " + Fixed3(mx / mean));

  json doc = CtlJson({"shards", "orders", "--stats"});
  EXPECT_EQ(doc["counts"], json(shards));
  EXPECT_EQ(doc["stats"]["min"], mn);
  EXPECT_EQ(doc["stats"]["max"], mx);
  EXPECT_DOUBLE_EQ(doc["stats"]["mean"].get<double>(), mean);
  EXPECT_DOUBLE_EQ(doc["stats"]["max_over_mean"].get<double>(), mx / mean);
}

// Proves max/mean is "n/a" (JSON null) when the mean is zero or negative,
// where a ratio would divide by zero or flip sign.
TEST_F(CounterctlAdmin, ShardStatsWithoutPositiveMean) {
  {
    std::unique_ptr<Db> db = OpenOrDie(db_);
    ASSERT_NE(db, nullptr);
    ASSERT_OK(db->CreateCounter("empty", {3}));
    ASSERT_OK(db->CreateCounter("refunds", {2}));
    ASSERT_OK(db->IncrementOnce("refunds", "r-1", -5));
    ASSERT_OK(db->IncrementOnce("refunds", "r-2", -6));
  }
  std::vector<std::string> lines = Lines(CtlOk({"shards", "empty", "--stats"}));
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_EQ(lines[3], "min: 0");
  EXPECT_EQ(lines[4], "max: 0");
  EXPECT_EQ(lines[5], "mean: 0.000");
  EXPECT_EQ(lines[6], "max/mean: n/a");
  json doc = CtlJson({"shards", "empty", "--stats"});
  EXPECT_EQ(doc["stats"]["mean"], 0.0);
  EXPECT_TRUE(doc["stats"]["max_over_mean"].is_null()) << doc;

  lines = Lines(CtlOk({"shards", "refunds", "--stats"}));
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[4], "mean: -5.500");
  EXPECT_EQ(lines[5], "max/mean: n/a");
  doc = CtlJson({"shards", "refunds", "--stats"});
  EXPECT_DOUBLE_EQ(doc["stats"]["mean"].get<double>(), -5.5);
  EXPECT_TRUE(doc["stats"]["max_over_mean"].is_null()) << doc;
}

// Proves compact folds every pending merge operand (describe reports 0
// afterwards, and more than 0 before) without changing any value, and is
// refused while another process holds the database.
TEST_F(CounterctlAdmin, CompactFoldsOperandsKeepsValues) {
  {
    Options options;
    options.max_pending_operands = 0;  // leave every operand unfolded
    std::unique_ptr<Db> db = OpenOrDie(db_, options);
    ASSERT_NE(db, nullptr);
    ASSERT_OK(db->CreateCounter("hot", {1}));
    ASSERT_OK(db->CreateCounter("orders", {4}));
    for (int i = 0; i < 200; ++i) {
      ASSERT_OK(db->Increment("hot", 3));
      ASSERT_OK(db->IncrementOnce("orders", "o-" + std::to_string(i), 2));
    }
  }
  const std::string hot_shards = CtlOk({"shards", "hot"});
  const std::string orders_shards = CtlOk({"shards", "orders"});
  const json before = CtlJson({"describe", "hot"});
  EXPECT_GT(before["pending_operands"].get<uint64_t>(), 0u) << before;
  EXPECT_GT(CtlJson({"describe", "orders"})["pending_operands"].get<uint64_t>(),
            0u);

  {
    std::unique_ptr<Db> holder = OpenOrDie(db_);
    ASSERT_NE(holder, nullptr);
    ProcessResult busy = Ctl({"compact"});
    EXPECT_EQ(busy.exit_code, 1) << busy.err;
    EXPECT_EQ(busy.out, "");
    EXPECT_EQ(busy.ErrLines(), 1u) << busy.err;
    EXPECT_NE(busy.err.find("Busy"), std::string::npos) << busy.err;
  }

  EXPECT_EQ(CtlOk({"compact"}), "compacted\n");
  EXPECT_EQ(CtlValue({"get", "hot"}), "600");
  EXPECT_EQ(CtlValue({"get", "orders"}), "400");
  EXPECT_EQ(CtlOk({"shards", "hot"}), hot_shards);
  EXPECT_EQ(CtlOk({"shards", "orders"}), orders_shards);
  EXPECT_EQ(CtlValue({"events", "orders", "--count"}), "200");
  EXPECT_EQ(CtlJson({"describe", "hot"})["pending_operands"], 0);
  EXPECT_EQ(CtlJson({"describe", "orders"})["pending_operands"], 0);
  const std::vector<std::string> describe = Lines(CtlOk({"describe", "hot"}));
  ASSERT_EQ(describe.size(), 16u);
  EXPECT_EQ(describe[8], "pending_operands: 0");
  EXPECT_EQ(CtlOk({"verify"}).rfind("ok: ", 0), 0u);
}

// Proves checkpoint writes a copy that opens as an ordinary database with
// the same counters, values, shards and markers, and refuses a target that
// already exists.
TEST_F(CounterctlAdmin, CheckpointCopiesEverything) {
  {
    std::unique_ptr<Db> db = OpenOrDie(db_);
    ASSERT_NE(db, nullptr);
    ASSERT_OK(db->CreateCounter("orders", {4}));
    ASSERT_OK(db->CreateCounter("hot", {2}));
    for (int i = 0; i < 50; ++i) {
      ASSERT_OK(db->IncrementOnce("orders", "o-" + std::to_string(i), i));
      ASSERT_OK(db->Increment("hot", 1));
    }
  }
  const std::string copy = tmp_.Sub("copy");
  EXPECT_EQ(CtlOk({"checkpoint", copy}), "checkpoint written to " + copy + "\n");
  auto OnCopy = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {"--db", copy};
    argv.insert(argv.end(), args.begin(), args.end());
    ProcessResult r = CtlRaw(argv);
    EXPECT_EQ(r.exit_code, 0) << Describe(argv, r);
    return r.out;
  };
  for (const char* name : {"orders", "hot"}) {
    EXPECT_EQ(OnCopy({"get", name}), CtlOk({"get", name}));
    EXPECT_EQ(OnCopy({"shards", name}), CtlOk({"shards", name}));
    EXPECT_EQ(OnCopy({"events", name, "--limit", "1000"}),
              CtlOk({"events", name, "--limit", "1000"}));
  }
  EXPECT_EQ(OnCopy({"get", "orders"}), "1225\n");
  EXPECT_EQ(OnCopy({"list"}), CtlOk({"list"}));
  EXPECT_EQ(OnCopy({"verify"}).rfind("ok: ", 0), 0u);
  // The copy is an ordinary, writable database of its own.
  EXPECT_EQ(OnCopy({"incr", "hot"}).rfind("applied", 0), 0u);
  EXPECT_EQ(OnCopy({"get", "hot"}), "51\n");
  EXPECT_EQ(CtlOk({"get", "hot"}), "50\n");

  ProcessResult again = Ctl({"checkpoint", copy});
  EXPECT_EQ(again.exit_code, 1) << again.err;
  EXPECT_EQ(again.out, "");
  EXPECT_EQ(again.ErrLines(), 1u) << again.err;
  EXPECT_NE(again.err.find(copy), std::string::npos) << again.err;
}

// Proves checkpoint works while this process holds the database for writing
// (it opens read-only): the copy holds what the holder had committed, also
// the writes still only in its WAL, and nothing the holder wrote later.
TEST_F(CounterctlAdmin, CheckpointWhileHeld) {
  std::unique_ptr<Db> holder = OpenOrDie(db_);
  ASSERT_NE(holder, nullptr);
  ASSERT_OK(holder->CreateCounter("orders", {4}));
  for (int i = 0; i < 30; ++i) {
    ASSERT_OK(holder->IncrementOnce("orders", "o-" + std::to_string(i), 2));
  }
  const std::string copy = tmp_.Sub("copy");
  EXPECT_EQ(CtlOk({"checkpoint", copy}), "checkpoint written to " + copy + "\n");
  ASSERT_OK(holder->IncrementOnce("orders", "late", 1000));  // not in the copy
  ASSERT_OK(holder->CreateCounter("later", {1}));
  auto OnCopy = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {"--db", copy};
    argv.insert(argv.end(), args.begin(), args.end());
    ProcessResult r = CtlRaw(argv);
    EXPECT_EQ(r.exit_code, 0) << Describe(argv, r);
    return r.out;
  };
  EXPECT_EQ(OnCopy({"get", "orders"}), "60\n");
  EXPECT_EQ(OnCopy({"events", "orders", "--count"}), "30\n");
  EXPECT_EQ(OnCopy({"list"}), "orders shards=4\n");
  EXPECT_EQ(OnCopy({"verify"}).rfind("ok: ", 0), 0u);
  // The holder is untouched and still the writer.
  EXPECT_EQ(OkValue(holder->ReadExact("orders")), 1060);
  EXPECT_EQ(CtlOk({"get", "orders"}), "1060\n");
}

}  // namespace
}  // namespace tally::test
