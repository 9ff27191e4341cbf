// Opening: fresh, reopen, paths that are not tally databases, a newer
// format, a database already held.
#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <filesystem>
#include <fstream>

#include "engine/format.h"
#include "engine/rocksdb_options.h"
#include "schema/records.h"
#include "testutil/db_fixture.h"
#include "testutil/raw_db.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

class DbOpen : public test::DbTest {};

TEST_F(DbOpen, MissingWithoutCreateIsNotFound) {
  Options o;
  o.create_if_missing = false;
  std::unique_ptr<Db> db;
  Status s = Db::Open(o, Sub("nothing"), &db);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_EQ(db, nullptr);
}

TEST_F(DbOpen, DirectoryWithOtherFilesIsRefused) {
  std::filesystem::create_directory(path());
  std::ofstream(path() + "/notes.txt") << "hello";
  std::unique_ptr<Db> db;
  Status s = Db::Open(Options(), path(), &db);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("not a tally database"), std::string::npos);
  EXPECT_NE(s.message().find(path()), std::string::npos);
}

TEST_F(DbOpen, PlainFileIsRefused) {
  std::ofstream(Sub("file")) << "x";
  std::unique_ptr<Db> db;
  EXPECT_TRUE(Db::Open(Options(), Sub("file"), &db).IsInvalidArgument());
}

TEST_F(DbOpen, PlainRocksDbIsRefused) {
  {
    rocksdb::Options o;
    o.create_if_missing = true;
    rocksdb::DB* raw;
    ASSERT_TRUE(rocksdb::DB::Open(o, path(), &raw).ok());
    delete raw;
  }
  std::unique_ptr<Db> db;
  Status s = Db::Open(Options(), path(), &db);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("column family 'meta'"), std::string::npos);
}

TEST_F(DbOpen, SecondOpenIsBusyNamingPath) {
  auto first = Open();
  std::unique_ptr<Db> second;
  Status s = Db::Open(Options(), path(), &second);
  EXPECT_TRUE(s.IsBusy()) << s.ToString();
  EXPECT_NE(s.message().find(path()), std::string::npos);
  EXPECT_NE(s.message().find("in use"), std::string::npos);
}

// A database written by a newer format is refused, not misread.
TEST_F(DbOpen, NewerFormatIsRefused) {
  Open().reset();
  {
    test::RawDb raw(path());
    ASSERT_NE(raw.db(), nullptr);
    rocksdb::ColumnFamilyHandle* meta = raw.family(engine::kMeta);
    std::string v;
    ASSERT_TRUE(raw.db()->Get(rocksdb::ReadOptions(), meta, engine::kHeaderKey, &v).ok());
    schema::HeaderRecord header;
    ASSERT_OK(schema::DecodeHeader(v, &header));
    header.format_version = engine::kFormatVersion + 1;
    schema::EncodeHeader(header, &v);
    ASSERT_TRUE(raw.db()->Put(rocksdb::WriteOptions(), meta, engine::kHeaderKey, v).ok());
  }
  std::unique_ptr<Db> db;
  Status s = Db::Open(Options(), path(), &db);
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
  EXPECT_NE(s.message().find("format version " +
                            std::to_string(engine::kFormatVersion + 1)),
            std::string::npos)
      << s.ToString();
}

TEST_F(DbOpen, InvalidOptionsAreRefused) {
  Options o;
  o.event_lock_stripes = 0;
  std::unique_ptr<Db> db;
  EXPECT_TRUE(Db::Open(o, path(), &db).IsInvalidArgument());
  EXPECT_TRUE(Db::Open(Options(), "", &db).IsInvalidArgument());
}

}  // namespace
}  // namespace tally
