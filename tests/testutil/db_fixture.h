// DbTest: the engine test fixture. It owns a temporary directory and opens
// databases in it with given Options (reading time from its ManualClock
// where a test wants that); the directory goes when the test ends.
//
// The databases it opens belong to the test (`auto db = Open();`), so a
// test closes one with db.reset() and reopens it with Reopen(&db), and
// every database a test body holds is closed before the directory goes.
//
// DbMatrixTest runs a suite once per write mode, as LevelDB's
// ChangeOptions() loop does: TEST_P(Suite, Name) on a fixture derived from
// it, then TALLY_WRITE_MODES(Suite) for the instantiation. Tests of a
// matrix suite start their options from BaseOptions() (through Open() or
// ClockOptions()), so that each runs under both modes.
//
// Thread safety: the fixture's methods are for the test's main thread;
// clock_ may be read from any thread (ManualClock).

#ifndef TALLY_TESTS_DB_FIXTURE_H_
#define TALLY_TESTS_DB_FIXTURE_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "tally/db.h"
#include "tally/options.h"
#include "testutil/testutil.h"

namespace tally::test {

class DbTest : public ::testing::Test {
 protected:
  // clock_ starts at `clock_start_ms`; only options naming it read it.
  explicit DbTest(int64_t clock_start_ms = 0) : clock_(clock_start_ms) {
    EXPECT_TRUE(dir_.ok()) << "no temporary directory (see stderr)";
  }

  // The options every database of the test starts from: Options() here,
  // a write mode's in DbMatrixTest.
  virtual Options BaseOptions() const { return Options(); }
  // BaseOptions() reading time from clock_.
  Options ClockOptions() const {
    Options o = BaseOptions();
    o.clock = &clock_;
    return o;
  }

  // Opens (creating) the database at path(); fails the test and returns
  // null on error.
  std::unique_ptr<Db> Open() { return Open(BaseOptions()); }
  // `env`, when given, holds the files (engine/open_on_env.h); not owned.
  std::unique_ptr<Db> Open(const Options& options,
                           rocksdb::Env* env = nullptr) {
    return OpenAt("db", options, env);
  }
  // Opens (creating) another database, at Sub(name).
  std::unique_ptr<Db> OpenAt(const std::string& name) {
    return OpenAt(name, BaseOptions());
  }
  std::unique_ptr<Db> OpenAt(const std::string& name, const Options& options,
                             rocksdb::Env* env = nullptr);
  // Closes *db, then opens path() again with the options of the last Open
  // of it.
  void Reopen(std::unique_ptr<Db>* db);

  // Where Open() puts the database, and other paths in the directory (not
  // created).
  std::string path() const { return Sub("db"); }
  std::string Sub(const std::string& name) const { return dir_.Sub(name); }

 private:
  TempDir dir_;  // declared first: removed after everything below

 protected:
  ManualClock clock_;

 private:
  Options last_;                    // of the last Open of path()
  rocksdb::Env* last_env_ = nullptr;  // of the same
};

// The write modes of a matrix suite. kNoSync: Options::sync false (RocksDB's
// plain write path); kSyncGroupCommit: sync true, so every write goes
// through the group commit pipeline and waits for its fsync.
enum class WriteMode { kNoSync, kSyncGroupCommit };

class DbMatrixTest : public DbTest,
                     public ::testing::WithParamInterface<WriteMode> {
 protected:
  using DbTest::DbTest;
  Options BaseOptions() const override {
    Options o;
    o.sync = GetParam() == WriteMode::kSyncGroupCommit;
    return o;
  }
};

// "NoSync" or "SyncGroupCommit", the last part of a matrix test's name.
std::string WriteModeName(const ::testing::TestParamInfo<WriteMode>& info);

// Instantiates the TEST_Ps of `suite` (a DbMatrixTest) once per write mode:
// WriteMode/suite.Test/NoSync and WriteMode/suite.Test/SyncGroupCommit.
#define TALLY_WRITE_MODES(suite)                                     \
  INSTANTIATE_TEST_SUITE_P(                                          \
      WriteMode, suite,                                              \
      ::testing::Values(::tally::test::WriteMode::kNoSync,           \
                        ::tally::test::WriteMode::kSyncGroupCommit), \
      ::tally::test::WriteModeName)

}  // namespace tally::test

#endif  // TALLY_TESTS_DB_FIXTURE_H_
