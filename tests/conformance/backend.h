// The backends the conformance suite runs against: one BackendFactory per
// implementation of the public API (tally::Db and the free functions of
// tally/admin.h, checkpoint.h, backup.h, import.h and outbox.h). Every
// TEST_P of tests/conformance/ runs once per factory of Factories().
//
// Adding a backend: write a factory (a name, an `open` and the
// capabilities below) in backend.cc and append it to Factories(); nothing
// else changes. docs/testing.md, "The conformance suite".
//
// Uses the public headers only, as a backend's user would.

#ifndef TALLY_TESTS_CONFORMANCE_BACKEND_H_
#define TALLY_TESTS_CONFORMANCE_BACKEND_H_

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "tally/db.h"
#include "tally/options.h"
#include "tally/status.h"

namespace tally::conformance {

struct BackendFactory {
  // Names the backend in test names (Backend/Suite.Test/<name>): letters,
  // digits and '_' only (gtest's rule for parameter names).
  std::string name;
  // Opens a Db for one test. `scratch_dir` is a fresh, empty directory the
  // test owns (removed when it ends); the backend may keep files there or
  // use it only to name its place (a key prefix). Opening again with the
  // same scratch_dir opens the same database: the suite closes and reopens
  // to check what a database keeps, and opens read-only instances beside
  // the writer (with read_only_instances). Options::clock must be obeyed:
  // every time the backend judges by (windows, leases, holds, buckets)
  // comes from it.
  std::function<Status(const Options& options, const std::string& scratch_dir,
                       std::unique_ptr<Db>* db)>
      open;
  // Capabilities. Where one is false the suite checks that the calls it
  // covers answer NotSupported instead.
  // The database lives in local files: tally::Checkpoint, CreateBackup and
  // Compact work, and their copies open with Db::Open at a directory.
  bool local_files = false;
  // Options::read_only opens an instance beside the writer, which reads
  // what the writer committed (as of Open or Db::Refresh) and refuses
  // every write with NotSupported.
  bool read_only_instances = false;
};

// Every backend built into this binary; today the local engine ("engine").
const std::vector<BackendFactory>& Factories();

// gtest's name for a parameter: the factory's name.
std::string FactoryName(const ::testing::TestParamInfo<BackendFactory>& info);

// How gtest prints a factory (in failure messages and test listings).
void PrintTo(const BackendFactory& factory, std::ostream* os);

}  // namespace tally::conformance

#endif  // TALLY_TESTS_CONFORMANCE_BACKEND_H_
