// counterctl ldb: RocksDB's ldb with tally's merge operator reads a tally
// database as the engine does (issue 18). The shards family's values, with
// their merge operands still pending, decode (docs/format.md, "shards") to
// what `counterctl shards` prints; get, checkconsistency, manifest_dump and
// dump_wal work on the same database.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "counterctl_fixture.h"

namespace tally::test {
namespace {

class CounterctlLdb : public CounterctlTest {};

uint64_t HexByte(const std::string& hex, size_t i) {
  return std::stoull(hex.substr(2 * i, 2), nullptr, 16);
}

// "0x0B00000000000000" (8 bytes, little-endian int64) as its number; the
// test's values fit 8 bytes (format.md: 16 only beyond int64).
int64_t LittleEndian(const std::string& hex0x) {
  const std::string hex = hex0x.substr(2);
  EXPECT_EQ(hex.size(), 16u) << hex0x;
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v |= HexByte(hex, i) << (8 * i);
  return static_cast<int64_t>(v);
}

uint64_t BigEndian(const std::string& hex, size_t at, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i) v = v << 8 | HexByte(hex, at + i);
  return v;
}

struct ShardValue {
  uint64_t counter_id;
  std::string key;  // empty for a named counter
  uint32_t shard;
  int64_t value;
};

// Parses `ldb --key_hex --value_hex scan` lines of the shards family:
// "0xKEY : 0xVALUE", the key u64be(id) [|| key || 0x00] || u32be(shard).
std::vector<ShardValue> ParseScan(const std::string& out) {
  std::vector<ShardValue> values;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t sep = line.find(" : ");
    EXPECT_NE(sep, std::string::npos) << line;
    if (sep == std::string::npos) continue;
    const std::string key = line.substr(2, sep - 2);  // past "0x"
    const size_t n = key.size() / 2;
    EXPECT_GE(n, 12u) << line;
    if (n < 12) continue;
    ShardValue v;
    v.counter_id = BigEndian(key, 0, 8);
    for (size_t i = 8; i + 5 < n; ++i) {
      v.key.push_back(static_cast<char>(HexByte(key, i)));
    }
    if (n > 12) {
      EXPECT_EQ(HexByte(key, n - 5), 0u) << line;
    }
    v.shard = static_cast<uint32_t>(BigEndian(key, n - 4, 4));
    v.value = LittleEndian(line.substr(sep + 3));
    values.push_back(v);
  }
  return values;
}

TEST_F(CounterctlLdb, ScanOfShardsPrintsTheValuesCounterctlShardsPrints) {
  CtlOk({"create", "likes", "--shards", "4"});
  CtlOk({"create", "views", "--shards", "2", "--keyed"});
  // Several runs, so each shard holds a base value and merge operands that
  // only the merge operator folds.
  for (int i = 1; i <= 12; ++i) {
    CtlOk({"incr", "likes", "--by", std::to_string(i)});
    CtlOk({"incr", "views", "--key", i % 2 ? "post-1" : "post-22", "--by",
           std::to_string(-i)});
  }
  CtlOk({"compact"});
  for (int i = 0; i < 6; ++i) {
    CtlOk({"incr", "likes", "--by", "100", "--event-id", "e" + std::to_string(i)});
  }

  ProcessResult scan = Ctl({"ldb", "--column_family=shards", "--key_hex",
                            "--value_hex", "scan"});
  ASSERT_EQ(scan.exit_code, 0) << scan.err;
  EXPECT_EQ(scan.err, "");
  std::vector<ShardValue> rows = ParseScan(scan.out);

  const nlohmann::json likes = CtlJson({"shards", "likes"});
  const nlohmann::json post1 = CtlJson({"shards", "views", "--key", "post-1"});
  const nlohmann::json post22 =
      CtlJson({"shards", "views", "--key", "post-22"});
  const uint64_t likes_id = CtlJson({"describe", "likes"})["id"];
  const uint64_t views_id = CtlJson({"describe", "views"})["id"];

  // Every shard ldb prints is the one counterctl prints, and every non-zero
  // shard counterctl prints is there.
  std::map<std::pair<std::string, uint32_t>, int64_t> seen;
  for (const ShardValue& v : rows) {
    const nlohmann::json* want = nullptr;
    if (v.counter_id == likes_id && v.key.empty()) want = &likes;
    if (v.counter_id == views_id && v.key == "post-1") want = &post1;
    if (v.counter_id == views_id && v.key == "post-22") want = &post22;
    ASSERT_NE(want, nullptr) << "unexpected shard key: counter " << v.counter_id
                             << " key \"" << v.key << "\"";
    ASSERT_LT(v.shard, (*want)["counts"].size());
    EXPECT_EQ(v.value, (*want)["counts"][v.shard].get<int64_t>())
        << "counter " << v.counter_id << " key " << v.key << " shard "
        << v.shard;
    seen[{std::to_string(v.counter_id) + "/" + v.key, v.shard}] = v.value;
  }
  int64_t likes_sum = 0;
  for (size_t s = 0; s < likes["counts"].size(); ++s) {
    const int64_t c = likes["counts"][s];
    likes_sum += c;
    if (c != 0) {
      EXPECT_EQ(seen.count({std::to_string(likes_id) + "/", s}), 1u) << s;
    }
  }
  EXPECT_EQ(likes_sum, 78 + 600);
  EXPECT_EQ(CtlValue({"get", "likes"}), "678");

  // get of one shard key folds its operands too.
  for (const ShardValue& v : rows) {
    if (v.counter_id != likes_id) continue;
    std::ostringstream key;
    key << "0x" << std::hex;
    for (int i = 7; i >= 0; --i) {
      key.width(2);
      key.fill('0');
      key << ((v.counter_id >> (8 * i)) & 0xff);
    }
    for (int i = 3; i >= 0; --i) {
      key.width(2);
      key.fill('0');
      key << ((v.shard >> (8 * i)) & 0xff);
    }
    ProcessResult get = Ctl({"ldb", "--column_family=shards", "--key_hex",
                             "--value_hex", "get", key.str()});
    ASSERT_EQ(get.exit_code, 0) << get.err;
    EXPECT_EQ(LittleEndian(get.LastOutLine()), v.value) << key.str();
  }
}

TEST_F(CounterctlLdb, DatabaseFlagAnywhereAndRocksDbToolsWork) {
  CtlOk({"create", "likes", "--shards", "2"});
  CtlOk({"incr", "likes", "--by", "7"});

  // --db after ldb, as -d, and from TALLY_DB.
  ProcessResult after =
      CtlRaw({"ldb", "--db", db_, "--column_family=shards", "--value_hex",
              "--key_hex", "scan"});
  EXPECT_EQ(after.exit_code, 0) << after.err;
  EXPECT_NE(after.out.find(" : 0x0700000000000000"), std::string::npos)
      << after.out;
  EXPECT_EQ(CtlRaw({"-d", db_, "ldb", "list_column_families"}).exit_code, 0);
  ::setenv("TALLY_DB", db_.c_str(), 1);
  ProcessResult families = CtlRaw({"ldb", "list_column_families"});
  ::unsetenv("TALLY_DB");
  EXPECT_EQ(families.exit_code, 0) << families.err;
  for (const char* f :
       {"meta", "shards", "events", "rollups", "outbox", "holds", "claims"}) {
    EXPECT_NE(families.out.find(f), std::string::npos) << families.out;
  }

  ProcessResult consistent = Ctl({"ldb", "checkconsistency"});
  EXPECT_EQ(consistent.exit_code, 0) << consistent.err;
  EXPECT_EQ(consistent.out, "OK\n");

  ProcessResult manifest = Ctl({"ldb", "manifest_dump"});
  EXPECT_EQ(manifest.exit_code, 0) << manifest.err;
  EXPECT_NE(manifest.out.find("Column family \"shards\""), std::string::npos);

  // The increment is a merge in the live WAL (docs/format.md: 8-byte
  // little-endian operand).
  std::string wal;
  for (const auto& e : std::filesystem::directory_iterator(db_)) {
    if (e.path().extension() == ".log") wal = e.path().string();
  }
  ASSERT_FALSE(wal.empty());
  ProcessResult dump =
      CtlRaw({"ldb", "dump_wal", "--walfile=" + wal, "--print_value"});
  EXPECT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_NE(dump.out.find("MERGE(2)"), std::string::npos) << dump.out;
  EXPECT_NE(dump.out.find(": 0x0700000000000000"), std::string::npos)
      << dump.out;

  // Failures are ldb's: its message and exit code 1.
  ProcessResult missing = CtlOn(tmp_.Sub("nothing-here"), {"ldb", "scan"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("No such file or directory"), std::string::npos)
      << missing.err;
}

TEST_F(CounterctlLdb, DatabaseGivenTwiceIsAUsageError) {
  CtlOk({"create", "likes", "--shards", "2"});
  ProcessResult r = Ctl({"ldb", "--db=" + tmp_.Sub("other"), "scan"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "counterctl: ldb: the database is given twice (--db " +
                       db_ + " and ldb's --db=" + tmp_.Sub("other") +
                       "); give it once\n");
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace tally::test
