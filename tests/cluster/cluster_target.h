// The cluster a test of tests/cluster/ runs on: the target of the env
// file named by TALLY_REDIS_ENV (scripts/redis_cluster writes it), with a
// namespace of the caller's own, and TALLY_REDIS_PASSWORD_FILE set for
// Db::Open. Public API only.

#ifndef TALLY_TESTS_CLUSTER_CLUSTER_TARGET_H_
#define TALLY_TESTS_CLUSTER_CLUSTER_TARGET_H_

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include "tally/tally.h"
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

// A clock a test sets and steps (Options::clock), read from any thread.
class TestClock : public Clock {
 public:
  explicit TestClock(int64_t now = 0) : now_(now) {}
  int64_t NowMillis() const override { return now_.load(); }
  void Set(int64_t now) { now_.store(now); }
  void Advance(int64_t ms) { now_.fetch_add(ms); }

 private:
  std::atomic<int64_t> now_;
};

// Opens a Db on `target` with a strict counter "stock" (minimum 0)
// holding `units`: where the concurrency tests start.
inline Status OpenStock(const std::string& target, int64_t units,
                        std::unique_ptr<Db>* db) {
  Status s = Db::Open(Options(), target, db);
  CounterSpec stock;
  stock.bounds = CounterBounds::AtLeast(0);
  if (s.ok()) s = (*db)->CreateCounter("stock", stock);
  if (s.ok()) s = (*db)->Increment("stock", units).status();
  return s;
}

}  // namespace tally::test

#endif  // TALLY_TESTS_CLUSTER_CLUSTER_TARGET_H_
