// ldb ARGS...: hands the rest of the command line to RocksDB's ldb with
// tally's merge operator (tally::RunLdb), after turning counterctl's
// --db DIR into ldb's --db=DIR. ldb prints its own output and errors; its
// exit code (0 ok, 1 failed) is counterctl's.

#include <string>
#include <vector>

#include "commands.h"
#include "tally/admin.h"

namespace counterctl {

int RunLdb(const GlobalArgs& global, const LdbArgs& args) {
  if (tally::Status s = NeedsLocalFiles(global, "ldb"); !s.ok()) {
    return Fail(s);
  }
  std::vector<std::string> words = {"counterctl ldb"};
  if (!global.db_path.empty()) words.push_back("--db=" + global.db_path);
  words.insert(words.end(), args.args.begin(), args.args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  return tally::RunLdb(static_cast<int>(words.size()), argv.data());
}

}  // namespace counterctl
