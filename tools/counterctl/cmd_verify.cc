// verify: checks every record and invariant the engine promises (Db::Verify),
// read-only, so it also runs while an app holds the database. One line per
// problem on stdout, then a summary line; exit 3 when anything is broken.

#include <iostream>
#include <memory>

#include "commands.h"

namespace counterctl {

int RunVerify(const GlobalArgs& global) {
  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kRead, &db);
  if (!s.ok()) return Fail(s);
  tally::VerifyReport report;
  s = db->Verify(&report);
  if (!s.ok()) return Fail(s);
  for (const std::string& problem : report.problems) {
    std::cout << "problem: " << Printable(problem, 400) << "\n";
  }
  if (report.problems_dropped > 0) {
    std::cout << "problem: ... and " << report.problems_dropped << " more\n";
  }
  const uint64_t problems = report.problems.size() + report.problems_dropped;
  std::cout << (problems == 0 ? "ok" : "FAILED") << ": counters="
            << report.counters << " shard_keys=" << report.shard_keys
            << " markers=" << report.markers
            << " sums_compared=" << report.sums_compared
            << " problems=" << problems << "\n";
  return problems == 0 ? kExitOk : kExitProblems;
}

}  // namespace counterctl
