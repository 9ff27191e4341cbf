// tally_claims_bench: tally's claims against the Redis lock recipe they
// replace, side by side in one run.
//
// The workload: a trigger per item (20,000 items x $TALLY_BENCH_SCALE)
// that must have its side effect (here: counting the item in "items") done
// once, each delivered 3 times as an at-least-once queue would: 60,000
// deliveries, the copies shuffled with a fixed seed (DeliveryIds: dup 67%,
// windows of 4,096). One thread handles them in order, one call sequence
// per delivery:
//
//   claims/tally/claim_complete_count/pair:K
//       Db::Claim(item:<id>, "worker", 30 s); when kAcquired,
//       Db::CompleteClaim(item:<id>, token, "", {items +1}): the
//       completion and its count are one atomic write. A redelivery of a
//       done item is answered kDone by the Claim alone. sync=false, as the
//       other tally sides of bench/.
//   claims/redis/set_nx_incr_del/pair:K
//       the blog recipe: SET lock:item:<id> locked NX EX 30; when OK,
//       INCR items and DEL the lock. NOT exactly-once: once the lock is
//       deleted, a redelivery acquires it again and counts again, so on
//       one thread every delivery counts (`counted` is 3x the items).
//   claims/redis/set_nx_incr_done/pair:K
//       the recipe made to count once: EXISTS done:item:<id> first (one
//       more round trip; a done item stops there), then SET NX EX as above
//       and, when OK, INCR items and SET done:item:<id> 1 in one MULTI/EXEC
//       (pipelined: one round trip), then DEL the lock. Exactly-once here
//       (one thread); with workers racing, EXISTS before SET NX is a
//       check-then-act: a worker may pass the check, then get the lock
//       another just completed and released, and count again. Either
//       Redis recipe's DEL also removes the lock of whoever holds it now
//       when the lease ran out mid-work (no fencing token).
//
// The Redis rows run against the server on 127.0.0.1:$REDIS_PORT, emptied
// (FLUSHALL) before each row; only with $REDIS_PORT and hiredis. Start it
// without persistence, as run_suite.sh does for the peers (it does not run
// this binary): redis-server --save '' --appendonly no.
//
// After each run the side is checked whole: tally's "items" equals the
// items and every claim (ListClaims, paged) is done with token 1, and
// Verify is clean; Redis's `items` is what the recipe counts (3x the items
// or the items) and the server holds `items`, no lock and, for the done
// recipe, one done marker per item.
// ops_per_s counts deliveries; `counted` is the side's final `items`.
//
// K = 0..2: every row runs in turn three times, so each ratio has three
// pairs from this one run.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "bench/tally_util.h"
#include "tally/tally.h"
#ifdef TALLY_CLAIMS_REDIS
#include "bench/redis_client.h"
#endif

namespace tally::bench {
namespace {

constexpr int kPairs = 3;
constexpr int kCopies = 3;            // deliveries per item
constexpr int kDupPercent = 67;       // DeliveryIds: 100 / (100 - 67) = 3
constexpr int64_t kLeaseMs = 30'000;  // EX 30
constexpr char kItems[] = "items";
static_assert(100 / (100 - kDupPercent) == kCopies, "copies per item");
#ifdef TALLY_CLAIMS_REDIS
constexpr bool kWithHiredis = true;
#else
constexpr bool kWithHiredis = false;
#endif

// The delivery stream of `n` deliveries (kCopies per item) and how many
// distinct items it names.
struct Deliveries {
  std::vector<std::string> ids;  // "evt-K", per delivery
  int64_t items = 0;
};

Deliveries MakeDeliveries(int64_t n) {
  Deliveries d;
  size_t distinct = 0;
  d.ids = DeliveryIds(static_cast<size_t>(n), kDupPercent, &distinct);
  d.items = static_cast<int64_t>(distinct);
  return d;
}

// "" when `counted` is `want`, else the difference in words.
std::string CheckCounted(int64_t counted, int64_t want) {
  if (counted == want) return "";
  return "items " + std::to_string(counted) + " (want " + std::to_string(want) +
         ")";
}

// ---- tally ----

// Every claim, paged: each done with token 1 (granted once), as many as
// `items`. "" when so.
std::string CheckClaims(Db* db, int64_t items) {
  ListClaimsOptions o;
  o.limit = kMaxListClaims;
  int64_t seen = 0;
  for (;;) {
    Result<std::vector<ClaimInfo>> page = db->ListClaims(o);
    if (!page.ok()) return page.status().ToString();
    for (const ClaimInfo& c : *page) {
      if (c.state != ClaimState::kDone || c.token != 1) {
        return "claim " + c.key + " is " + ClaimStateName(c.state) +
               ", token " + std::to_string(c.token);
      }
    }
    seen += static_cast<int64_t>(page->size());
    if (page->size() < o.limit) break;
    o.start_after = page->back().key;
  }
  if (seen == items) return "";
  return std::to_string(seen) + " claims (want " + std::to_string(items) + ")";
}

void BM_TallyClaims(benchmark::State& state, int /*pair*/) {
  const Deliveries d = MakeDeliveries(state.max_iterations);
  TempDir dir;
  auto db = OpenTally(state, dir);  // Options(): sync=false
  if (db == nullptr || !CreateCounters(state, db.get(), {kItems}, 1)) return;
  Batch count;
  count.Add(kItems, 1);
  std::vector<std::string> keys;  // the claim keys, item:<id>
  keys.reserve(d.ids.size());
  for (const std::string& id : d.ids) keys.push_back("item:" + id);
  LatencyLog lat;
  size_t next = 0;
  TimedLoop(state, &lat, 1, "claim", [&](std::string* error) {
    const std::string& id = keys[next++];
    Result<ClaimResult> c = db->Claim(id, "worker", kLeaseMs);
    if (!c.ok()) return Ok(c.status(), error);
    if (c->answer == ClaimAnswer::kDone) return true;
    if (c->answer != ClaimAnswer::kAcquired) {
      // One thread, one holder: a claim is new or done, never busy.
      *error = std::string("Claim answered ") + ClaimAnswerName(c->answer);
      return false;
    }
    Result<ClaimResult> done = db->CompleteClaim(id, c->claim.token, "", count);
    if (!done.ok()) return Ok(done.status(), error);
    if (done->answer != ClaimAnswer::kCompleted) {
      *error = std::string("CompleteClaim answered ") +
               ClaimAnswerName(done->answer);
      return false;
    }
    return true;
  });
  if (state.error_occurred()) return;
  Result<int64_t> counted = db->ReadExact(kItems);
  if (!counted.ok())
    return Fail(state, "read items", counted.status().ToString());
  std::string err = CheckCounted(*counted, d.items);
  if (err.empty()) err = CheckClaims(db.get(), d.items);
  if (err.empty()) err = VerifyProblem(*db);
  if (!err.empty()) return Fail(state, "tally check", err);
  lat.Report(state);
  state.counters["counted"] = static_cast<double>(*counted);
}

// ---- Redis ----
#ifdef TALLY_CLAIMS_REDIS

// The two Redis recipes of the header comment.
enum class Recipe { kIncrDel, kIncrDone };

// Whether `r` is an integer reply (INCR, DEL, EXISTS).
bool IsInt(const Reply& r) {
  return r != nullptr && r->type == REDIS_REPLY_INTEGER;
}

// Whether `r` is the status reply `status` (SET's OK, MULTI's OK, QUEUED).
bool IsStatus(const Reply& r, const char* status) {
  return r != nullptr && r->type == REDIS_REPLY_STATUS &&
         std::string(r->str, r->len) == status;
}

// INCR items and SET done:item:<id> 1 in one MULTI/EXEC, pipelined (one
// round trip). False on an error.
bool IncrAndMarkDone(Redis* redis, const char* id) {
  if (!redis->Append("MULTI") || !redis->Append("INCR %s", kItems) ||
      !redis->Append("SET done:item:%s 1", id) || !redis->Append("EXEC")) {
    return false;
  }
  // Every reply is read, in order, whatever an earlier one was.
  bool ok = IsStatus(redis->Next(), "OK");       // MULTI
  ok = IsStatus(redis->Next(), "QUEUED") && ok;  // INCR
  ok = IsStatus(redis->Next(), "QUEUED") && ok;  // SET done
  Reply exec = redis->Next();
  return ok && exec != nullptr && exec->type == REDIS_REPLY_ARRAY &&
         exec->elements == 2;
}

// One delivery of item `id` by `recipe`. False with *error on an error.
bool Deliver(Redis* redis, Recipe recipe, const char* id, std::string* error) {
  if (recipe == Recipe::kIncrDone) {
    Reply done = redis->Command("EXISTS done:item:%s", id);
    if (!IsInt(done)) {
      *error = "EXISTS: " + redis->Error();
      return false;
    }
    if (done->integer != 0) return true;  // done before: nothing to do
  }
  Reply lock = redis->Command("SET lock:item:%s locked NX EX 30", id);
  if (!IsStatus(lock, "OK")) {
    // One thread: the lock is always free (a nil reply would mean held).
    *error = "SET NX: " + redis->Error();
    return false;
  }
  const bool counted = recipe == Recipe::kIncrDone
                           ? IncrAndMarkDone(redis, id)
                           : IsInt(redis->Command("INCR %s", kItems));
  if (!counted || !IsInt(redis->Command("DEL lock:item:%s", id))) {
    *error = "count: " + redis->Error();
    return false;
  }
  return true;
}

void BM_RedisClaims(benchmark::State& state, Recipe recipe, int /*pair*/) {
  const Deliveries d = MakeDeliveries(state.max_iterations);
  Redis redis;
  std::string err = redis.Connect();  // FLUSHALL
  if (!err.empty()) return Fail(state, "redis", err);
  LatencyLog lat;
  size_t next = 0;
  TimedLoop(state, &lat, 1, "deliver", [&](std::string* error) {
    return Deliver(&redis, recipe, d.ids[next++].c_str(), error);
  });
  if (state.error_occurred()) return;
  // The lock recipe counts every delivery (one thread: the lock is always
  // deleted before the next); the done recipe each item once, and keeps
  // one done marker per item. No lock is left either way.
  const bool once = recipe == Recipe::kIncrDone;
  const int64_t counted = redis.GetInt(kItems);
  err = CheckCounted(counted, once ? d.items : d.items * kCopies);
  const int64_t keys = redis.DbSize();
  const int64_t want_keys = 1 + (once ? d.items : 0);
  if (err.empty() && keys != want_keys) {
    err =
        std::to_string(keys) + " keys (want " + std::to_string(want_keys) + ")";
  }
  if (!err.empty()) return Fail(state, "redis check", err);
  lat.Report(state);
  state.counters["counted"] = static_cast<double>(counted);
}
#endif  // TALLY_CLAIMS_REDIS

void RegisterAll() {
  [[maybe_unused]] const bool redis =
      RedisRows("tally_claims_bench", kWithHiredis);
  const int64_t deliveries = Scaled(20'000) * kCopies;
  for (int k = 0; k < kPairs; ++k) {
    const std::string p = "/pair:" + std::to_string(k);
    Register("claims/tally/claim_complete_count" + p, deliveries,
             BM_TallyClaims, k);
#ifdef TALLY_CLAIMS_REDIS
    if (redis) {
      Register("claims/redis/set_nx_incr_del" + p, deliveries, BM_RedisClaims,
               Recipe::kIncrDel, k);
      Register("claims/redis/set_nx_incr_done" + p, deliveries, BM_RedisClaims,
               Recipe::kIncrDone, k);
    }
#endif
  }
}

}  // namespace
}  // namespace tally::bench

int main(int argc, char** argv) {
  tally::bench::RegisterAll();
  return tally::bench::RunBenchmarks(argc, argv,
                                     {{"tally_version", TALLY_VERSION_STRING}});
}
