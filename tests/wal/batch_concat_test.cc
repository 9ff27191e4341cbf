// BatchConcat: a WriteBatch built by joining other batches' reps holds
// exactly their records, in order, and a database that applies it (and
// replays it from its WAL after a reopen) ends up exactly like one that
// applied the parts one by one.

#include "wal/batch_concat.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/write_batch.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "testutil/testutil.h"

namespace tally {
namespace {

// Appends operands with a separator, so the result shows order.
class AppendOperator : public rocksdb::AssociativeMergeOperator {
 public:
  bool Merge(const rocksdb::Slice&, const rocksdb::Slice* existing,
             const rocksdb::Slice& value, std::string* out,
             rocksdb::Logger*) const override {
    *out = existing != nullptr ? existing->ToString() + "," : "";
    out->append(value.data(), value.size());
    return true;
  }
  const char* Name() const override { return "TestAppend"; }
};

// Every record a batch holds, one line each.
class Trace : public rocksdb::WriteBatch::Handler {
 public:
  std::vector<std::string> lines;
  rocksdb::Status PutCF(uint32_t cf, const rocksdb::Slice& k,
                        const rocksdb::Slice& v) override {
    return Add("put", cf, k, v);
  }
  rocksdb::Status MergeCF(uint32_t cf, const rocksdb::Slice& k,
                          const rocksdb::Slice& v) override {
    return Add("merge", cf, k, v);
  }
  rocksdb::Status DeleteCF(uint32_t cf, const rocksdb::Slice& k) override {
    return Add("delete", cf, k, "");
  }
  rocksdb::Status SingleDeleteCF(uint32_t cf,
                                 const rocksdb::Slice& k) override {
    return Add("single-delete", cf, k, "");
  }
  rocksdb::Status DeleteRangeCF(uint32_t cf, const rocksdb::Slice& b,
                                const rocksdb::Slice& e) override {
    return Add("delete-range", cf, b, e);
  }
  void LogData(const rocksdb::Slice& blob) override {
    lines.push_back("log-data " + blob.ToString());
  }

 private:
  rocksdb::Status Add(const char* op, uint32_t cf, const rocksdb::Slice& a,
                      const rocksdb::Slice& b) {
    lines.push_back(std::string(op) + " " + std::to_string(cf) + " " +
                    a.ToString() + " " + b.ToString());
    return rocksdb::Status::OK();
  }
};

std::vector<std::string> TraceOf(const rocksdb::WriteBatch& b) {
  Trace t;
  EXPECT_TRUE(b.Iterate(&t).ok());
  return t.lines;
}

// A database with the default family and two more, all merging by append.
class Store {
 public:
  explicit Store(const std::string& path) : path_(path) { Open(); }
  ~Store() { Close(); }
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  void Open() {
    rocksdb::Options o;
    o.create_if_missing = true;
    o.create_missing_column_families = true;
    o.merge_operator = std::make_shared<AppendOperator>();
    // Keep the memtables unflushed at close: the reopen replays the WAL.
    o.avoid_flush_during_shutdown = true;
    std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
    for (const char* name : {"default", "a", "b"}) {
      cfs.emplace_back(name, rocksdb::ColumnFamilyOptions(o));
    }
    rocksdb::DB* raw = nullptr;
    rocksdb::Status s = rocksdb::DB::Open(o, path_, cfs, &handles_, &raw);
    ASSERT_TRUE(s.ok()) << s.ToString();
    db_.reset(raw);
  }
  void Close() {
    for (auto* h : handles_) EXPECT_TRUE(db_->DestroyColumnFamilyHandle(h).ok());
    handles_.clear();
    if (db_ != nullptr) {
      EXPECT_TRUE(db_->Close().ok());
    }
    db_.reset();
  }
  rocksdb::DB* db() { return db_.get(); }
  rocksdb::ColumnFamilyHandle* cf(size_t i) { return handles_[i]; }

  // Every key and value of every family.
  std::vector<std::string> Dump() {
    std::vector<std::string> out;
    for (size_t i = 0; i < handles_.size(); ++i) {
      std::unique_ptr<rocksdb::Iterator> it(
          db_->NewIterator(rocksdb::ReadOptions(), handles_[i]));
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        out.push_back(std::to_string(i) + " " + it->key().ToString() + "=" +
                      it->value().ToString());
      }
      EXPECT_TRUE(it->status().ok());
    }
    return out;
  }

 private:
  std::string path_;
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
};

// Random small batches over three families and every record kind tally or
// RocksDB may put in a batch; some empty, some only log data.
std::vector<rocksdb::WriteBatch> RandomBatches(Store* store, uint32_t seed,
                                               int n) {
  std::mt19937 rng(seed);
  auto key = [&rng] { return "k" + std::to_string(rng() % 40); };
  std::vector<rocksdb::WriteBatch> out(n);
  for (auto& b : out) {
    const int records = static_cast<int>(rng() % 6);  // 0..5
    for (int r = 0; r < records; ++r) {
      rocksdb::ColumnFamilyHandle* cf = store->cf(rng() % 3);
      const std::string v = "v" + std::to_string(rng() % 1000);
      rocksdb::Status s;
      switch (rng() % 7) {
        case 0: s = b.Put(cf, key(), v); break;
        case 1: case 2: s = b.Merge(cf, key(), v); break;
        case 3: s = b.Delete(cf, key()); break;
        // SingleDelete is defined only for keys written at most once:
        // these keys get nothing else.
        case 4: s = b.SingleDelete(cf, "single-" + key()); break;
        case 5: {
          std::string lo = key(), hi = key();
          if (hi < lo) std::swap(lo, hi);
          s = b.DeleteRange(cf, lo, hi);
          break;
        }
        default: s = b.PutLogData("blob" + v); break;
      }
      EXPECT_TRUE(s.ok()) << s.ToString();
    }
  }
  return out;
}

TEST(BatchConcat, HoldsEveryRecordOfItsPartsInOrder) {
  test::TempDir dir;
  Store store(dir.Sub("db"));
  std::vector<rocksdb::WriteBatch> parts = RandomBatches(&store, 7, 200);
  wal::BatchConcat concat;
  std::vector<std::string> expected;
  uint32_t count = 0;
  for (const auto& p : parts) {
    concat.Append(p);
    for (auto& line : TraceOf(p)) expected.push_back(line);
    count += p.Count();
  }
  ASSERT_GT(count, 200u);  // the parts are not all empty
  rocksdb::WriteBatch group = concat.Finish();
  EXPECT_EQ(group.Count(), count);
  EXPECT_EQ(TraceOf(group), expected);
  // The builder starts over: a second group holds only what follows.
  concat.Append(parts[1]);
  rocksdb::WriteBatch second = concat.Finish();
  EXPECT_EQ(second.Count(), parts[1].Count());
  EXPECT_EQ(TraceOf(second), TraceOf(parts[1]));
}

TEST(BatchConcat, EmptyGroupIsAnEmptyBatch) {
  wal::BatchConcat concat;
  concat.Append(rocksdb::WriteBatch());
  rocksdb::WriteBatch group = concat.Finish();
  EXPECT_EQ(group.Count(), 0u);
  EXPECT_EQ(group.GetDataSize(), wal::kBatchHeaderBytes);
}

TEST(BatchConcat, ReplaysLikeItsPartsAlsoFromTheLog) {
  test::TempDir dir;
  Store joined(dir.Sub("joined"));
  Store apart(dir.Sub("apart"));
  // Same family ids in both stores, so the same batches fit both.
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    std::vector<rocksdb::WriteBatch> parts = RandomBatches(&joined, seed, 100);
    wal::BatchConcat concat;
    for (auto& p : parts) {
      concat.Append(p);
      ASSERT_TRUE(apart.db()->Write(rocksdb::WriteOptions(), &p).ok());
    }
    rocksdb::WriteBatch group = concat.Finish();
    ASSERT_TRUE(joined.db()->Write(rocksdb::WriteOptions(), &group).ok());
  }
  const std::vector<std::string> want = apart.Dump();
  ASSERT_GT(want.size(), 20u);
  EXPECT_EQ(joined.Dump(), want);
  // Reopened without a flush: the group comes back from the WAL.
  joined.Close();
  joined.Open();
  EXPECT_EQ(joined.Dump(), want);
}

}  // namespace
}  // namespace tally
