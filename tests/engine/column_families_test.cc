// The table of column families (engine/column_families.h), walked: for
// EVERY entry, a malformed record is reported by Verify, the family appears
// in GetDbStats, and Compact compacts it. The test iterates the table, so a
// family added to it is covered without a change here (Populate must write
// to it: the test says so when it does not). Also the outbox family's
// decoders, which nothing else unit-tests, and the two defects of issue 13
// (FamilyCoverage: Verify and Compact skipped rollups and outbox).
#include "engine/column_families.h"

#include <gtest/gtest.h>

#include "engine/coding.h"
#include "engine/db_impl.h"
#include "engine/family_record.h"
#include "engine/format.h"
#include "engine/test_hooks.h"
#include "schema/records.h"
#include "tally/admin.h"
#include "tally/outbox.h"
#include "testutil/raw_db.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

using engine::ColumnFamilies;
using engine::ColumnFamily;
using test::Dump;
using test::Mentions;
using test::OpenOrDie;
using test::RawDb;
using test::TempDir;

// A key no family's decoder accepts (3 bytes: no family has such keys).
constexpr char kBadKey[] = "\xff\xfe\xfd";

// Writes something to every family: a once-only counter with an outbox,
// rolled up.
void Populate(const std::string& path) {
  Options o;
  o.rollup_interval_ms = 0;
  auto db = OpenOrDie(path, o);
  ASSERT_OK(db->CreateCounter("c", test::OutboxSpec(2)));
  ASSERT_OK(db->IncrementOnce("c", "e1", 3));
  ASSERT_OK(db->IncrementOnce("c", "e2", 4));
  ASSERT_OK(db->RollupNow("c"));
  // The holds family: a reservation of a stock.
  CounterSpec stock;
  stock.bounds = CounterBounds::AtLeast(0);
  ASSERT_OK(db->CreateCounter("stock", stock));
  ASSERT_OK(db->Increment("stock", 5));
  ASSERT_OK(db->Reserve("stock", "cart-1", 2, 60'000));
  // The claims family: a completed claim.
  ASSERT_OK(db->Claim("item:1", "worker", 60'000));
  ASSERT_OK(db->CompleteClaim("item:1", 1, "row 1"));
}

// The first key of every family, after checking each has one.
std::vector<std::string> FirstKeys(const std::string& path) {
  std::vector<std::string> keys;
  RawDb raw(path);
  for (const ColumnFamily& f : ColumnFamilies()) {
    auto it = raw.Scan(f.index);
    EXPECT_TRUE(it->Valid()) << "Populate writes nothing to family " << f.name
                             << ": make it write a record there";
    keys.push_back(it->Valid() ? it->key().ToString() : std::string());
  }
  return keys;
}

TEST(ColumnFamilyTable, IsInFamilyOrderAndRejectsAForeignKey) {
  ASSERT_EQ(ColumnFamilies().size(),
            static_cast<size_t>(engine::kTallyFamilyCount));
  for (size_t i = 0; i < ColumnFamilies().size(); ++i) {
    const ColumnFamily& f = ColumnFamilies()[i];
    EXPECT_EQ(f.index, static_cast<int>(i) + 1) << f.name;
    EXPECT_EQ(engine::FindFamily(f.name), &f);
    engine::FamilyRecord rec;
    EXPECT_FALSE(f.decode_key(std::string_view(kBadKey, 3), &rec).empty())
        << f.name << " accepts " << engine::HexKey(kBadKey);
  }
  EXPECT_EQ(engine::FindFamily("default"), nullptr);
}

TEST(ColumnFamilyTable, EveryFamilyIsInStatsAndCompacted) {
  TempDir dir;
  Populate(dir.path());
  {
    // One level-0 table file in every family.
    RawDb raw(dir.path());
    for (const ColumnFamily& f : ColumnFamilies()) {
      ASSERT_TRUE(
          raw.db()->Flush(rocksdb::FlushOptions(), raw.family(f.index)).ok())
          << f.name;
    }
  }
  auto db = OpenOrDie(dir.path());
  Result<DbStats> before = tally::GetDbStats(*db);
  ASSERT_OK(before);
  ASSERT_EQ(before->families.size(), ColumnFamilies().size());
  for (const ColumnFamily& f : ColumnFamilies()) {
    const FamilyStats* s = before->Family(f.name);
    ASSERT_NE(s, nullptr) << f.name << " is missing from GetDbStats";
    EXPECT_GE(s->l0_files, 1u) << f.name;
    EXPECT_GT(s->sst_bytes, 0u) << f.name;
  }
  ASSERT_OK(tally::Compact(*db));
  Result<DbStats> after = tally::GetDbStats(*db);
  ASSERT_OK(after);
  for (const ColumnFamily& f : ColumnFamilies()) {
    const FamilyStats* s = after->Family(f.name);
    ASSERT_NE(s, nullptr) << f.name;
    EXPECT_EQ(s->l0_files, 0u) << f.name << " was not compacted";
    EXPECT_GT(s->sst_bytes, 0u) << f.name;
  }
}

TEST(ColumnFamilyTable, VerifyReportsAMalformedRecordInEveryFamily) {
  TempDir dir;
  Populate(dir.path());
  const std::vector<std::string> first = FirstKeys(dir.path());
  Options o;
  o.rollup_interval_ms = 0;
  auto db = OpenOrDie(dir.path(), o);
  // The damage goes in after Verify copied the catalog and before its
  // snapshot: an open refuses some of it (a bad meta record), and Verify
  // is what must find damage done to a database already open.
  static_cast<engine::DbImpl*>(db.get())->SetVerifyHookForTest([&] {
    // In every family: a key its decoder rejects, and the value of a record
    // tally wrote replaced by 3 bytes, which no record of any family is.
    for (const ColumnFamily& f : ColumnFamilies()) {
      EXPECT_OK(engine::PutRawForTest(db.get(), f.index,
                                      std::string_view(kBadKey, 3), "v"));
      EXPECT_OK(
          engine::PutRawForTest(db.get(), f.index, first[f.index - 1], "abc"));
    }
  });
  VerifyReport r;
  ASSERT_OK(tally::Verify(*db, &r));
  for (const ColumnFamily& f : ColumnFamilies()) {
    const std::string name = f.name;
    EXPECT_TRUE(Mentions(r, name + ": malformed key " +
                                engine::HexKey(std::string_view(kBadKey, 3))))
        << name << "\n"
        << Dump(r);
    EXPECT_TRUE(
        Mentions(r, name + ": key " + engine::HexKey(first[f.index - 1])))
        << name << "\n"
        << Dump(r);
  }
}

// The defects issue 13 found, named: Verify and Compact skipped the
// rollups and outbox families.
// Populate's counter's id.
uint64_t PopulateRollupAndOutbox(const std::string& path) {
  Populate(path);
  return test::OkValue(OpenOrDie(path)->DescribeCounter("c")).id;
}

TEST(FamilyCoverage, VerifyReportsAMalformedRollup) {
  TempDir dir;
  const uint64_t id = PopulateRollupAndOutbox(dir.path());
  {
    RawDb raw(dir.path());
    char key[engine::kCounterIdBytes];
    engine::EncodeCounterPrefix(id, key);
    ASSERT_TRUE(raw.db()
                    ->Put(rocksdb::WriteOptions(), raw.family(engine::kRollups),
                          rocksdb::Slice(key, sizeof key), "abc")
                    .ok());
  }
  auto db = OpenOrDie(dir.path());
  EXPECT_TRUE(db->ReadCached("c").status().IsCorruption());
  VerifyReport r;
  ASSERT_OK(tally::Verify(*db, &r));
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(Mentions(r, "rollups")) << Dump(r);
}

TEST(FamilyCoverage, VerifyReportsAMalformedOutboxEntry) {
  TempDir dir;
  PopulateRollupAndOutbox(dir.path());
  {
    RawDb raw(dir.path());
    char key[8];
    engine::EncodeFixed64BE(1, key);
    ASSERT_TRUE(raw.db()
                    ->Put(rocksdb::WriteOptions(), raw.family(engine::kOutbox),
                          rocksdb::Slice(key, sizeof key), "not a flatbuffer")
                    .ok());
  }
  auto db = OpenOrDie(dir.path());
  EXPECT_FALSE(tally::ReadOutbox(*db, 0, 10).ok());
  VerifyReport r;
  ASSERT_OK(tally::Verify(*db, &r));
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(Mentions(r, "outbox")) << Dump(r);
}

TEST(FamilyCoverage, CompactLeavesNoLevel0FileInRollupsOrOutbox) {
  TempDir dir;
  PopulateRollupAndOutbox(dir.path());
  {
    RawDb raw(dir.path());
    for (engine::Family f : {engine::kRollups, engine::kOutbox}) {
      ASSERT_TRUE(raw.db()->Flush(rocksdb::FlushOptions(), raw.family(f)).ok());
    }
  }
  {
    auto db = OpenOrDie(dir.path());
    ASSERT_OK(tally::Compact(*db));
  }
  RawDb raw(dir.path());
  for (engine::Family f : {engine::kRollups, engine::kOutbox}) {
    std::string l0;
    ASSERT_TRUE(raw.db()->GetProperty(raw.family(f),
                                      "rocksdb.num-files-at-level0", &l0));
    EXPECT_EQ(l0, "0") << raw.family(f)->GetName();
  }
}

std::string OutboxKey(uint64_t seq) {
  char k[8];
  engine::EncodeFixed64BE(seq, k);
  return std::string(k, 8);
}

TEST(OutboxDecoder, DecodesWhatTheEngineWritesAndRejectsTheRest) {
  const std::string origin(32, 'a');
  schema::OutboxFields fields;
  fields.seq = 7;
  fields.counter = "c";
  fields.event_id = "e";
  fields.delta = -2;
  fields.time_ms = 1000;
  fields.origin = origin;
  fields.origin_seq = 3;
  fields.settled = 5;
  std::string value;
  schema::EncodeOutbox(fields, &value);

  engine::FamilyRecord rec;
  ASSERT_EQ(engine::DecodeOutboxKey(OutboxKey(7), &rec), "");
  EXPECT_EQ(rec.kind, engine::RecordKind::kOutboxEntry);
  ASSERT_EQ(engine::DecodeOutboxValue(value, &rec), "");
  EXPECT_EQ(rec.outbox.counter, "c");
  EXPECT_EQ(rec.outbox.event_id, "e");
  EXPECT_EQ(rec.outbox.delta, -2);
  EXPECT_EQ(rec.outbox.origin, origin);
  EXPECT_EQ(rec.outbox.origin_seq, 3u);
  EXPECT_EQ(rec.outbox.settled, 5u);

  // Under another seq's key.
  engine::FamilyRecord other;
  ASSERT_EQ(engine::DecodeOutboxKey(OutboxKey(8), &other), "");
  EXPECT_EQ(engine::DecodeOutboxValue(value, &other),
            "its key does not hold its seq");
  // A settled watermark not below its seq.
  fields.settled = 7;
  schema::EncodeOutbox(fields, &value);
  engine::FamilyRecord late;
  ASSERT_EQ(engine::DecodeOutboxKey(OutboxKey(7), &late), "");
  EXPECT_NE(engine::DecodeOutboxValue(value, &late).find("not below its seq"),
            std::string::npos);
  // An origin that is not a database id.
  fields.settled = 0;
  fields.origin = "ZZ";
  schema::EncodeOutbox(fields, &value);
  engine::FamilyRecord bad_origin;
  ASSERT_EQ(engine::DecodeOutboxKey(OutboxKey(7), &bad_origin), "");
  EXPECT_NE(engine::DecodeOutboxValue(value, &bad_origin).find("origin"),
            std::string::npos);

  // The settled record: 8 bytes at key 0.
  engine::FamilyRecord settled;
  ASSERT_EQ(engine::DecodeOutboxKey(OutboxKey(0), &settled), "");
  EXPECT_EQ(settled.kind, engine::RecordKind::kOutboxSettled);
  EXPECT_EQ(engine::DecodeOutboxValue(OutboxKey(9), &settled), "");
  EXPECT_EQ(settled.word, 9u);
  EXPECT_NE(engine::DecodeOutboxValue("abc", &settled), "");
  EXPECT_NE(engine::DecodeOutboxKey("short", &settled), "");
}

}  // namespace
}  // namespace tally
