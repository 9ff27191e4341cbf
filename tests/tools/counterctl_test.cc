// counterctl's subcommands, run as a separate process: output formats, exit
// codes and the one-line error rule.

#include <gtest/gtest.h>

#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "counterctl_fixture.h"
#include "tally/db.h"
#include "tally/limits.h"

namespace tally::test {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Expects a usage error: exit 2, nothing on stdout, one "counterctl: " line
// on stderr that contains `mention`.
void ExpectUsageError(const ProcessResult& r, const std::string& mention) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.ErrLines(), 1u) << r.err;
  EXPECT_EQ(r.err.rfind("counterctl: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(mention), std::string::npos)
      << "stderr should mention '" << mention << "': " << r.err;
}

using CounterctlCli = CounterctlTest;

// Proves every read and write subcommand works end to end through the binary
// and that their outputs agree with each other.
TEST_F(CounterctlCli, RoundTrip) {
  EXPECT_EQ(CtlOk({"create", "orders", "--shards", "4"}),
            "created orders (4 shards)\n");
  EXPECT_EQ(CtlOk({"create", "alpha", "--shards", "1", "--policy", "affinity"}),
            "created alpha (1 shards)\n");
  EXPECT_EQ(CtlOk({"list"}), "alpha shards=1\norders shards=4\n");

  const std::vector<std::string> describe =
      Lines(CtlOk({"describe", "orders"}));
  ASSERT_EQ(describe.size(), 16u);
  EXPECT_EQ(describe[0], "name: orders");
  EXPECT_TRUE(std::regex_match(describe[1], std::regex("id: [0-9]+")))
      << describe[1];
  EXPECT_EQ(describe[2], "shards: 4");
  EXPECT_EQ(describe[3], "policy: random");
  EXPECT_TRUE(
      std::regex_match(describe[4], std::regex("schema_version: [0-9]+")));
  EXPECT_TRUE(std::regex_match(
      describe[5],
      std::regex("created_at: [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:"
                 "[0-9]{2}\\.[0-9]{3}Z")))
      << describe[5];
  EXPECT_EQ(describe[6], "flags: 0");
  EXPECT_EQ(describe[7], "markers: 0");
  EXPECT_EQ(describe[8], "pending_operands: 0");
  EXPECT_EQ(describe[9], "dedupe_window_ms: 0");
  EXPECT_EQ(describe[10], "bucket: none");
  EXPECT_EQ(describe[11], "retention_ms: 0");
  EXPECT_EQ(describe[12], "keyed: false");
  EXPECT_EQ(describe[13], "min: none");
  EXPECT_EQ(describe[14], "max: none");
  EXPECT_EQ(describe[15], "sliding: false");

  const std::regex applied("applied shard=[0-3]");
  EXPECT_TRUE(
      std::regex_match(CtlValue({"incr", "orders", "--by", "5"}), applied));
  EXPECT_TRUE(
      std::regex_match(CtlValue({"incr", "orders", "--by=-2"}), applied));
  EXPECT_TRUE(std::regex_match(
      CtlValue({"incr", "orders", "--by", "7", "--event-id", "e-1"}), applied));
  EXPECT_TRUE(
      std::regex_match(CtlValue({"incr", "alpha", "--affinity", "device-9"}),
                       std::regex("applied shard=0")));

  EXPECT_EQ(CtlValue({"get", "orders"}), "10");
  EXPECT_EQ(CtlValue({"get", "alpha"}), "1");
  const std::vector<std::string> shards = Lines(CtlOk({"shards", "orders"}));
  ASSERT_EQ(shards.size(), 4u);
  int64_t sum = 0;
  for (size_t i = 0; i < shards.size(); ++i) {
    std::istringstream line(shards[i]);
    size_t index = 99;
    int64_t count = 0;
    line >> index >> count;
    EXPECT_EQ(index, i) << shards[i];
    sum += count;
  }
  EXPECT_EQ(sum, 10);
  EXPECT_EQ(CtlValue({"events", "orders", "--count"}), "1");
  EXPECT_EQ(Lines(CtlOk({"describe", "orders"}))[7], "markers: 1");
  // The plain increments set flags bit 0.
  EXPECT_EQ(Lines(CtlOk({"describe", "orders"}))[6],
            "flags: 1 (plain increments)");

  EXPECT_EQ(CtlOk({"delete", "alpha", "--yes"}), "deleted alpha\n");
  EXPECT_EQ(CtlOk({"list"}), "orders shards=4\n");
  ProcessResult gone = Ctl({"get", "alpha"});
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_EQ(gone.ErrLines(), 1u) << gone.err;
  EXPECT_NE(gone.err.find("alpha"), std::string::npos) << gone.err;
}

// Proves a redelivered event id is reported as duplicate on the same shard,
// and one with another delta as conflict, without changing the value.
TEST_F(CounterctlCli, EventIdOutcomes) {
  CtlOk({"create", "orders", "--shards", "16"});
  const std::string first =
      CtlValue({"incr", "orders", "--by", "3", "--event-id", "ORD:1"});
  std::smatch m;
  ASSERT_TRUE(std::regex_match(first, m, std::regex("applied shard=([0-9]+)")))
      << first;
  const std::string shard = m[1];
  EXPECT_EQ(CtlValue({"incr", "orders", "--by", "3", "--event-id", "ORD:1"}),
            "duplicate shard=" + shard);
  EXPECT_EQ(CtlValue({"incr", "orders", "--by", "4", "--event-id", "ORD:1"}),
            "conflict shard=" + shard);
  EXPECT_EQ(CtlValue({"get", "orders"}), "3");
  EXPECT_EQ(CtlValue({"events", "orders", "--count"}), "1");
}

// Proves malformed command lines exit 2 with exactly one line on stderr that
// names the offending word or value, and touch nothing.
TEST_F(CounterctlCli, UsageErrorsExitTwo) {
  CtlOk({"create", "orders", "--shards", "2"});
  ExpectUsageError(Ctl({"frobnicate"}), "frobnicate");
  ExpectUsageError(CtlRaw({"list"}), "--db");
  ExpectUsageError(Ctl({}), "subcommand");
  ExpectUsageError(Ctl({"incr", "orders", "--by", "12abc"}), "12abc");
  ExpectUsageError(Ctl({"incr", "orders", "--by", "9223372036854775808"}),
                   "9223372036854775808");
  ExpectUsageError(Ctl({"incr", "orders", "--by", "0x10"}), "0x10");
  ExpectUsageError(Ctl({"incr", "orders", "--by", ""}), "--by");
  ExpectUsageError(
      Ctl({"incr", "orders", "--event-id", "e", "--affinity", "k"}),
      "--affinity");
  ExpectUsageError(Ctl({"incr", "orders", "surplus"}), "surplus");
  ExpectUsageError(Ctl({"create", "x", "--shards", "many"}), "many");
  ExpectUsageError(Ctl({"create", "x", "--shards", "4294967296"}),
                   "4294967296");
  ExpectUsageError(Ctl({"create", "x", "--shards", "2", "--policy", "sticky"}),
                   "sticky");
  ExpectUsageError(Ctl({"delete", "orders"}), "--yes");
  ExpectUsageError(Ctl({"events", "orders", "--count", "--limit", "1"}),
                   "--count");
  ExpectUsageError(Ctl({"checkpoint"}), "dir");
  ExpectUsageError(Ctl({"apply"}), "--file");
  ExpectUsageError(Ctl({"apply", "--file", "f", "--threads", "0"}), "0");
  ExpectUsageError(Ctl({"apply", "--file", "f", "--threads", "65"}), "65");
  ExpectUsageError(Ctl({"apply", "--file", "f", "--batch", "65537"}), "65537");
  // Nothing above wrote anything.
  EXPECT_EQ(CtlValue({"get", "orders"}), "0");
  EXPECT_EQ(CtlOk({"list"}), "orders shards=2\n");
}

// Proves values the engine refuses (shard count out of 1..kMaxShards, an
// unknown counter) exit 1 with one line naming the value.
TEST_F(CounterctlCli, EngineRefusalsExitOne) {
  for (const std::string& shards :
       {std::string("0"), std::to_string(tally::kMaxShards + 1)}) {
    ProcessResult r = Ctl({"create", "x", "--shards", shards});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(r.ErrLines(), 1u) << r.err;
    EXPECT_NE(r.err.find(" " + shards + " "), std::string::npos) << r.err;
  }
  ProcessResult missing = Ctl({"incr", "no-such-counter"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.ErrLines(), 1u) << missing.err;
  EXPECT_NE(missing.err.find("no-such-counter"), std::string::npos);
  ProcessResult dup = Ctl({"create", "y", "--shards", "1"});
  ASSERT_EQ(dup.exit_code, 0) << dup.err;
  dup = Ctl({"create", "y", "--shards", "1"});
  EXPECT_EQ(dup.exit_code, 1);
  EXPECT_EQ(dup.ErrLines(), 1u) << dup.err;
}

// Proves a subcommand other than create does not create a database at a
// mistyped --db path.
TEST_F(CounterctlCli, ReadsDoNotCreateDatabase) {
  ProcessResult r = Ctl({"list"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.ErrLines(), 1u) << r.err;
  EXPECT_NE(r.err.find(db_), std::string::npos) << r.err;
  r = Ctl({"list"});  // still absent: the first call made nothing
  EXPECT_EQ(r.exit_code, 1);
}

// Proves a database held by another process is refused promptly (no lock
// wait) with one line that names the path and says it is in use.
TEST_F(CounterctlCli, DatabaseHeldByAnotherProcess) {
  CtlOk({"create", "orders", "--shards", "2"});
  std::unique_ptr<Db> holder = OpenOrDie(db_);
  ASSERT_NE(holder, nullptr);
  ProcessResult r = Ctl({"incr", "orders"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.signal, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.ErrLines(), 1u) << r.err;
  EXPECT_NE(r.err.find(db_), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("in use"), std::string::npos) << r.err;
  EXPECT_LT(r.seconds, 10.0);
  // Nothing was counted behind the holder's back.
  Result<int64_t> value = holder->ReadExact("orders");
  ASSERT_OK(value);
  EXPECT_EQ(*value, 0);
}

// Proves the read subcommands answer while another process holds the
// database and has writes only in its WAL and memtable (a secondary
// instance), with the holder's values.
TEST_F(CounterctlCli, ReadsWhileHeldByAnotherProcess) {
  CtlOk({"create", "orders", "--shards", "4"});
  std::unique_ptr<Db> holder = OpenOrDie(db_);
  ASSERT_NE(holder, nullptr);
  for (int i = 0; i < 25; ++i) {
    ASSERT_OK(holder->IncrementOnce("orders", "ord-" + std::to_string(i), 2));
  }
  ASSERT_OK(holder->CreateCounter("later", {1}));
  EXPECT_EQ(CtlOk({"get", "orders"}), "50\n");
  EXPECT_EQ(CtlOk({"events", "orders", "--count"}), "25\n");
  const std::string shards = CtlOk({"shards", "orders"});
  int64_t sum = 0;
  std::istringstream in(shards);
  for (int64_t index, count; in >> index >> count;) sum += count;
  EXPECT_EQ(sum, 50) << shards;
  EXPECT_NE(CtlOk({"list"}).find("later"), std::string::npos);
  EXPECT_NE(CtlOk({"describe", "orders"}).find("orders"), std::string::npos);
  // The holder keeps writing; a new reader sees the new value.
  ASSERT_OK(holder->Increment("orders", 7));
  EXPECT_EQ(CtlOk({"get", "orders"}), "57\n");
}

// Proves --help works on the tool and on every subcommand: exit 0, usage on
// stdout, nothing on stderr.
TEST_F(CounterctlCli, HelpOnEverySubcommand) {
  ProcessResult top = CtlRaw({"--help"});
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_EQ(top.err, "");
  for (const char* sub :
       {"create", "list", "describe", "incr", "get", "shards", "events",
        "delete", "apply", "verify", "compact", "checkpoint"}) {
    EXPECT_NE(top.out.find(sub), std::string::npos) << sub;
    ProcessResult r = Ctl({sub, "--help"});
    EXPECT_EQ(r.exit_code, 0) << sub << ": " << r.err;
    EXPECT_EQ(r.err, "") << sub;
    EXPECT_NE(r.out.find(std::string("counterctl ") + sub), std::string::npos)
        << r.out;
  }
}

}  // namespace
}  // namespace tally::test
