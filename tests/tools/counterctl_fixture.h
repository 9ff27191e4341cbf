// A fixture that runs the real counterctl binary against a fresh database.
#ifndef TALLY_TESTS_TOOLS_COUNTERCTL_FIXTURE_H_
#define TALLY_TESTS_TOOLS_COUNTERCTL_FIXTURE_H_

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "subprocess.h"
#include "testutil/testutil.h"

namespace tally::test {

class CounterctlTest : public ::testing::Test {
 protected:
  // Runs `counterctl --db <db> args...`.
  ProcessResult Ctl(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {COUNTERCTL, "--db", db_};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, tmp_.path());
  }
  // Runs counterctl with exactly `args` (no --db added).
  ProcessResult CtlRaw(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {COUNTERCTL};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, tmp_.path());
  }
  // Runs counterctl against another database: `counterctl --db db args...`.
  ProcessResult CtlOn(const std::string& db,
                      const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"--db", db};
    argv.insert(argv.end(), args.begin(), args.end());
    return CtlRaw(argv);
  }
  std::string CtlOnOk(const std::string& db,
                      const std::vector<std::string>& args) {
    ProcessResult r = CtlOn(db, args);
    EXPECT_EQ(r.exit_code, 0) << Describe(args, r);
    return r.out;
  }
  // Runs a command that must succeed and returns its stdout.
  std::string CtlOk(const std::vector<std::string>& args) {
    ProcessResult r = Ctl(args);
    EXPECT_EQ(r.exit_code, 0) << Describe(args, r);
    return r.out;
  }
  // The last line of a successful command's stdout.
  std::string CtlValue(const std::vector<std::string>& args) {
    ProcessResult r = Ctl(args);
    EXPECT_EQ(r.exit_code, 0) << Describe(args, r);
    return r.LastOutLine();
  }
  // Runs a command with --json appended that must exit `exit_code`, print
  // nothing on stderr and exactly one line on stdout holding one JSON
  // document; returns the document (null on any failure, which also fails
  // the test).
  nlohmann::json CtlJson(std::vector<std::string> args, int exit_code = 0) {
    args.push_back("--json");
    ProcessResult r = Ctl(args);
    EXPECT_EQ(r.exit_code, exit_code) << Describe(args, r);
    EXPECT_EQ(r.err, "") << Describe(args, r);
    const size_t newline = r.out.find('\n');
    EXPECT_EQ(newline + 1, r.out.size())
        << "expected exactly one line\n" << Describe(args, r);
    nlohmann::json doc = nlohmann::json::parse(r.out, nullptr,
                                               /*allow_exceptions=*/false);
    EXPECT_FALSE(doc.is_discarded()) << Describe(args, r);
    return doc.is_discarded() ? nlohmann::json() : doc;
  }
  std::string WriteFile(const std::string& name, const std::string& text) {
    const std::string path = tmp_.Sub(name);
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  static std::string Describe(const std::vector<std::string>& args,
                              const ProcessResult& r) {
    std::string cmd = "counterctl";
    for (const std::string& a : args) cmd += " " + a;
    return cmd + "\nexit " + std::to_string(r.exit_code) + " signal " +
           std::to_string(r.signal) + "\nstdout:\n" + r.out.substr(0, 4000) +
           "\nstderr:\n" + r.err.substr(0, 4000);
  }

  TempDir tmp_;
  std::string db_ = tmp_.Sub("db");
};

}  // namespace tally::test

#endif  // TALLY_TESTS_TOOLS_COUNTERCTL_FIXTURE_H_
