// redis_peer_bench: the Redis peer of tally_api_bench, through hiredis, in
// the same harness (fixed operation counts, $TALLY_BENCH_SCALE,
// bench_util.h's latency log and id streams).
//
// bench/run_suite.sh starts a redis-server (no persistence) on 127.0.0.1 on
// a free port and runs this binary twice: with client and server pinned to
// one core (taskset -c 0) and unpinned. On a 2-core VM a request-at-a-time
// client is dominated by cross-core wake-ups, so the pinned run is Redis's
// best case. Environment: REDIS_PORT (required), REDIS_LABEL (the name
// part, "pinned" or "unpinned").
//
//   redis/L/incr                      INCR, one request at a time, over 4
//                                     counters in turn.
//   redis/L/incr_pipelined/depth:N    N INCRs sent, then N replies read.
//   redis/L/once_lua/dup:D            EVALSHA of a script doing SET NX of
//                                     the event's marker key and, only when
//                                     it was set, INCRBY of the counter; D%
//                                     of the deliveries duplicates. Reports
//                                     bytes_per_marker (used_memory growth
//                                     per marker) for D=0.
//
// Every benchmark starts with FLUSHALL and after the loop checks the
// counters and the number of marker keys. p50_us/p99_us/max_us are per
// request (pipelined: per round of N).

#include <benchmark/benchmark.h>
#include <hiredis/hiredis.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "bench/redis_client.h"

namespace tally::bench {
namespace {

const char* const kCounters[] = {"c0", "c1", "c2", "c3"};
constexpr int kCounterCount = 4;

const char* const kOnceScript =
    "if redis.call('SET', KEYS[1], ARGV[1], 'NX') then "
    "return redis.call('INCRBY', KEYS[2], ARGV[1]) end "
    "return -1";

bool ConnectOrFail(benchmark::State& state, Redis* redis) {
  const std::string err = redis->Connect();
  if (!err.empty()) Fail(state, "redis", err);
  return err.empty();
}

// After the loop: the counters sum to `expected`; the server holds
// `markers` keys besides the counters.
void Check(benchmark::State& state, Redis* redis, int64_t expected,
           int64_t markers) {
  if (state.error_occurred()) return;
  int64_t sum = 0;
  int64_t counter_keys = 0;
  for (const char* c : kCounters) {
    const int64_t v = redis->GetInt(c);
    sum += v;
    counter_keys += v > 0 ? 1 : 0;
  }
  const int64_t keys = redis->DbSize() - counter_keys;
  if (sum != expected || keys != markers) {
    Fail(state, "check",
         "sum " + std::to_string(sum) + " (want " + std::to_string(expected) +
             "), marker keys " + std::to_string(keys) + " (want " +
             std::to_string(markers) + ")");
  }
}

// INCRs of the counters in turn, `depth` per round trip (1: one request at
// a time), in the timed loop; then the check.
void RunIncr(benchmark::State& state, int depth, const char* what) {
  Redis redis;
  if (!ConnectOrFail(state, &redis)) return;
  LatencyLog lat;
  int64_t next = 0;
  TimedLoop(state, &lat, depth, what, [&](std::string* error) {
    bool ok = true;
    for (int i = 0; i < depth && ok; ++i) {
      ok = redis.Append("INCR %s", kCounters[next++ % kCounterCount]);
    }
    for (int i = 0; i < depth && ok; ++i) {
      Reply r = redis.Next();
      ok = r != nullptr && r->type == REDIS_REPLY_INTEGER;
    }
    if (!ok) *error = redis.Error();
    return ok;
  });
  Check(state, &redis, state.iterations() * depth, 0);
  lat.Report(state);
}

void BM_Incr(benchmark::State& state) { RunIncr(state, 1, "INCR"); }

void BM_IncrPipelined(benchmark::State& state, int depth) {
  RunIncr(state, depth, "pipelined INCR");
}

void BM_OnceLua(benchmark::State& state, int dup) {
  size_t distinct = 0;
  const auto ids =
      DeliveryIds(static_cast<size_t>(state.max_iterations), dup, &distinct);
  std::vector<std::string> keys;
  keys.reserve(ids.size());
  for (const auto& id : ids) keys.push_back("evt:c0:" + id);
  Redis redis;
  if (!ConnectOrFail(state, &redis)) return;
  Reply loaded = redis.Command("SCRIPT LOAD %s", kOnceScript);
  if (loaded == nullptr || loaded->type != REDIS_REPLY_STRING) {
    Fail(state, "SCRIPT LOAD", redis.Error());
    return;
  }
  const std::string sha(loaded->str, loaded->len);
  const int64_t memory_before = redis.UsedMemory();
  LatencyLog lat;
  size_t next = 0;
  int64_t applied = 0;
  TimedLoop(state, &lat, 1, "EVALSHA", [&](std::string* error) {
    const std::string& key = keys[next++];
    Reply r = redis.Command("EVALSHA %s 2 %b c0 1", sha.c_str(), key.data(),
                            key.size());
    if (r == nullptr || r->type != REDIS_REPLY_INTEGER) {
      *error = redis.Error();
      return false;
    }
    applied += r->integer > 0 ? 1 : 0;
    return true;
  });
  if (!state.error_occurred() && applied != static_cast<int64_t>(distinct)) {
    Fail(state, "check",
         "applied " + std::to_string(applied) +
             " != " + std::to_string(distinct) + " distinct ids");
  }
  Check(state, &redis, static_cast<int64_t>(distinct),
        static_cast<int64_t>(distinct));
  lat.Report(state);
  if (dup == 0 && !state.error_occurred()) {
    state.counters["bytes_per_marker"] =
        static_cast<double>(redis.UsedMemory() - memory_before) /
        static_cast<double>(distinct);
  }
}

void RegisterAll() {
  const char* label = std::getenv("REDIS_LABEL");
  const std::string base =
      std::string("redis/") + (label != nullptr ? label : "unlabelled");
  Register(base + "/incr", Scaled(10000), BM_Incr);
  for (int depth : {100, 1000}) {
    Register(base + "/incr_pipelined/depth:" + std::to_string(depth),
             Scaled(400000) / depth, BM_IncrPipelined, depth);
  }
  for (int dup : {0, 50, 90}) {
    Register(base + "/once_lua/dup:" + std::to_string(dup), Scaled(10000),
             BM_OnceLua, dup);
  }
}

}  // namespace
}  // namespace tally::bench

int main(int argc, char** argv) {
  tally::bench::RegisterAll();
  return tally::bench::RunBenchmarks(argc, argv);
}
