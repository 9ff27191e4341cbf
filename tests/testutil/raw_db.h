// RawDb: a tally database opened straight through RocksDB with the engine's
// own configuration (options and column families), for tests and test
// tools that must write or inspect bytes behind the engine's back
// (corruption, crash invariants, format checks) or drive an engine part
// (the catalog) without a Db around it. The one place tests open a tally
// database raw.
//
// Needs no gtest (the crash driver uses it): an open that fails leaves db()
// null, status() says why and the constructor prints it to stderr.
//
// Ownership: owns the rocksdb::DB and its column family handles.
// Thread safety: as rocksdb::DB.
#ifndef TALLY_TESTS_RAW_DB_H_
#define TALLY_TESTS_RAW_DB_H_

#include <rocksdb/db.h>

#include <cassert>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "engine/rocksdb_options.h"

namespace tally::test {

enum class RawMode {
  kWritable,  // `path` holds a closed tally database
  kCreate,    // as kWritable, creating the database and its families
  kReadOnly,  // rocksdb::DB::OpenForReadOnly: also beside a live writer
};

class RawDb {
 public:
  explicit RawDb(const std::string& path, RawMode mode = RawMode::kWritable) {
    engine::RocksOptions ro = engine::MakeRocksOptions(Options());
    if (mode == RawMode::kCreate) {
      ro.db.create_if_missing = true;
      ro.db.create_missing_column_families = true;
    }
    rocksdb::DB* raw = nullptr;
    status_ =
        mode == RawMode::kReadOnly
            ? rocksdb::DB::OpenForReadOnly(ro.db, path, ro.families, &handles_,
                                           &raw)
            : rocksdb::DB::Open(ro.db, path, ro.families, &handles_, &raw);
    if (!status_.ok()) {
      std::fprintf(stderr, "raw open %s: %s\n", path.c_str(),
                   status_.ToString().c_str());
    }
    db_.reset(raw);
  }
  ~RawDb() {
    if (db_ == nullptr) return;
    for (auto* h : handles_) {
      rocksdb::Status s = db_->DestroyColumnFamilyHandle(h);
      if (!s.ok())
        std::fprintf(stderr, "raw close: %s\n", s.ToString().c_str());
    }
  }
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;

  // The open's status; db() is null unless it is OK.
  const rocksdb::Status& status() const { return status_; }
  rocksdb::DB* db() { return db_.get(); }
  rocksdb::ColumnFamilyHandle* family(engine::Family f) {
    assert(db_ != nullptr);
    return handles_[f];
  }

  // Every key of a family, in order.
  std::unique_ptr<rocksdb::Iterator> Scan(engine::Family f) {
    rocksdb::ReadOptions read;
    read.total_order_seek = true;  // across counter prefixes
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read, family(f)));
    it->SeekToFirst();
    return it;
  }

 private:
  rocksdb::Status status_;
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
};

}  // namespace tally::test

#endif  // TALLY_TESTS_RAW_DB_H_
