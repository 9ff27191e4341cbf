// The test cluster's env file (scripts/redis_cluster writes it: KEY='value'
// lines), named by TALLY_REDIS_ENV: the one reader for every test that
// runs against the cluster (the conformance suite's "redis" backend and
// tests/cluster/). Public-API helpers only: no tally header at all.

#ifndef TALLY_TESTS_TESTUTIL_REDIS_ENV_H_
#define TALLY_TESTS_TESTUTIL_REDIS_ENV_H_

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

namespace tally::test {

// The variables of the env file at `path`, quotes removed (comments,
// blank lines and an "export " prefix allowed); empty when the file cannot
// be read. A test that starts a cluster of its own (failover_test.cc)
// reads that cluster's file by its path.
inline std::map<std::string, std::string> ReadRedisEnvFile(
    const std::string& path) {
  std::map<std::string, std::string> vars;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("export ", 0) == 0) line = line.substr(7);
    const size_t eq = line.find('=');
    if (line.empty() || line[0] == '#' || eq == std::string::npos) continue;
    std::string value = line.substr(eq + 1);
    if (value.size() >= 2 && (value[0] == '"' || value[0] == '\'') &&
        value.back() == value[0]) {
      value = value.substr(1, value.size() - 2);
    }
    vars[line.substr(0, eq)] = value;
  }
  return vars;
}

// The variables of the file TALLY_REDIS_ENV names; empty when it is unset
// or the file cannot be read: no cluster was started.
inline std::map<std::string, std::string> ReadRedisEnv() {
  const char* path = std::getenv("TALLY_REDIS_ENV");
  if (path == nullptr || *path == '\0') return {};
  return ReadRedisEnvFile(path);
}

}  // namespace tally::test

#endif  // TALLY_TESTS_TESTUTIL_REDIS_ENV_H_
