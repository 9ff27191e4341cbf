// counterctl wal dump against the real binary (writes made through the tally
// API, then the WAL decoded back into them), and the batch decoder
// (tally::DecodeWalBatch, tally/dump.h) with counterctl's rendering
// (tools/counterctl/wal_render.h) on hand-built RocksDB write batches.

#include <gtest/gtest.h>
#include <rocksdb/comparator.h>
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "counterctl_fixture.h"
#include "engine/coding.h"
#include "engine/wal_dump.h"
#include "schema/records.h"
#include "tally/batch.h"
#include "tally/db.h"
#include "tally/dump.h"
#include "wal_render.h"

namespace tally::test {
namespace {

using nlohmann::json;
using CounterctlWal = CounterctlTest;

// 2026-11-30T10:00:00Z, and the start of its UTC day.
constexpr int64_t kNow = 1796032800000;
constexpr int64_t kDay = 1795996800000;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Options for a writer whose WAL the tests read: a fixed clock (marker and
// roll-up times are in the dump) and no roll-up worker (its writes would
// land in the WAL at random moments).
Options Fixed(const Clock* clock) {
  Options o;
  o.clock = clock;
  o.rollup_interval_ms = 0;
  return o;
}

// The first sequence number of each batch in a text dump.
std::vector<uint64_t> BatchSeqs(const std::string& out) {
  std::vector<uint64_t> seqs;
  for (const std::string& l : Lines(out)) {
    if (l.rfind("batch seq=", 0) == 0) {
      seqs.push_back(std::stoull(l.substr(10, l.find(' ', 10) - 10)));
    }
  }
  return seqs;
}

// tally::DumpWal reads local files: a target naming a server is refused
// by name before anything is opened (counterctl refuses it first too).
TEST(DumpWal, ATargetNamingAServerIsNotSupported) {
  struct Nothing : WalVisitor {
    Status Batch(const DumpBatch&) override { return Status::OK(); }
    Status Gap(uint64_t, uint64_t) override { return Status::OK(); }
  } visitor;
  const Status s =
      DumpWal(Options(), "redis://127.0.0.1:1/ns", 0, &visitor);
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
  EXPECT_NE(s.message().find("redis://"), std::string::npos) << s.ToString();
}

TEST_F(CounterctlWal, DumpDecodesEveryWriteTheApiMakes) {
  // Every kind of write tally makes comes back decoded, in commit order,
  // with its sequence numbers; names come from the catalog as it is now.
  ManualClock clock(kNow);
  uint32_t once_shard = 0, plain_shard = 0, plain2_shard = 0, daily_shard = 0;
  std::vector<IncrementResult> applied;
  {
    std::unique_ptr<Db> db = OpenOrDie(db_, Fixed(&clock));
    ASSERT_NE(db, nullptr);
    CounterSpec four;
    four.shards = 4;
    ASSERT_OK(db->CreateCounter("orders", four));
    auto r = db->IncrementOnce("orders", "ORDER:1", 5);
    ASSERT_OK(r);
    once_shard = r->shard;
    ASSERT_OK(db->IncrementOnce("orders", "ORDER:1", 5));  // duplicate
    r = db->Increment("orders", 2);
    ASSERT_OK(r);
    plain_shard = r->shard;
    r = db->Increment("orders", -3);
    ASSERT_OK(r);
    plain2_shard = r->shard;
    CounterSpec daily;
    daily.shards = 2;
    daily.bucket = BucketWidth::kDay;
    ASSERT_OK(db->CreateCounter("daily", daily));
    IncrementOptions at;
    at.event_time_ms = kNow;
    r = db->Increment("daily", 2, at);
    ASSERT_OK(r);
    daily_shard = r->shard;
    Batch batch;
    batch.AddOnce("orders", "ORDER:2", 1);
    batch.AddOnce("daily", "ORDER:2", 7, OnceOptions{kNow, {}});
    ASSERT_OK(db->Apply(batch, &applied));
    ASSERT_EQ(applied.size(), 2u);
    ASSERT_OK(db->RollupNow("orders"));
    ASSERT_OK(db->CreateCounter("gone", four));
    ASSERT_OK(db->DeleteCounter("gone"));
  }
  auto sh = [](uint32_t v) { return std::to_string(v); };
  const std::string created = "2026-11-30T10:00:00.000Z";
  // clang-format off
  const std::string expected =
      "batch seq=1 ops=1\n"
      "  header put format_version=1 next_counter_id=1\n"
      "batch seq=2 ops=2\n"
      "  time-mark put at=" + created + "\n"
      "  header put format_version=3 next_counter_id=1\n"
      "batch seq=4 ops=2\n"
      "  header put format_version=3 next_counter_id=2\n"
      "  counter-meta put name=orders id=1 shards=4 flags=0\n"
      "batch seq=6 ops=2\n"
      "  marker counter=orders event=ORDER:1 shard=" + sh(once_shard) +
      " delta=5 created_at=" + created + "\n"
      "  merge counter=orders shard=" + sh(once_shard) + " delta=+5\n"
      "batch seq=8 ops=2\n"
      "  merge counter=orders shard=" + sh(plain_shard) + " delta=+2\n"
      "  counter-meta put name=orders id=1 shards=4 flags=1\n"
      "batch seq=10 ops=1\n"
      "  merge counter=orders shard=" + sh(plain2_shard) + " delta=-3\n"
      "batch seq=11 ops=2\n"
      "  header put format_version=3 next_counter_id=3\n"
      "  counter-meta put name=daily id=2 shards=2 flags=0 bucket_width=day\n"
      "batch seq=13 ops=2\n"
      "  merge counter=daily bucket=2026-11-30T00:00:00.000Z shard=" +
      sh(daily_shard) + " delta=+2\n"
      "  counter-meta put name=daily id=2 shards=2 flags=1 bucket_width=day\n"
      "batch seq=15 ops=4\n"
      "  marker counter=orders event=ORDER:2 shard=" + sh(applied[0].shard) +
      " delta=1 created_at=" + created + "\n"
      "  marker counter=daily event=ORDER:2 shard=" + sh(applied[1].shard) +
      " delta=7 created_at=" + created + "\n"
      "  merge counter=orders shard=" + sh(applied[0].shard) + " delta=+1\n"
      "  merge counter=daily bucket=2026-11-30T00:00:00.000Z shard=" +
      sh(applied[1].shard) + " delta=+7\n"
      "batch seq=19 ops=1\n"
      "  rollup counter=orders value=5 as_of_seq=18 as_of=" + created + "\n"
      "batch seq=20 ops=2\n"
      "  header put format_version=3 next_counter_id=4\n"
      "  counter-meta put name=gone id=3 shards=4 flags=0\n"
      "batch seq=22 ops=5\n"
      "  counter-meta delete name=gone\n"
      "  delete-range family=shards id=3\n"
      "  delete-range family=events id=3\n"
      "  delete-range family=rollups id=3\n"
      "  delete-range family=holds id=3\n";
  // clang-format on
  EXPECT_EQ(CtlOk({"wal", "dump"}), expected);
}

TEST_F(CounterctlWal, SinceStartsAtTheBatchHoldingIt) {
  // --since SEQ prints from the batch that holds SEQ, whole, also when SEQ
  // is not its first sequence number.
  ManualClock clock(kNow);
  {
    std::unique_ptr<Db> db = OpenOrDie(db_, Fixed(&clock));
    ASSERT_NE(db, nullptr);
    CounterSpec spec;
    spec.shards = 2;
    // The open wrote the header (seq 1) and the time mark (seq 2, 3).
    ASSERT_OK(db->CreateCounter("orders", spec));      // seq 4, 5
    ASSERT_OK(db->IncrementOnce("orders", "E:1", 1));  // seq 6, 7
    ASSERT_OK(db->IncrementOnce("orders", "E:2", 1));  // seq 8, 9
  }
  const std::string all = CtlOk({"wal", "dump"});
  ASSERT_EQ(BatchSeqs(all), (std::vector<uint64_t>{1, 2, 4, 6, 8}));
  const std::string from4 = all.substr(all.find("batch seq=4 "));
  EXPECT_EQ(CtlOk({"wal", "dump", "--since", "4"}), from4);
  EXPECT_EQ(CtlOk({"wal", "dump", "--since", "5"}), from4);
  EXPECT_EQ(BatchSeqs(CtlOk({"wal", "dump", "--since", "9"})),
            (std::vector<uint64_t>{8}));
  EXPECT_EQ(CtlOk({"wal", "dump", "--since", "1"}), all);
}

TEST_F(CounterctlWal, SinceOlderThanTheWalIsRefusedNamingTheOldest) {
  // A writer's open flushes the WAL it recovers and deletes its files: the
  // dump then starts later, and --since an older sequence is an error
  // naming the oldest one left, never a feed with a silent hole. A fixed
  // clock: a later open whose time did not move writes no time mark.
  ManualClock clock(kNow);
  {
    std::unique_ptr<Db> db = OpenOrDie(db_, Fixed(&clock));
    ASSERT_NE(db, nullptr);
    // header seq 1, time mark 2, 3
    ASSERT_OK(db->CreateCounter("orders", CounterSpec{}));  // seq 4, 5
    ASSERT_OK(db->Increment("orders", 1));                  // seq 6, 7
  }
  {
    std::unique_ptr<Db> db = OpenOrDie(db_, Fixed(&clock));
    ASSERT_NE(db, nullptr);
    ASSERT_OK(db->Increment("orders", 2));  // seq 8
  }
  EXPECT_EQ(CtlOk({"wal", "dump"}),
            "batch seq=8 ops=1\n"
            "  merge counter=orders shard=0 delta=+2\n");
  ProcessResult r = Ctl({"wal", "dump", "--since", "2"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "counterctl: NotFound: the WAL no longer holds sequence 2: the "
            "oldest sequence it holds is 8 (WAL files are deleted once their "
            "writes are flushed)\n");

  // A third open without writes (and with the time unmoved) leaves an
  // empty WAL.
  ASSERT_NE(OpenOrDie(db_, Fixed(&clock)), nullptr);
  EXPECT_EQ(CtlOk({"wal", "dump"}), "");
  r = Ctl({"wal", "dump", "--since", "8"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err,
            "counterctl: NotFound: the WAL no longer holds sequence 8: it "
            "holds no batches; everything up to sequence 8 is in table files "
            "(WAL files are deleted once their writes are flushed)\n");
}

TEST_F(CounterctlWal, BadSinceIsAUsageErrorAndBeyondTheLastAnError) {
  // A --since that is not a sequence number is a usage error (exit 2); one
  // past the last sequence written is an error naming the last (exit 1).
  {
    std::unique_ptr<Db> db = OpenOrDie(db_);
    ASSERT_NE(db, nullptr);
    // header seq 1, time mark 2, 3
    ASSERT_OK(db->CreateCounter("orders", CounterSpec{}));  // seq 4, 5
  }
  for (const char* bad : {"abc", "0", "12abc", "+3", "0x10", ""}) {
    ProcessResult r = Ctl({"wal", "dump", "--since", bad});
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, std::string("counterctl: --since ") + bad +
                         ": expected an integer in 1..72057594037927935\n");
  }
  ProcessResult r = Ctl({"wal", "dump", "--since", "6"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "counterctl: InvalidArgument: since 6 is beyond the last "
            "sequence number written, 5\n");
  EXPECT_EQ(CtlOk({"wal", "dump", "--since", "5"}).substr(0, 18),
            "batch seq=4 ops=2\n");
  r = Ctl({"wal"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "counterctl: wal needs an action: dump (see counterctl --help)\n");
  r = CtlOn(tmp_.Sub("missing"), {"wal", "dump"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.ErrLines(), 1u);
}

TEST_F(CounterctlWal, JsonIsOneObjectPerBatch) {
  // --json: JSON Lines, each line one batch {"seq","count","ops"} whose ops
  // carry the same facts as the text, numbers as JSON numbers.
  ManualClock clock(kNow);
  {
    std::unique_ptr<Db> db = OpenOrDie(db_, Fixed(&clock));
    ASSERT_NE(db, nullptr);
    CounterSpec daily;
    daily.bucket = BucketWidth::kDay;
    ASSERT_OK(db->CreateCounter("daily", daily));  // seq 4, 5
    OnceOptions at;
    at.event_time_ms = kNow;
    ASSERT_OK(db->IncrementOnce("daily", "E:1", 4, at));
    ASSERT_OK(db->CreateCounter("gone", CounterSpec{}));
    ASSERT_OK(db->IncrementOnce("gone", "E:1", 1));
    ASSERT_OK(db->DeleteCounter("gone"));
  }
  ProcessResult r = Ctl({"wal", "dump", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::vector<json> batches;
  for (const std::string& line : Lines(r.out)) {
    json doc = json::parse(line, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(doc.is_discarded()) << line;
    batches.push_back(doc);
  }
  ASSERT_EQ(batches.size(), 7u) << r.out;
  EXPECT_EQ(batches[0]["seq"], 1);
  EXPECT_EQ(batches[0]["count"], 1);
  EXPECT_EQ(batches[0]["ops"][0]["op"], "header");
  const json& mark = batches[1]["ops"][0];
  EXPECT_EQ(mark["op"], "time-mark");
  EXPECT_EQ(mark["at_ms"], kNow);
  const json& meta = batches[2]["ops"][1];
  EXPECT_EQ(meta["op"], "counter-meta");
  EXPECT_EQ(meta["action"], "put");
  EXPECT_EQ(meta["name"], "daily");
  EXPECT_EQ(meta["bucket_width"], "day");
  const json& once = batches[3];
  EXPECT_EQ(once["seq"], 6);
  EXPECT_EQ(once["count"], 2);
  ASSERT_EQ(once["ops"].size(), 2u);
  const json& marker = once["ops"][0];
  EXPECT_EQ(marker["op"], "marker");
  EXPECT_EQ(marker["counter"], "daily");
  EXPECT_EQ(marker["counter_id"], 1);
  EXPECT_EQ(marker["event_id"], "E:1");
  EXPECT_EQ(marker["delta"], 4);
  EXPECT_EQ(marker["created_at_ms"], kNow);
  const json& merge = once["ops"][1];
  EXPECT_EQ(merge["op"], "merge");
  EXPECT_EQ(merge["counter"], "daily");
  EXPECT_EQ(merge["bucket_ms"], kDay);
  EXPECT_EQ(merge["bucket"], "2026-11-30T00:00:00.000Z");
  EXPECT_EQ(merge["shard"], marker["shard"]);
  EXPECT_EQ(merge["delta"], 4);
  // The deleted counter is no longer in the catalog: id only.
  const json& gone_merge = batches[5]["ops"][1];
  EXPECT_EQ(gone_merge["op"], "merge");
  EXPECT_TRUE(gone_merge["counter"].is_null());
  EXPECT_EQ(gone_merge["counter_id"], 2);
  const json& del = batches[6]["ops"];
  ASSERT_EQ(del.size(), 5u);  // the record, shards, events, rollups, holds
  EXPECT_EQ(del[0]["action"], "delete");
  EXPECT_EQ(del[1]["op"], "delete-range");
  EXPECT_EQ(del[1]["family"], "shards");
  EXPECT_EQ(del[1]["counter_id"], 2);

  r = Ctl({"wal", "dump", "--json", "--since", "7"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(Lines(r.out).at(0))["seq"], 6);
}

TEST_F(CounterctlWal, DumpsWhileAWriterHoldsTheDatabase) {
  // No lock is taken: the dump reads the WAL of a live writer, up to what
  // that writer had committed when the dump opened.
  ManualClock clock(kNow);
  std::unique_ptr<Db> db = OpenOrDie(db_, Fixed(&clock));
  ASSERT_NE(db, nullptr);
  ASSERT_OK(db->CreateCounter("orders", CounterSpec{}));
  ASSERT_OK(db->Increment("orders", 9));
  std::string out = CtlOk({"wal", "dump"});
  EXPECT_NE(out.find("\n  merge counter=orders shard=0 delta=+9\n"),
            std::string::npos)
      << out;
  ASSERT_OK(db->Increment("orders", -1));
  out = CtlOk({"wal", "dump", "--since", "8"});
  EXPECT_EQ(out,
            "batch seq=8 ops=1\n  merge counter=orders shard=0 delta=-1\n");
}

// ---- the decoder, on hand-built batches ----

// A column family handle for building batches without a database: a
// WriteBatch needs only the id (and a comparator for timestamps).
class FakeFamily : public rocksdb::ColumnFamilyHandle {
 public:
  FakeFamily(uint32_t id, std::string name) : id_(id), name_(std::move(name)) {}
  const std::string& GetName() const override { return name_; }
  uint32_t GetID() const override { return id_; }
  rocksdb::Status GetDescriptor(rocksdb::ColumnFamilyDescriptor*) override {
    return rocksdb::Status::NotSupported("fake");
  }
  const rocksdb::Comparator* GetComparator() const override {
    return rocksdb::BytewiseComparator();
  }

 private:
  uint32_t id_;
  std::string name_;
};

class WalDecodeTest : public ::testing::Test {
 protected:
  WalDecodeTest() {
    families_ = {{0, "default"}, {1, "meta"},    {2, "shards"},
                 {3, "events"},  {4, "rollups"}, {5, "outbox"}};
    counters_ = {{1, "orders"}};
  }
  static std::string ShardKey(uint64_t id, uint32_t shard) {
    char k[engine::kShardKeyBytes];
    engine::EncodeShardKey(id, shard, k);
    return std::string(k, sizeof k);
  }
  static std::string BucketKey(uint64_t id, int64_t bucket, uint32_t shard) {
    char k[engine::kBucketShardKeyBytes];
    engine::EncodeBucketShardKey(id, bucket, shard, k);
    return std::string(k, sizeof k);
  }
  static std::string Int(int64_t v) {
    char b[engine::kValueBytes];
    engine::EncodeInt64(v, b);
    return std::string(b, sizeof b);
  }
  static std::string Prefix(uint64_t id) {
    char b[engine::kCounterIdBytes];
    engine::EncodeCounterPrefix(id, b);
    return std::string(b, sizeof b);
  }
  tally::DumpBatch Decode(uint64_t seq, const rocksdb::WriteBatch& wb) {
    const rocksdb::Slice data = wb.Data();
    return tally::DecodeWalBatch(
        seq, std::string_view(data.data(), data.size()), families_, counters_);
  }
  static std::vector<std::string> Texts(const tally::DumpBatch& b) {
    std::vector<std::string> out;
    for (const tally::DumpOp& op : b.ops) {
      out.push_back(counterctl::WalOpText(op));
    }
    return out;
  }

  FakeFamily meta_{1, "meta"}, shards_{2, "shards"}, events_{3, "events"},
      rollups_{4, "rollups"}, outbox_{5, "outbox"}, other_{7, "queue"};
  std::map<uint32_t, std::string> families_;
  std::map<uint64_t, std::string> counters_;
};

TEST_F(WalDecodeTest, DecodesEveryFamilysKeysAndValues) {
  // Each key and value layout of docs/format.md comes back as one named op.
  rocksdb::WriteBatch wb;
  ASSERT_TRUE(wb.Merge(&shards_, ShardKey(1, 3), Int(5)).ok());
  ASSERT_TRUE(wb.Merge(&shards_, BucketKey(1, kDay, 1), Int(-2)).ok());
  ASSERT_TRUE(wb.Merge(&shards_, ShardKey(9, 0), Int(1)).ok());
  ASSERT_TRUE(wb.Put(&shards_, ShardKey(1, 2), Int(40)).ok());
  std::string marker_key, marker;
  engine::EncodeMarkerKey(1, "ORDER:1", &marker_key);
  schema::EncodeMarker("ORDER:1", 1, 3, 5, kNow, &marker);
  ASSERT_TRUE(wb.Put(&events_, marker_key, marker).ok());
  ASSERT_TRUE(wb.Delete(&events_, marker_key).ok());
  std::string header, counter;
  schema::HeaderRecord h;
  h.format_version = 2;
  h.next_counter_id = 2;
  h.db_id = "00112233445566778899aabbccddeeff";
  schema::EncodeHeader(h, &header);
  schema::CounterRecord c;
  c.id = 1;
  c.name = "orders";
  c.shard_count = 4;
  c.schema_version = 1;
  c.bucket = 3;
  c.retention_ms = 1000;
  schema::EncodeCounter(c, &counter);
  ASSERT_TRUE(wb.Put(&meta_, std::string(1, '\x01'), header).ok());
  ASSERT_TRUE(wb.Put(&meta_, engine::CounterMetaKey("orders"), counter).ok());
  ASSERT_TRUE(wb.Delete(&meta_, engine::CounterMetaKey("orders")).ok());
  char rollup[engine::kRollupBytes];
  engine::EncodeRollup({12, 77, kNow}, rollup);
  ASSERT_TRUE(
      wb.Put(&rollups_, Prefix(1), std::string(rollup, sizeof rollup)).ok());
  ASSERT_TRUE(wb.DeleteRange(&shards_, Prefix(1), Prefix(2)).ok());
  ASSERT_TRUE(wb.DeleteRange(&events_, Prefix(1), Prefix(3)).ok());
  char mark[8];
  engine::EncodeFixed64BE(static_cast<uint64_t>(kNow), mark);
  ASSERT_TRUE(
      wb.Put(&meta_, engine::kTimeMarkKey, rocksdb::Slice(mark, 8)).ok());
  ASSERT_TRUE(wb.PutLogData("hi").ok());

  tally::DumpBatch b = Decode(42, wb);
  EXPECT_EQ(b.seq, 42u);
  EXPECT_EQ(b.count, 13u);  // log data takes no sequence number
  const std::vector<std::string> want = {
      "merge counter=orders shard=3 delta=+5",
      "merge counter=orders bucket=2026-11-30T00:00:00.000Z shard=1 delta=-2",
      "merge id=9 shard=0 delta=+1",
      "shard-put counter=orders shard=2 value=40",
      "marker counter=orders event=ORDER:1 shard=3 delta=5 "
      "created_at=2026-11-30T10:00:00.000Z",
      "marker-delete counter=orders event=ORDER:1",
      "header put format_version=2 next_counter_id=2",
      "counter-meta put name=orders id=1 shards=4 flags=0 bucket_width=day "
      "retention_ms=1000",
      "counter-meta delete name=orders",
      "rollup counter=orders value=12 as_of_seq=77 "
      "as_of=2026-11-30T10:00:00.000Z",
      "delete-range family=shards counter=orders",
      "delete-range family=events begin=0000000000000001 "
      "end=0000000000000003",
      "time-mark put at=2026-11-30T10:00:00.000Z",
      "log-data blob=6869",
  };
  EXPECT_EQ(Texts(b), want);
  const json j = counterctl::WalBatchJson(b);
  EXPECT_EQ(j["seq"], 42);
  EXPECT_EQ(j["count"], 13);
  EXPECT_EQ(j["ops"][0], (json{{"op", "merge"},
                               {"counter", "orders"},
                               {"counter_id", 1},
                               {"shard", 3},
                               {"delta", 5}}));
  EXPECT_TRUE(j["ops"][2]["counter"].is_null());
  EXPECT_EQ(j["ops"][2]["counter_id"], 9);
  EXPECT_EQ(counterctl::WalBatchText(b).rfind(
                "batch seq=42 ops=13\n  merge counter=orders shard=3", 0),
            0u);
}

TEST_F(WalDecodeTest, WhatTallyDoesNotWriteIsRawHexWithAReason) {
  // Undecodable entries are shown, never dropped and never a crash.
  rocksdb::WriteBatch wb;
  ASSERT_TRUE(wb.Merge(&shards_, ShardKey(1, 0), "1234567").ok());
  ASSERT_TRUE(wb.Merge(&shards_, "short", Int(1)).ok());
  std::string marker_key;
  engine::EncodeMarkerKey(1, "E", &marker_key);
  ASSERT_TRUE(wb.Put(&events_, marker_key, "not a flatbuffer").ok());
  ASSERT_TRUE(wb.Put(&meta_, "\x09", "x").ok());
  ASSERT_TRUE(wb.Put(&other_, "k", "v").ok());
  ASSERT_TRUE(wb.Put(&rollups_, Prefix(1), "short").ok());
  tally::DumpBatch b = Decode(1, wb);
  ASSERT_EQ(b.ops.size(), 6u);
  EXPECT_EQ(counterctl::WalOpText(b.ops[0]),
            "raw family=shards type=merge key=000000000000000100000000 "
            "value=31323334353637 reason=\"malformed value (7 bytes, "
            "expected 8 or 16)\"");
  EXPECT_EQ(counterctl::WalOpText(b.ops[1]),
            "raw family=shards type=merge key=73686f7274 "
            "value=0100000000000000 reason=\"a shard key is 12 or 20 "
            "bytes, or keyed (id, key, 0x00, [bucket], shard)\"");
  EXPECT_EQ(counterctl::WalOpText(b.ops[2]).rfind(
                "raw family=events type=put key=", 0),
            0u)
      << counterctl::WalOpText(b.ops[2]);
  EXPECT_NE(counterctl::WalOpText(b.ops[2]).find("reason=\"Corruption: "),
            std::string::npos)
      << counterctl::WalOpText(b.ops[2]);
  EXPECT_EQ(counterctl::WalOpText(b.ops[3]),
            "raw family=meta type=put key=09 value=78 reason=\"unknown meta "
            "key\"");
  EXPECT_EQ(counterctl::WalOpText(b.ops[4]),
            "raw family_id=7 type=put key=6b value=76 reason=\"unknown "
            "column family\"");
  EXPECT_EQ(counterctl::WalOpText(b.ops[5]),
            "raw family=rollups type=put key=0000000000000001 "
            "value=73686f7274 reason=\"malformed roll-up value (5 bytes, "
            "expected 24)\"");
  EXPECT_EQ(counterctl::WalOpJson(b.ops[4])["family_id"], 7);
  EXPECT_EQ(counterctl::WalOpJson(b.ops[4])["key_hex"], "6b");

  // A batch RocksDB cannot iterate: its bytes and RocksDB's error.
  std::string rep(8, '\0');
  rep += std::string("\x01\0\0\0", 4);  // count 1
  rep += "\x7f";                        // no such record type
  rocksdb::WriteBatch bad(rep);
  b = Decode(5, bad);
  ASSERT_EQ(b.ops.size(), 1u);
  EXPECT_EQ(counterctl::WalOpText(b.ops[0]).rfind(
                "raw type=batch value=00000000000000000100000"
                "07f reason=\"",
                0),
            0u)
      << counterctl::WalOpText(b.ops[0]);
  rocksdb::WriteBatch tiny(std::string("abc"));
  b = Decode(5, tiny);
  ASSERT_EQ(b.ops.size(), 1u);
  EXPECT_EQ(counterctl::WalOpText(b.ops[0]),
            "raw type=batch value=616263 reason=\"shorter than a batch "
            "header\"");
}

TEST(WalGap, OnlyMissingSequencesAreAGap) {
  // Batch (10, 3) takes 10..12: a next batch at 13 is contiguous.
  uint64_t from = 0, to = 0;
  EXPECT_FALSE(engine::FindWalGap(10, 3, 13, &from, &to));
  EXPECT_FALSE(engine::FindWalGap(10, 0, 10, &from, &to));
  ASSERT_TRUE(engine::FindWalGap(10, 3, 20, &from, &to));
  EXPECT_EQ(from, 13u);
  EXPECT_EQ(to, 19u);
  EXPECT_EQ(counterctl::WalGapText(from, to), "gap from=13 to=19\n");
  EXPECT_EQ(counterctl::WalGapJson(from, to),
            (json{{"gap_from", 13}, {"gap_to", 19}}));
}

}  // namespace
}  // namespace tally::test
