// Corruption: bytes flipped in SST files, the WAL and the MANIFEST of a
// closed database. Opening, reading and Verify must report it clearly (the
// message names the damaged file), nothing may crash, and no read may
// return a wrong number: every read gives the true value or an error.

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "engine/rocksdb_options.h"
#include "tally/admin.h"
#include "tally/db.h"
#include "testutil/raw_db.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

namespace fs = std::filesystem;

constexpr int kCounters = 4;

std::string CounterName(int i) { return "c" + std::to_string(i); }

// Flips every bit of the byte at `offset` of `file`.
void FlipByte(const std::string& file, uint64_t offset) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f.good()) << file;
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.read(&c, 1);
  ASSERT_TRUE(f.good()) << file << " @" << offset;
  c = static_cast<char>(~c);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(&c, 1);
  ASSERT_TRUE(f.good());
}

// Files of `dir` whose name contains `fragment`, sorted.
std::vector<std::string> FilesLike(const std::string& dir,
                                   const std::string& fragment) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().find(fragment) != std::string::npos) {
      out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The SST files of one column family, from RocksDB's own metadata.
std::vector<std::string> SstFilesOf(const std::string& path,
                                    const std::string& family) {
  test::RawDb raw(path, test::RawMode::kReadOnly);
  std::vector<std::string> out;
  EXPECT_TRUE(raw.status().ok()) << raw.status().ToString();
  if (!raw.status().ok()) return out;
  std::vector<rocksdb::LiveFileMetaData> files;
  raw.db()->GetLiveFilesMetaData(&files);
  for (const auto& f : files) {
    if (f.column_family_name == family) out.push_back(path + f.name);
  }
  return out;
}

// The byte holding bit 31 of the properties block's packed restart count,
// found through the metaindex entry "rocksdb.properties" (whose value is
// the block handle: varint64 offset, varint64 size). See the test below.
uint64_t PropertiesFooterByte(const std::string& file) {
  std::ifstream f(file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(f)),
                          std::istreambuf_iterator<char>());
  const std::string key = "rocksdb.properties";
  size_t pos = bytes.rfind(key);
  if (pos == std::string::npos) return UINT64_MAX;
  pos += key.size();
  auto varint = [&bytes, &pos] {
    uint64_t v = 0;
    for (int shift = 0; pos < bytes.size() && shift < 64; shift += 7) {
      const auto b = static_cast<uint8_t>(bytes[pos++]);
      v |= uint64_t{b & 0x7fu} << shift;
      if ((b & 0x80u) == 0) break;
    }
    return v;
  };
  const uint64_t offset = varint();
  const uint64_t size = varint();
  return offset + size - 1;
}

class Corruption : public ::testing::Test {
 protected:
  // A database with kCounters counters, once-increments on all of them;
  // `flush` moves everything into SST files, else it stays in the WAL.
  void Build(bool flush) {
    auto db = test::OpenOrDie(path_);
    ASSERT_NE(db, nullptr);
    for (int c = 0; c < kCounters; ++c) {
      ASSERT_OK(db->CreateCounter(CounterName(c), {8}));
    }
    for (int i = 0; i < 2000; ++i) {
      const std::string counter = CounterName(i % kCounters);
      ASSERT_OK(db->IncrementOnce(counter, "e" + std::to_string(i), i % 9 + 1));
      truth_[counter] += i % 9 + 1;
    }
    if (flush) {
      ASSERT_OK(tally::Compact(*db));
    }
  }

  // Opens the damaged copy and reads everything. Returns the errors seen
  // (open, reads, verify); fails the test on a wrong number.
  std::vector<std::string> OpenAndRead() {
    std::vector<std::string> errors;
    std::unique_ptr<Db> db;
    Status s = Db::Open(Options(), path_, &db);
    if (!s.ok()) {
      errors.push_back("open: " + s.ToString());
      return errors;
    }
    for (const auto& [name, want] : truth_) {
      auto got = db->ReadExact(name);
      if (got.ok()) {
        EXPECT_EQ(*got, want) << "wrong number for " << name;
      } else {
        errors.push_back("read " + name + ": " + got.status().ToString());
      }
    }
    VerifyReport report;
    Status v = tally::Verify(*db, &report);
    if (!v.ok()) errors.push_back("verify: " + v.ToString());
    for (const std::string& p : report.problems) {
      errors.push_back("verify problem: " + p);
    }
    return errors;
  }

  test::TempDir dir_;
  const std::string path_ = dir_.Sub("db");
  std::map<std::string, int64_t> truth_;
};

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

bool AnyNames(const std::vector<std::string>& errors, const std::string& what) {
  for (const auto& e : errors) {
    if (e.find(what) != std::string::npos) return true;
  }
  return false;
}

TEST_F(Corruption, FlippedShardSstDataBlockIsReportedNamingTheFile) {
  Build(/*flush=*/true);
  auto files = SstFilesOf(path_, "shards");
  ASSERT_FALSE(files.empty());
  FlipByte(files[0], 20);  // inside the first data block
  auto errors = OpenAndRead();
  ASSERT_FALSE(errors.empty()) << "the flip went unnoticed";
  EXPECT_TRUE(AnyNames(errors, "Corruption")) << Join(errors);
  EXPECT_TRUE(AnyNames(errors, fs::path(files[0]).filename().string()))
      << Join(errors);
  EXPECT_TRUE(AnyNames(errors, "verify problem: files: Corruption"))
      << Join(errors);
}

TEST_F(Corruption, FlippedMarkerSstIsReportedNamingTheFile) {
  Build(/*flush=*/true);
  auto files = SstFilesOf(path_, "events");
  ASSERT_FALSE(files.empty());
  FlipByte(files[0], 20);
  auto errors = OpenAndRead();
  ASSERT_FALSE(errors.empty()) << "the flip went unnoticed";
  EXPECT_TRUE(AnyNames(errors, fs::path(files[0]).filename().string()))
      << Join(errors);
  EXPECT_TRUE(AnyNames(errors, "verify problem: files: Corruption"))
      << Join(errors);
}

// One byte flipped anywhere in a table file (data, index, filter, footer):
// open, read and verify may fail, naming the file, but never return a
// wrong number. 40 random offsets, new seed each run (printed on failure).
//
// One byte per file is left out: the top byte of the properties block's
// packed restart count. RocksDB 7.8.3 parses that block before checking its
// checksum (table/meta_blocks.cc, ReadTablePropertiesHelper), and Debian's
// librocksdb is built with assertions, so a flipped bit 31 there aborts the
// process in DataBlockHashIndex::Initialize while the table is opened. tally
// cannot intercept it; docs/reliability.md lists it.
TEST_F(Corruption, RandomFlipsInTableFilesNeverGiveAWrongNumber) {
  Build(/*flush=*/true);
  const std::string pristine = dir_.Sub("pristine");
  fs::copy(path_, pristine, fs::copy_options::recursive);
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  int noticed = 0;
  for (int round = 0; round < 40; ++round) {
    fs::remove_all(path_);
    fs::copy(pristine, path_, fs::copy_options::recursive);
    auto files = SstFilesOf(path_, round % 2 == 0 ? "shards" : "events");
    ASSERT_FALSE(files.empty());
    const std::string& file = files[rng() % files.size()];
    const uint64_t avoid = PropertiesFooterByte(file);
    ASSERT_LT(avoid, fs::file_size(file)) << file;
    uint64_t offset = rng() % fs::file_size(file);
    if (offset == avoid) offset = (offset + 1) % fs::file_size(file);
    SCOPED_TRACE(file + " @" + std::to_string(offset));
    FlipByte(file, offset);
    auto errors = OpenAndRead();  // fails the test on a wrong number
    if (errors.empty()) continue;
    ++noticed;
    EXPECT_TRUE(AnyNames(errors, fs::path(file).filename().string()))
        << Join(errors);
  }
  // Almost every byte of a table file is covered by a checksum.
  EXPECT_GE(noticed, 30);
}

TEST_F(Corruption, FlippedManifestRefusesToOpenNamingIt) {
  Build(/*flush=*/true);
  auto files = FilesLike(path_, "MANIFEST-");
  ASSERT_EQ(files.size(), 1u);
  FlipByte(files[0], fs::file_size(files[0]) / 2);
  std::unique_ptr<Db> db;
  Status s = Db::Open(Options(), path_, &db);
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find(fs::path(files[0]).filename().string()),
            std::string::npos)
      << s.ToString();
  EXPECT_EQ(db, nullptr);
}

// A damaged record in the middle of the WAL: replaying up to it would drop
// every later acknowledged write without a word, so Open refuses, naming
// the log; salvage_wal opens the consistent state before the damage.
TEST_F(Corruption, FlippedWalMiddleRefusesToOpenUnlessSalvaged) {
  Build(/*flush=*/false);
  auto files = FilesLike(path_, ".log");
  ASSERT_FALSE(files.empty());
  FlipByte(files.back(), fs::file_size(files.back()) / 2);
  std::unique_ptr<Db> db;
  Status s = Db::Open(Options(), path_, &db);
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find(fs::path(files.back()).filename().string()),
            std::string::npos)
      << s.ToString();
  EXPECT_NE(s.message().find("salvage_wal"), std::string::npos) << s.ToString();

  Options salvage;
  salvage.salvage_wal = true;
  ASSERT_OK(Db::Open(salvage, path_, &db));
  // An earlier state: less than the truth, markers and shards agree.
  int64_t lost = 0;
  for (const auto& [name, want] : truth_) {
    auto got = db->ReadExact(name);
    ASSERT_OK(got);
    EXPECT_LE(*got, want);
    lost += want - *got;
  }
  EXPECT_GT(lost, 0);
  VerifyReport report;
  ASSERT_OK(tally::Verify(*db, &report));
  EXPECT_TRUE(report.ok()) << report.problems.front();
}

// The last record torn, as a crash leaves it: opens with everything before.
TEST_F(Corruption, TornWalTailIsTolerated) {
  Build(/*flush=*/false);
  auto files = FilesLike(path_, ".log");
  ASSERT_FALSE(files.empty());
  fs::resize_file(files.back(), fs::file_size(files.back()) - 3);
  std::unique_ptr<Db> db;
  ASSERT_OK(Db::Open(Options(), path_, &db));
  int64_t lost = 0;
  for (const auto& [name, want] : truth_) {
    auto got = db->ReadExact(name);
    ASSERT_OK(got);
    EXPECT_LE(*got, want);
    lost += want - *got;
  }
  EXPECT_LE(lost, 9);  // at most the one torn increment
}

}  // namespace
}  // namespace tally
