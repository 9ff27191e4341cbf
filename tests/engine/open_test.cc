// Opening: fresh, reopen, paths that are not tally databases, a newer
// format, a database already held.
#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <fstream>

#include "engine/format.h"
#include "engine/rocksdb_options.h"
#include "testutil/raw_db.h"
#include "schema/records.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

using test::OpenOrDie;
using test::TempDir;

TEST(Open, MissingWithoutCreateIsNotFound) {
  TempDir dir;
  Options o;
  o.create_if_missing = false;
  std::unique_ptr<Db> db;
  Status s = Db::Open(o, dir.Sub("nothing"), &db);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_EQ(db, nullptr);
}

TEST(Open, DirectoryWithOtherFilesIsRefused) {
  TempDir dir;
  std::ofstream(dir.Sub("notes.txt")) << "hello";
  std::unique_ptr<Db> db;
  Status s = Db::Open(Options(), dir.path(), &db);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("not a tally database"), std::string::npos);
  EXPECT_NE(s.message().find(dir.path()), std::string::npos);
}

TEST(Open, PlainFileIsRefused) {
  TempDir dir;
  std::ofstream(dir.Sub("file")) << "x";
  std::unique_ptr<Db> db;
  EXPECT_TRUE(Db::Open(Options(), dir.Sub("file"), &db).IsInvalidArgument());
}

TEST(Open, PlainRocksDbIsRefused) {
  TempDir dir;
  {
    rocksdb::Options o;
    o.create_if_missing = true;
    rocksdb::DB* raw;
    ASSERT_TRUE(rocksdb::DB::Open(o, dir.path(), &raw).ok());
    delete raw;
  }
  std::unique_ptr<Db> db;
  Status s = Db::Open(Options(), dir.path(), &db);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("column family 'meta'"), std::string::npos);
}

TEST(Open, SecondOpenIsBusyNamingPath) {
  TempDir dir;
  auto first = OpenOrDie(dir.path());
  std::unique_ptr<Db> second;
  Status s = Db::Open(Options(), dir.path(), &second);
  EXPECT_TRUE(s.IsBusy()) << s.ToString();
  EXPECT_NE(s.message().find(dir.path()), std::string::npos);
  EXPECT_NE(s.message().find("in use"), std::string::npos);
}

// A database written by a newer format is refused, not misread.
TEST(Open, NewerFormatIsRefused) {
  TempDir dir;
  OpenOrDie(dir.path()).reset();
  {
    test::RawDb raw(dir.path());
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
  Status s = Db::Open(Options(), dir.path(), &db);
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
  EXPECT_NE(s.message().find("format version " +
                            std::to_string(engine::kFormatVersion + 1)),
            std::string::npos)
      << s.ToString();
}

TEST(Open, InvalidOptionsAreRefused) {
  TempDir dir;
  Options o;
  o.event_lock_stripes = 0;
  std::unique_ptr<Db> db;
  EXPECT_TRUE(Db::Open(o, dir.path(), &db).IsInvalidArgument());
  EXPECT_TRUE(Db::Open(Options(), "", &db).IsInvalidArgument());
}

}  // namespace
}  // namespace tally
