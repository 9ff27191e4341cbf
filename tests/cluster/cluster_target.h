// The cluster a test of tests/cluster/ runs on: the target of the env
// file named by TALLY_REDIS_ENV (scripts/redis_cluster writes it), with a
// namespace of the caller's own, and TALLY_REDIS_PASSWORD_FILE set for
// Db::Open. Public API only.

#ifndef TALLY_TESTS_CLUSTER_CLUSTER_TARGET_H_
#define TALLY_TESTS_CLUSTER_CLUSTER_TARGET_H_

#include <unistd.h>

#include <cstdlib>
#include <map>
#include <string>

#include "testutil/redis_env.h"

namespace tally::test {

// "redis://...:PORT/NS<pid>", or "" when no cluster was started (the
// caller skips).
inline std::string ClusterTarget(const std::string& ns) {
  std::map<std::string, std::string> env = ReadRedisEnv();
  if (env.count("TALLY_REDIS_TARGET") == 0) return "";
  setenv("TALLY_REDIS_PASSWORD_FILE", env["TALLY_REDIS_PASSWORD_FILE"].c_str(),
         1);
  return env["TALLY_REDIS_TARGET"] + "/" + ns + std::to_string(getpid());
}

}  // namespace tally::test

#endif  // TALLY_TESTS_CLUSTER_CLUSTER_TARGET_H_
