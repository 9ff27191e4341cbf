// verify [--json]: checks every record and invariant the engine promises
// (tally::Verify), read-only, so it also runs while an app holds the database.
// One line per problem on stdout, then a summary line; exit 3 when anything
// is broken (also with --json, whose document carries the same figures).

#include <iostream>
#include <memory>

#include "commands.h"
#include "progress.h"
#include "json_output.h"
#include "tally/admin.h"

namespace counterctl {

int RunVerify(const GlobalArgs& global, const VerifyArgs& args) {
  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kRead, &db);
  if (!s.ok()) return Fail(s);
  tally::VerifyReport report;
  {
    Progress progress("verify", "records", 0);
    s = tally::Verify(*db, &report, progress.Callback());
  }
  if (!s.ok()) return Fail(s);
  const uint64_t problems = report.problems.size() + report.problems_dropped;
  const int code = problems == 0 ? kExitOk : kExitProblems;
  if (args.json) {
    PrintJson(Json{{"ok", problems == 0},
                   {"counters", report.counters},
                   {"shard_keys", report.shard_keys},
                   {"markers", report.markers},
                   {"sums_compared", report.sums_compared},
                   {"problems", report.problems},
                   {"problems_dropped", report.problems_dropped},
                   {"problem_count", problems}});
    return code;
  }
  for (const std::string& problem : report.problems) {
    std::cout << "problem: " << Printable(problem, 400) << "\n";
  }
  if (report.problems_dropped > 0) {
    std::cout << "problem: ... and " << report.problems_dropped << " more\n";
  }
  std::cout << (problems == 0 ? "ok" : "FAILED") << ": counters="
            << report.counters << " shard_keys=" << report.shard_keys
            << " markers=" << report.markers
            << " sums_compared=" << report.sums_compared
            << " problems=" << problems << "\n";
  return code;
}

}  // namespace counterctl
