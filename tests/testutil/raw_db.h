// RawDb: a tally database opened straight through RocksDB with the engine's
// own configuration, for tests that must write or inspect bytes behind the
// engine's back (corruption, crash invariants, format checks).
//
// Ownership: owns the rocksdb::DB and its column family handles.
// Thread safety: as rocksdb::DB.
#ifndef TALLY_TESTS_RAW_DB_H_
#define TALLY_TESTS_RAW_DB_H_

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/rocksdb_options.h"

namespace tally::test {

class RawDb {
 public:
  // Opens `path` (which must hold a closed tally database); fails the test
  // and leaves db() null on error.
  explicit RawDb(const std::string& path) {
    engine::RocksOptions ro = engine::MakeRocksOptions(Options());
    rocksdb::DB* raw = nullptr;
    rocksdb::Status s =
        rocksdb::DB::Open(ro.db, path, ro.families, &handles_, &raw);
    EXPECT_TRUE(s.ok()) << "raw open " << path << ": " << s.ToString();
    db_.reset(raw);
  }
  ~RawDb() {
    if (db_ == nullptr) return;
    for (auto* h : handles_) EXPECT_TRUE(db_->DestroyColumnFamilyHandle(h).ok());
  }
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;

  rocksdb::DB* db() { return db_.get(); }
  rocksdb::ColumnFamilyHandle* family(engine::Family f) { return handles_[f]; }

  // Every key of a family, in order.
  std::unique_ptr<rocksdb::Iterator> Scan(engine::Family f) {
    rocksdb::ReadOptions read;
    read.total_order_seek = true;  // across counter prefixes
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read, family(f)));
    it->SeekToFirst();
    return it;
  }

 private:
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
};

}  // namespace tally::test

#endif  // TALLY_TESTS_RAW_DB_H_
