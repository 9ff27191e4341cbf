// Catalog on its own (no Db around it): ids are never reused, not after a
// delete, an import or a reload; names are found until deleted and not
// after; lists are ordered by name; names and specs are checked against
// their limits with messages naming the value.

#include "engine/catalog.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>

#include "wal/commit_pipeline.h"
#include "engine/bucket_retention.h"
#include "engine/coding.h"
#include "engine/rocksdb_options.h"
#include "tally/limits.h"
#include "testutil/raw_db.h"
#include "testutil/temp_dir.h"
#include "testutil/testutil.h"

namespace tally::engine {
namespace {

constexpr int64_t kStart = 1'800'000'000'000;

class CatalogTest : public ::testing::Test {
 protected:
  CatalogTest() : clock_(kStart) {}
  void SetUp() override { Reload(); }

  // A fresh Catalog over the database, loaded as Db::Open loads it.
  void Reload() {
    catalog_.reset();
    pipeline_.reset();
    raw_.reset();
    raw_ = std::make_unique<test::RawDb>(dir_.path(), test::RawMode::kCreate);
    ASSERT_TRUE(raw_->status().ok()) << raw_->status().ToString();
    pipeline_ = std::make_unique<wal::CommitPipeline>(raw_->db(), false);
    catalog_ = std::make_unique<Catalog>(raw_->db(), Families(),
                                         pipeline_.get(), &clock_, &retention_);
    ASSERT_OK(catalog_->Load(dir_.path(), /*read_only=*/false));
  }
  // Every family's handle, in the table's order.
  FamilyHandles Families() {
    FamilyHandles handles{};
    for (size_t f = 0; f < kFamilyCount; ++f) {
      handles[f] = raw_->family(static_cast<Family>(f));
    }
    return handles;
  }

  // The header as a reader sees it (under the catalog's shared lock).
  uint64_t NextId() {
    Catalog::Reader reader(catalog_.get());
    return reader.header().next_counter_id;
  }

  uint64_t IdOf(const std::string& name) {
    auto info = catalog_->Describe(name);
    EXPECT_OK(info);
    return info.ok() ? info->id : 0;
  }

  test::TempDir dir_;
  test::ManualClock clock_;
  RetentionRules retention_;
  std::unique_ptr<test::RawDb> raw_;
  std::unique_ptr<wal::CommitPipeline> pipeline_;
  std::unique_ptr<Catalog> catalog_;
};

TEST_F(CatalogTest, IdsAreNeverReusedAfterDeleteOrReload) {
  std::set<uint64_t> ids;
  ASSERT_OK(catalog_->Create("a", {2}));
  ASSERT_OK(catalog_->Create("b", {2}));
  ids.insert(IdOf("a"));
  ids.insert(IdOf("b"));
  ASSERT_OK(catalog_->Delete("b"));  // the highest id
  ASSERT_OK(catalog_->Create("b", {2}));
  EXPECT_TRUE(ids.insert(IdOf("b")).second) << "a new 'b' gets a new id";
  const uint64_t before_reload = NextId();
  ASSERT_OK(catalog_->Delete("b"));
  Reload();
  EXPECT_EQ(NextId(), before_reload)
      << "the allocation is persisted with the creation";
  ASSERT_OK(catalog_->Create("b", {2}));
  EXPECT_TRUE(ids.insert(IdOf("b")).second) << "not even after a reload";
  for (uint64_t id : ids) EXPECT_LT(id, NextId());
}

// An import's id is allocated when it begins: abandoned, reloaded over or
// finished, it is never handed out again.
TEST_F(CatalogTest, ImportIdsAreNeverReused) {
  auto abandoned = catalog_->BeginImport("x", {1});
  ASSERT_OK(abandoned);
  ASSERT_OK(catalog_->AbandonImport(*abandoned));
  auto died = catalog_->BeginImport("y", {1});  // never finished
  ASSERT_OK(died);
  Reload();  // drops the unfinished import
  EXPECT_TRUE(catalog_->Describe("y").status().IsNotFound());
  ASSERT_OK(catalog_->Create("z", {1}));
  auto finished = catalog_->BeginImport("w", {1});
  ASSERT_OK(finished);
  ASSERT_OK(catalog_->FinishImport(*finished, "w", {1}, kStart - 5, 0));
  const std::set<uint64_t> ids = {*abandoned, *died, IdOf("z"), IdOf("w")};
  EXPECT_EQ(ids.size(), 4u);
  EXPECT_EQ(IdOf("w"), *finished);
  EXPECT_EQ(test::OkValue(catalog_->Describe("w")).created_at_ms, kStart - 5);
}

TEST_F(CatalogTest, FinishImportOfATakenNameIsAlreadyExists) {
  auto id = catalog_->BeginImport("n", {1});
  ASSERT_OK(id);
  ASSERT_OK(catalog_->Create("n", {1}));  // taken meanwhile
  Status s = catalog_->FinishImport(*id, "n", {1}, kStart, 0);
  ASSERT_TRUE(s.IsAlreadyExists()) << s.ToString();
  EXPECT_NE(s.message().find("'n'"), std::string::npos) << s.message();
  EXPECT_NE(IdOf("n"), *id) << "the created counter keeps its own id";
}

TEST_F(CatalogTest, NamesAreFoundUntilDeletedAndNotAfter) {
  ASSERT_OK(catalog_->Create("kept", {3}));
  ASSERT_OK(catalog_->Create("gone", {4}));
  {
    Catalog::Reader r(catalog_.get());
    ASSERT_NE(r.Find("gone"), nullptr);
    EXPECT_EQ(r.Find("gone")->shards, 4u);
  }
  ASSERT_OK(catalog_->Delete("gone"));
  {
    Catalog::Reader r(catalog_.get());
    EXPECT_EQ(r.Find("gone"), nullptr);
    ASSERT_NE(r.Find("kept"), nullptr);
    EXPECT_EQ(r.List().size(), 1u);
  }
  Status s = catalog_->Describe("gone").status();
  ASSERT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(s.message().find("'gone'"), std::string::npos) << s.message();
  s = catalog_->Delete("gone");
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  Reload();
  EXPECT_TRUE(catalog_->Describe("gone").status().IsNotFound());
  EXPECT_EQ(test::OkValue(catalog_->Describe("kept")).shards, 3u);
}

TEST_F(CatalogTest, CreateOfAnExistingNameIsAlreadyExistsAndChangesNothing) {
  ASSERT_OK(catalog_->Create("c", {2}));
  const uint64_t id = IdOf("c");
  const uint64_t next = NextId();
  Status s = catalog_->Create("c", {8});
  ASSERT_TRUE(s.IsAlreadyExists()) << s.ToString();
  EXPECT_NE(s.message().find("'c'"), std::string::npos) << s.message();
  EXPECT_EQ(IdOf("c"), id);
  EXPECT_EQ(test::OkValue(catalog_->Describe("c")).shards, 2u);
  EXPECT_EQ(NextId(), next) << "no id spent";
}

TEST_F(CatalogTest, ListIsOrderedByNameAndSurvivesReload) {
  for (const char* name : {"m", "b", "z", "a"}) {
    ASSERT_OK(catalog_->Create(name, {1}));
  }
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<CounterInfo> list = catalog_->List();
    ASSERT_EQ(list.size(), 4u);
    EXPECT_EQ(list[0].name, "a");
    EXPECT_EQ(list[1].name, "b");
    EXPECT_EQ(list[2].name, "m");
    EXPECT_EQ(list[3].name, "z");
    EXPECT_EQ(list[0].created_at_ms, kStart) << "from the injected clock";
    Reload();
  }
}

TEST_F(CatalogTest, NamesAndSpecsAreCheckedAgainstTheirLimits) {
  ASSERT_OK(catalog_->Create(std::string(kMaxNameBytes, 'n'), {kMaxShards}));
  Status s = catalog_->Create(std::string(kMaxNameBytes + 1, 'n'), {1});
  ASSERT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find(std::to_string(kMaxNameBytes + 1) + " bytes"),
            std::string::npos)
      << s.message();
  EXPECT_TRUE(catalog_->Create("", {1}).IsInvalidArgument());
  for (uint32_t shards : {0u, kMaxShards + 1}) {
    s = catalog_->Create("s", {shards});
    ASSERT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_NE(s.message().find(std::to_string(shards)), std::string::npos)
        << s.message();
  }
  const uint64_t next = NextId();
  EXPECT_EQ(catalog_->List().size(), 1u) << "refusals create nothing";
  EXPECT_TRUE(catalog_->Describe("s").status().IsNotFound());
  Reload();
  EXPECT_EQ(NextId(), next);
}

// A counter record that disagrees with its key is Corruption at load,
// naming the counter, not a counter with a wrong name.
TEST_F(CatalogTest, LoadRefusesARecordFiledUnderAnotherName) {
  ASSERT_OK(catalog_->Create("right", {1}));
  std::string value;
  ASSERT_TRUE(raw_->db()
                  ->Get(rocksdb::ReadOptions(), raw_->family(kMeta),
                        CounterMetaKey("right"), &value)
                  .ok());
  ASSERT_TRUE(raw_->db()
                  ->Put(rocksdb::WriteOptions(), raw_->family(kMeta),
                        CounterMetaKey("wrong"), value)
                  .ok());
  Catalog fresh(raw_->db(), Families(), pipeline_.get(), &clock_,
                &retention_);
  Status s = fresh.Load(dir_.path(), false);
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("'right'"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace tally::engine
