// docs/format.md's worked hex examples are the engine's own bytes: this
// test writes each record with the engine (a fixed ManualClock, fixed
// names), dumps the database through raw RocksDB and compares every
// example of the document with what is stored, byte for byte. Two fields
// are random by design (the database id in the header, the writer's
// outbox origin in entries); the document shows them as placeholders and
// the test puts the run's values in their place.
//
// TALLY_FORMAT_EXAMPLES_PRINT=1 prints every documented key's stored value
// in the document's notation (to write a new example).

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "engine/coding.h"
#include "engine/rocksdb_options.h"
#include "tally/db.h"
#include "tally/outbox.h"
#include "testutil/raw_db.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

// 2026-12-01T00:00:00Z.
constexpr int64_t kNow = 1'796'083'200'000;
// What the document shows for the random fields (32 lowercase hex chars).
constexpr char kDocDbId[] = "0123456789abcdef0123456789abcdef";
constexpr char kDocOrigin[] = "fedcba9876543210fedcba9876543210";

struct Example {
  std::string name;
  std::string family;
  std::string key;    // bytes
  std::string value;  // bytes, as documented
  int line = 0;
};

std::string FromHex(const std::string& hex, bool* ok) {
  std::string out;
  std::istringstream in(hex);
  std::string byte;
  *ok = true;
  while (in >> byte) {
    if (byte.size() != 2) {
      *ok = false;
      return out;
    }
    out.push_back(static_cast<char>(std::stoi(byte, nullptr, 16)));
  }
  return out;
}

std::string ToHex(std::string_view bytes) {
  std::string out;
  char b[4];
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::snprintf(b, sizeof b, "%02x", static_cast<unsigned char>(bytes[i]));
    if (i != 0) out += (i % 16 == 0) ? "\n        " : " ";
    out += b;
  }
  return out;
}

// The document's examples, inside ``` blocks: a line "example NAME: ...",
// then "family F", "key HEX", "value HEX" (continued on lines that start
// with eight spaces).
std::vector<Example> ReadExamples(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::vector<Example> out;
  std::string line;
  std::string* last = nullptr;
  int n = 0;
  std::string key_hex, value_hex;
  auto finish = [&] {
    if (out.empty()) return;
    bool ok1 = true, ok2 = true;
    out.back().key = FromHex(key_hex, &ok1);
    out.back().value = FromHex(value_hex, &ok2);
    EXPECT_TRUE(ok1 && ok2) << path << ":" << out.back().line
                            << ": malformed hex in example " << out.back().name;
    key_hex.clear();
    value_hex.clear();
  };
  bool fenced = false;  // inside a ``` block: examples live only there
  while (std::getline(in, line)) {
    ++n;
    if (line.rfind("```", 0) == 0) {
      fenced = !fenced;
      last = nullptr;
      continue;
    }
    if (!fenced) continue;
    if (line.rfind("example ", 0) == 0) {
      finish();
      Example e;
      e.name = line.substr(8, line.find(':') - 8);
      e.line = n;
      out.push_back(e);
      last = nullptr;
    } else if (out.empty()) {
      continue;
    } else if (line.rfind("family ", 0) == 0) {
      out.back().family = line.substr(line.find_first_not_of(' ', 7));
    } else if (line.rfind("key ", 0) == 0) {
      key_hex = line.substr(4);
      last = &key_hex;
    } else if (line.rfind("value ", 0) == 0) {
      value_hex = line.substr(6);
      last = &value_hex;
    } else if (last != nullptr && line.rfind("        ", 0) == 0) {
      *last += " " + line;
    } else {
      last = nullptr;
    }
  }
  finish();
  return out;
}

std::string ReplaceAll(std::string s, const std::string& from,
                       const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos;
       at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

// Every record of docs/format.md, written by the engine.
void WriteEveryRecord(const std::string& path, std::string* db_id,
                      std::string* origin) {
  test::ManualClock clock(kNow);
  Options o;
  o.clock = &clock;
  o.rollup_interval_ms = 0;
  {
    std::unique_ptr<Db> db = test::OpenOrDie(path, o);
    ASSERT_NE(db, nullptr);
    // id 1: a counter of 4 shards with one once-increment, and its roll-up.
    ASSERT_OK(db->CreateCounter("orders", {4}));
    ASSERT_OK(db->IncrementOnce("orders", "ord-1", 5));
    ASSERT_OK(db->ReadCached("orders"));
    // id 2: one shard, hour buckets, a plain increment now.
    CounterSpec visits;
    visits.bucket = BucketWidth::kHour;
    ASSERT_OK(db->CreateCounter("visits", visits));
    ASSERT_OK(db->Increment("visits", 3));
    // id 3: one shard whose exact sum is beyond int64 (a wide value).
    ASSERT_OK(db->CreateCounter("big", {1}));
    ASSERT_OK(db->Increment("big", std::numeric_limits<int64_t>::max()));
    ASSERT_OK(db->Increment("big", std::numeric_limits<int64_t>::max()));
    // id 4: an outbox counter with two entries, the first acknowledged.
    CounterSpec feed;
    feed.outbox = true;
    ASSERT_OK(db->CreateCounter("feed", feed));
    ASSERT_OK(db->IncrementOnce("feed", "e1", 1));
    ASSERT_OK(db->IncrementOnce("feed", "e2", 7));
    ASSERT_OK(tally::AckOutbox(*db, 1));
    Result<std::vector<OutboxEntry>> entries = tally::ReadOutbox(*db, 0, 10);
    ASSERT_OK(entries);
    ASSERT_EQ(entries->size(), 1u);
    *origin = (*entries)[0].origin;
    // id 5: a keyed counter of one shard: key "p1" got a once-increment of
    // 2 (event "u1"), then a roll-up (total and top list).
    CounterSpec likes;
    likes.keyed = true;
    ASSERT_OK(db->CreateCounter("likes", likes));
    ASSERT_OK(db->IncrementOnce({"likes", "p1"}, "u1", 2));
    ASSERT_OK(db->RollupNow("likes"));
    // id 6: a keyed strict counter (min 0): key "s1" restocked by 1 (event
    // "r1"), taken (event "t1"), then a take refused (event "t2").
    CounterSpec stock;
    stock.keyed = true;
    stock.bounds = CounterBounds::AtLeast(0);
    ASSERT_OK(db->CreateCounter("stock", stock));
    ASSERT_OK(db->IncrementOnce({"stock", "s1"}, "r1", 1));
    ASSERT_OK(db->IncrementOnce({"stock", "s1"}, "t1", -1));
    ASSERT_EQ(
        test::OkValue(db->IncrementOnce({"stock", "s1"}, "t2", -1)).outcome,
        Outcome::kRefused);
    // id 7: a named strict counter (min 0) restocked by 5, with reservation
    // "cart-1" of 2 units held for 15 minutes and "cart-2" of 1 committed
    // (holds family, format 7).
    CounterSpec seats;
    seats.bounds = CounterBounds::AtLeast(0);
    ASSERT_OK(db->CreateCounter("seats", seats));
    ASSERT_OK(db->Increment("seats", 5));
    ASSERT_OK(db->Reserve("seats", "cart-1", 2, 15 * 60'000));
    ASSERT_OK(db->Reserve("seats", "cart-2", 1, 15 * 60'000));
    ASSERT_OK(db->CommitReservation("seats", "cart-2"));
    // id 8: a counter of one shard counted to 4 (event "d1"), then reset to
    // 0 (reset "close-1", format 7).
    ASSERT_OK(db->CreateCounter("daily", {1}));
    ASSERT_OK(db->IncrementOnce("daily", "d1", 4));
    ASSERT_OK(db->Reset("daily", "close-1", 0));
    // id 9: a keyed quota (at most 100 per minute): key "k1" took 1 unit
    // by event "c1" (format 6: its marker holds the window end and room).
    CounterSpec calls;
    calls.keyed = true;
    calls.bounds = CounterBounds::Between(0, 100);
    calls.bucket = BucketWidth::kMinute;
    ASSERT_OK(db->CreateCounter("calls", calls));
    ASSERT_OK(db->IncrementOnce({"calls", "k1"}, "c1", 1));
    // Claims (format 8): "item:1" held by "w1" for 30 s; "item:2" claimed
    // by "w1", released, claimed by "w2" (token 2) and completed with
    // result "row 9".
    ASSERT_OK(db->Claim("item:1", "w1", 30'000));
    ASSERT_OK(db->Claim("item:2", "w1", 30'000));
    ASSERT_OK(db->ReleaseClaim("item:2", 1));
    ASSERT_OK(db->Claim("item:2", "w2", 30'000));
    ASSERT_OK(db->CompleteClaim("item:2", 2, "row 9"));
    Result<std::string> id = tally::DatabaseId(*db);
    ASSERT_OK(id);
    *db_id = *id;
  }
  // A writer's open records the outbox's settled watermark.
  std::unique_ptr<Db> db = test::OpenOrDie(path, o);
  ASSERT_NE(db, nullptr);
}

TEST(FormatExamples, EveryDocumentedExampleIsWhatTheEngineStores) {
  const std::vector<Example> examples = ReadExamples(TALLY_FORMAT_DOC);
  ASSERT_GE(examples.size(), 10u) << "too few examples in " << TALLY_FORMAT_DOC;
  test::TempDir dir;
  std::string db_id, origin;
  WriteEveryRecord(dir.Sub("db"), &db_id, &origin);
  if (HasFatalFailure()) return;
  ASSERT_EQ(db_id.size(), 32u);
  ASSERT_EQ(origin.size(), 32u);

  const std::map<std::string, engine::Family> families = {
      {"meta", engine::kMeta},     {"shards", engine::kShards},
      {"events", engine::kEvents}, {"rollups", engine::kRollups},
      {"outbox", engine::kOutbox}, {"holds", engine::kHolds},
      {"claims", engine::kClaims},
  };
  const bool print = std::getenv("TALLY_FORMAT_EXAMPLES_PRINT") != nullptr;
  test::RawDb raw(dir.Sub("db"));
  ASSERT_NE(raw.db(), nullptr);
  for (const Example& e : examples) {
    const std::string where = std::string(TALLY_FORMAT_DOC) + ":" +
                              std::to_string(e.line) + " " + e.name;
    auto f = families.find(e.family);
    if (f == families.end()) {
      ADD_FAILURE() << where << ": unknown family '" << e.family << "'";
      continue;
    }
    std::string stored;
    if (e.name == "import_key") {
      // Present only while an import runs: its bytes come from the encoder
      // the import uses (value: the counter's name).
      const std::string key = engine::ImportMetaKey(5);
      EXPECT_EQ(ToHex(key), ToHex(e.key)) << where;
      stored = "orders";
    } else {
      rocksdb::Status s = raw.db()->Get(rocksdb::ReadOptions(),
                                        raw.family(f->second), e.key, &stored);
      if (!s.ok()) {
        ADD_FAILURE() << where << ": key " << ToHex(e.key) << " not stored ("
                      << s.ToString() << ")";
        continue;
      }
    }
    stored =
        ReplaceAll(ReplaceAll(stored, db_id, kDocDbId), origin, kDocOrigin);
    if (print) {
      std::printf("example %s\nfamily  %s\nkey     %s\nvalue   %s\n\n",
                  e.name.c_str(), e.family.c_str(), ToHex(e.key).c_str(),
                  ToHex(stored).c_str());
    }
    EXPECT_EQ(ToHex(stored), ToHex(e.value)) << where;
  }
}

}  // namespace
}  // namespace tally
