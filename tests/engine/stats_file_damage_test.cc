// A stats file a reader cannot trust (torn, truncated, garbage, another
// format) is reported by name with what is wrong, as StatsSource::kNone
// with every figure 0; it never crashes a reader nor fails GetDbStats. A
// later writer of the same format that appends fields is read.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "engine/rules.h"
#include "tally/admin.h"
#include "tally/db.h"
#include "tally/limits.h"
#include "testutil/db_fixture.h"

namespace tally {
namespace {

constexpr int64_t kStart = 1'796'083'200'000;

std::string ReadAll(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteAll(const std::string& file, const std::string& bytes) {
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
}

void PutLe(uint64_t v, int bytes, std::string* out, size_t at) {
  for (int i = 0; i < bytes; ++i) {
    (*out)[at + i] = static_cast<char>(v >> (8 * i));
  }
}

// `bytes` with its last 8 bytes replaced by the checksum of the others.
std::string Resealed(std::string bytes) {
  const size_t covered = bytes.size() - 8;
  PutLe(engine::StableHash(std::string_view(bytes).substr(0, covered)), 8,
        &bytes, covered);
  return bytes;
}

class StatsFileDamage : public test::DbTest {
 protected:
  StatsFileDamage() : DbTest(kStart) {}

  void SetUp() override {
    Options o = ClockOptions();
    o.stats_publish_interval_ms = kMaxStatsPublishIntervalMs;
    auto writer = Open(o);
    ASSERT_NE(writer, nullptr);
    ASSERT_OK(writer->CreateCounter("c", {2}));
    for (int i = 0; i < 3; ++i) ASSERT_OK(writer->Increment("c", 1));
    writer.reset();  // publishes its last figures
    file_ = path() + "/TALLY-STATS";
    good_ = ReadAll(file_);
    // Version 1's 144 bytes, and `refused` appended (issue 16).
    ASSERT_EQ(good_.size(), 16u + 152u + 8u) << "format version 1's size";
    Options ro = ClockOptions();
    ro.read_only = true;
    reader_ = Open(ro);
    ASSERT_NE(reader_, nullptr);
  }

  // What the reader reports with `bytes` as the stats file.
  EngineStats SeenWith(const std::string& bytes) {
    WriteAll(file_, bytes);
    Result<DbStats> all = GetDbStats(*reader_);
    EXPECT_OK(all);
    return GetStats(*reader_);
  }

  // The reader shows no figures and says `file_` is damaged with `why`.
  void ExpectDamaged(const std::string& bytes, const std::string& why) {
    SCOPED_TRACE(why);
    const EngineStats s = SeenWith(bytes);
    EXPECT_EQ(s.origin.source, StatsSource::kNone);
    EXPECT_EQ(s.origin.problem, file_ + " is damaged, ignored: " + why);
    EXPECT_EQ(s.applied, 0u);
    EXPECT_EQ(s.origin.writer_pid, 0u);
    EXPECT_FALSE(s.origin.live);
  }

  std::string file_;
  std::string good_;
  std::unique_ptr<Db> reader_;
};

TEST_F(StatsFileDamage, TheWritersFileIsRead) {
  const EngineStats s = SeenWith(good_);
  EXPECT_EQ(s.origin.source, StatsSource::kWriter) << s.origin.problem;
  EXPECT_EQ(s.applied, 3u);
  EXPECT_TRUE(s.origin.closed);
}

TEST_F(StatsFileDamage, EmptyFile) {
  ExpectDamaged("", "0 bytes, shorter than a header and checksum (24)");
}

TEST_F(StatsFileDamage, Garbage) {
  ExpectDamaged(std::string(50, 'x'),
                "not a tally stats file (its first 8 bytes are not TLYSTATS)");
}

TEST_F(StatsFileDamage, TornTail) {
  ExpectDamaged(good_.substr(0, good_.size() - 1),
                "175 bytes where its header says 176 (torn or truncated)");
  ExpectDamaged(good_.substr(0, 30),
                "30 bytes where its header says 176 (torn or truncated)");
}

TEST_F(StatsFileDamage, FlippedByte) {
  for (size_t at : {size_t{9}, size_t{16 + 6 * 8}, good_.size() - 1}) {
    std::string bad = good_;
    bad[at] = static_cast<char>(bad[at] ^ 0x10);
    SCOPED_TRACE(at);
    // Byte 9 is the version: still a checksum mismatch, found first.
    ExpectDamaged(bad, "checksum mismatch (torn or damaged)");
  }
}

TEST_F(StatsFileDamage, AnotherFormatVersion) {
  std::string newer = good_;
  PutLe(2, 4, &newer, 8);
  ExpectDamaged(Resealed(newer),
                "stats format 2, this tally reads 1 (upgrade tally)");
  std::string older = good_;
  PutLe(0, 4, &older, 8);
  ExpectDamaged(Resealed(older), "stats format 0, this tally reads 1");
}

TEST_F(StatsFileDamage, ShortRecord) {
  // A consistent file whose record lacks fields of version 1.
  std::string shorter = good_.substr(0, 16 + 8) + std::string(8, '\0');
  PutLe(8, 4, &shorter, 12);
  ExpectDamaged(Resealed(shorter), "a record of 8 bytes, version 1 has 144");
}

TEST_F(StatsFileDamage, AppendedFieldsOfALaterWriterAreSkipped) {
  std::string longer = good_.substr(0, good_.size() - 8) +
                       std::string(16, '\x7f') + std::string(8, '\0');
  PutLe(152 + 16, 4, &longer, 12);
  const EngineStats s = SeenWith(Resealed(longer));
  EXPECT_EQ(s.origin.source, StatsSource::kWriter) << s.origin.problem;
  EXPECT_EQ(s.applied, 3u);
}

TEST_F(StatsFileDamage, AnEarlierWritersRecordReadsItsFieldsAndZeroForTheRest) {
  // A writer of before issue 16: 144 bytes, no `refused`.
  std::string earlier = good_.substr(0, 16 + 144) + std::string(8, '\0');
  PutLe(144, 4, &earlier, 12);
  const EngineStats s = SeenWith(Resealed(earlier));
  EXPECT_EQ(s.origin.source, StatsSource::kWriter) << s.origin.problem;
  EXPECT_EQ(s.applied, 3u);
  EXPECT_EQ(s.refused, 0u);
}

// Liveness comes from the pid and its start time: the file's writer was
// this process, so with the closed flag cleared it reads as live, and with
// another start time (the pid reused by a later process) as not live.
TEST_F(StatsFileDamage, APidWithAnotherStartTimeIsNotLive) {
  constexpr size_t kRecord = 16;  // flags, pid, start ticks, ...
  std::string open = good_;
  PutLe(0, 8, &open, kRecord);  // not closed
  EngineStats s = SeenWith(Resealed(open));
  ASSERT_EQ(s.origin.source, StatsSource::kWriter) << s.origin.problem;
  EXPECT_EQ(s.origin.writer_pid, static_cast<uint64_t>(::getpid()));
  EXPECT_FALSE(s.origin.closed);
  EXPECT_TRUE(s.origin.live);

  std::string reused = open;
  const uint64_t ticks = static_cast<uint8_t>(open[kRecord + 16]) + 1;
  PutLe(ticks, 1, &reused, kRecord + 16);
  s = SeenWith(Resealed(reused));
  ASSERT_EQ(s.origin.source, StatsSource::kWriter) << s.origin.problem;
  EXPECT_FALSE(s.origin.live);
}

TEST_F(StatsFileDamage, ADirectoryInItsPlace) {
  std::filesystem::remove(file_);
  std::filesystem::create_directory(file_);
  const EngineStats s = GetStats(*reader_);
  EXPECT_EQ(s.origin.source, StatsSource::kNone);
  EXPECT_EQ(s.origin.problem.rfind("cannot read " + file_ + ": ", 0), 0u)
      << s.origin.problem;
  EXPECT_OK(GetDbStats(*reader_));
}

}  // namespace
}  // namespace tally
