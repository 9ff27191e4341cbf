// Read-only opens (RocksDB secondary instances) beside a live writer: they
// need no lock, see a consistent point, catch up on Refresh and refuse writes.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "testutil/db_fixture.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

Options ReadOnly() {
  Options o;
  o.read_only = true;
  return o;
}

class ReadOnlyDb : public test::DbTest {};

TEST_F(ReadOnlyDb, ReadsBesideWriterAndCatchesUpOnRefresh) {
  auto writer = Open();
  ASSERT_OK(writer->CreateCounter("c", {4}));
  for (int i = 0; i < 10; ++i) ASSERT_OK(writer->IncrementOnce("c", std::to_string(i), 1));

  auto reader = Open(ReadOnly());
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(test::OkValue(reader->ReadExact("c")), 10);
  EXPECT_EQ(test::OkValue(reader->CountMarkers("c")), 10u);

  ASSERT_OK(writer->Increment("c", 5));
  ASSERT_OK(writer->CreateCounter("later", {1}));
  ASSERT_OK(writer->Increment("later", 2));
  EXPECT_EQ(test::OkValue(reader->ReadExact("c")), 10)
      << "a consistent point until Refresh";
  EXPECT_TRUE(reader->DescribeCounter("later").status().IsNotFound());

  ASSERT_OK(reader->Refresh());
  EXPECT_EQ(test::OkValue(reader->ReadExact("c")), 15);
  EXPECT_EQ(test::OkValue(reader->ReadExact("later")), 2);
  ASSERT_OK(writer->Refresh());  // a writer is always current
}

TEST_F(ReadOnlyDb, RefusesEveryWrite) {
  ASSERT_OK(Open()->CreateCounter("c", {2}));
  auto reader = Open(ReadOnly());
  ASSERT_NE(reader, nullptr);
  EXPECT_TRUE(reader->Increment("c", 1).status().IsNotSupported());
  EXPECT_TRUE(reader->IncrementOnce("c", "e", 1).status().IsNotSupported());
  Batch b;
  b.Add("c", 1);
  std::vector<IncrementResult> r;
  EXPECT_TRUE(reader->Apply(b, &r).IsNotSupported());
  EXPECT_TRUE(reader->CreateCounter("x", {1}).IsNotSupported());
  Status s = reader->DeleteCounter("c");
  EXPECT_TRUE(s.IsNotSupported());
  EXPECT_NE(s.message().find("read-only"), std::string::npos);
  EXPECT_EQ(test::OkValue(reader->ReadExact("c")), 0);
}

TEST_F(ReadOnlyDb, MissingDatabaseIsNotFoundAndNotCreated) {
  std::unique_ptr<Db> db;
  Options o = ReadOnly();
  o.create_if_missing = true;  // ignored for readers
  EXPECT_TRUE(Db::Open(o, Sub("none"), &db).IsNotFound());
}

// Reads while a writer thread is committing: every read is a consistent
// point between the start and the end, and after the writer stops a Refresh
// sees the final total.
TEST_F(ReadOnlyDb, ValuesLieBetweenStartAndEndDuringWrites) {
  auto writer = Open();
  ASSERT_OK(writer->CreateCounter("c", {8}));
  auto reader = Open(ReadOnly());
  ASSERT_NE(reader, nullptr);
  constexpr int kWrites = 5000;
  std::atomic<bool> done{false};
  std::thread t([&] {
    for (int i = 0; i < kWrites; ++i) EXPECT_OK(writer->Increment("c", 1));
    done = true;
  });
  int64_t last = 0;
  int reads = 0;
  while (!done.load() || reads == 0) {
    ASSERT_OK(reader->Refresh());
    auto v = reader->ReadExact("c");
    ASSERT_OK(v);
    EXPECT_GE(*v, last) << "a later refresh never goes back";
    EXPECT_LE(*v, kWrites);
    last = *v;
    ++reads;
  }
  t.join();
  ASSERT_OK(reader->Refresh());
  EXPECT_EQ(test::OkValue(reader->ReadExact("c")), kWrites);
}

}  // namespace
}  // namespace tally
