// tally_likes_bench: issue 15's likes workload, tally against SQLite and
// Redis doing the same, side by side in one run (docs/benchmarks.md,
// "Targets (issue 15)").
//
// The workload (bench/likes_workload.h): posts with Zipf popularity
// (s = 1.0; 10,000,000 posts in full mode, 100,000 in quick mode), every
// like a once-increment of keyed counter "likes" with key = post id and
// event id = user id, 20% of the likes delivered twice (the copy must come
// back kDuplicate). Each side replays the same deliveries:
//
//   likes/tally/once/pair:K             IncrementOnce per like
//   likes/tally/batch:1000/pair:K       Apply of 1000 AddOnce
//   likes/sqlite/batch:1/pair:K         one transaction per like
//   likes/sqlite/batch:1000/pair:K      one transaction per 1000 likes
//   likes/redis/lua/pair:K              one EVALSHA per like
//   likes/redis/lua_pipelined/depth:1000/pair:K   1000 EVALSHA per round trip
//
// K = 0..2: the six run in turn three times, so each ratio has three pairs
// measured minutes apart (bench/report.py pairs sample K of both sides).
// SQLite: WAL, synchronous=NORMAL (as sqlite_peer_bench's per-event peer;
// tally runs with sync=false), likes(post, user) WITHOUT ROWID primary key,
// INSERT OR IGNORE, then only when it inserted (sqlite3_changes) an UPSERT
// of posts(post, likes). Redis: a Lua script doing SET like:P:U 1 NX and,
// when it set, INCR post:P; the server bench/run_suite.sh starts has no
// persistence (--save "" --appendonly no, as redis_peer_bench's), unpinned;
// the Redis rows run only when $REDIS_PORT is set and the binary was built
// with hiredis. ops_per_s counts deliveries (copies included).
//
// After each run every side is checked whole: every liked post's value
// equals the generator's count of its distinct likes (and no other post
// has one), the applied/duplicate outcomes equal the distinct likes and the
// copies, and tally::Verify is clean. A failed check fails the benchmark.
// Pair 0 of each batched side also reports space: tally after a full
// tally::Compact (disk_bytes_per_key/_per_like: the whole directory;
// sst_bytes_per_key/_per_like), SQLite after a WAL checkpoint and VACUUM,
// Redis used_memory growth and used_memory_rss.
//
//   likes/rss/keys:N        N distinct keys (10,000,000 in full mode) of
//                           one keyed counter, one plain increment each,
//                           Apply of 1000: vmrss_mb, vmhwm_mb against
//                           rss_bound_mb = block cache + every family's
//                           memtables (write_buffer_size x
//                           max_write_buffer_number) + 64 MiB; run first.
//   likes/top10/rollup, likes/top10/exact
//                           TopKeys(10) from the roll-up (after RollupNow:
//                           rollup_ms) and by an exact scan, on the loaded
//                           database of the batch side; both must equal the
//                           generator's top 10.
//
// Feed pages, the five sides in turn three times (K = 0..2), each reading
// the same pages in the same order: 50 distinct posts per page (a feed
// shows a post once), Zipf-drawn with another seed (celebrities, cold posts
// and posts nobody liked, which read 0), 2000 pages x TALLY_BENCH_SCALE.
// Every side reads the likes of one batch-side load (the deliveries of one
// likes/*/batch:1000 run) that it wrote with its own batch side's code;
// keys/s counts 50 keys per page for every side, and every value read is
// checked against the generator's count (a wrong one fails the benchmark):
//
//   likes/read50/read_keys/pair:K    tally: one ReadKeys of the 50 keys, on
//                                    the loaded database after Compact
//   likes/read50/read_exact/pair:K   tally: 50 ReadExact (reference)
//   likes/read50/sqlite_in/pair:K    SQLite: one prepared SELECT post, likes
//                                    FROM posts WHERE post IN (?, ...50) per
//                                    page (WAL, synchronous=NORMAL, as the
//                                    write side); a post without a row is 0
//   likes/read50/redis_mget/depth:D/pair:K
//                                    Redis: one MGET of the page's 50
//                                    post:<id> keys, D pages per round trip:
//                                    D = 1 (unpipelined) and kMgetDepth = 16
//                                    (the target's side; past 16 the rate
//                                    grows little while a round trip's
//                                    latency grows with D)

#include <benchmark/benchmark.h>
#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "bench/bench_util.h"
#include "bench/likes_workload.h"
#include "bench/sqlite_statement.h"
#include "bench/tally_util.h"
#include "engine/rocksdb_options.h"
#include "tally/tally.h"
#ifdef TALLY_LIKES_REDIS
#include "bench/redis_client.h"
#endif

namespace tally::bench {
namespace {

constexpr char kLikes[] = "likes";
constexpr int kBatch = 1000;
constexpr int kPairs = 3;
constexpr int kPageKeys = 50;
// Redis feed pages (MGET) per pipelined round trip: see the header
// (bench/reporting/ratios.py's MGET_DEPTH names the same).
constexpr int kMgetDepth = 16;

bool FullMode() { return Scaled(1) >= 5; }
uint32_t PostCount() { return FullMode() ? 10'000'000 : 100'000; }

std::string Num(uint64_t v) { return std::to_string(v); }

// ---- tally ----

bool CreateLikes(benchmark::State& state, Db* db) {
  CounterSpec spec;
  spec.keyed = true;  // one shard per post: most posts are cold
  Status s = db->CreateCounter(kLikes, spec);
  if (!s.ok()) Fail(state, "create likes", s.ToString());
  return s.ok();
}

// Outcomes of the deliveries; false (and *error) on anything but
// kApplied/kDuplicate.
struct Outcomes {
  uint64_t applied = 0;
  uint64_t duplicates = 0;
  bool Count(Outcome o, std::string* error) {
    if (o == Outcome::kApplied) {
      ++applied;
    } else if (o == Outcome::kDuplicate) {
      ++duplicates;
    } else {
      *error = std::string("unexpected outcome ") + OutcomeName(o);
      return false;
    }
    return true;
  }
};

// The peers' outcome check: they count the new likes only.
std::string CheckApplied(const LikesWorkload& w, uint64_t applied) {
  if (applied == w.distinct) return "";
  return "applied " + Num(applied) + " (want " + Num(w.distinct) + ")";
}

std::string CheckOutcomes(const LikesWorkload& w, const Outcomes& o) {
  if (o.applied == w.distinct && o.duplicates == w.copies) return "";
  return "applied " + Num(o.applied) + " (want " + Num(w.distinct) +
         "), duplicates " + Num(o.duplicates) + " (want " + Num(w.copies) + ")";
}

// Every key of the counter, paged: each value equals the generator's count,
// and the keys are exactly the liked posts. Then the total and Verify.
std::string CheckTallyLikes(Db* db, const LikesWorkload& w) {
  ListKeysOptions page;
  page.limit = kMaxListKeys;
  uint64_t keys = 0;
  int64_t total = 0;
  for (;;) {
    Result<std::vector<KeyValue>> got = db->ListKeys(kLikes, page);
    if (!got.ok()) return "ListKeys: " + got.status().ToString();
    for (const KeyValue& kv : *got) {
      const uint64_t post = std::strtoull(kv.key.c_str(), nullptr, 10);
      if (post >= w.posts || kv.value != w.likes[post]) {
        return "post " + kv.key + " reads " + std::to_string(kv.value) +
               " (want " +
               (post < w.posts ? Num(w.likes[post]) : std::string("none")) +
               ")";
      }
      ++keys;
      total += kv.value;
    }
    if (got->size() < page.limit) break;
    page.start_after = got->back().key;
  }
  if (keys != w.posts_liked || static_cast<uint64_t>(total) != w.distinct) {
    return "keys " + Num(keys) + " (want " + Num(w.posts_liked) + "), total " +
           std::to_string(total) + " (want " + Num(w.distinct) + ")";
  }
  for (uint32_t post : w.celebrities) {  // the single-key read path too
    Result<int64_t> v = db->ReadExact({kLikes, Num(post)});
    if (!v.ok() || *v != w.likes[post]) return "ReadExact of post " + Num(post);
  }
  VerifyReport report;
  Status s = Verify(*db, &report);
  if (!s.ok()) return "Verify: " + s.ToString();
  if (!report.ok()) return "Verify: " + report.problems.front();
  return "";
}

// Applies the deliveries [begin, end) as one Batch.
Status ApplyLikes(Db* db, const LikesWorkload& w, size_t begin, size_t end,
                  Batch* batch, std::vector<IncrementResult>* results) {
  IdText post, user;
  batch->Clear();
  for (size_t i = begin; i < end; ++i) {
    const Like& l = w.deliveries[i];
    batch->AddOnce({kLikes, post.Of(l.post)}, user.Of(l.user), 1);
  }
  return db->Apply(*batch, results);
}

void ReportTallySpace(benchmark::State& state, Db* db, const TempDir& dir,
                      const LikesWorkload& w) {
  Status s = tally::Compact(*db);
  Result<DbStats> st = tally::GetDbStats(*db);
  if (!s.ok() || !st.ok()) {
    Fail(state, "compact", s.ok() ? st.status().ToString() : s.ToString());
    return;
  }
  uint64_t sst = 0;
  for (const FamilyStats& f : st->families) sst += f.sst_bytes;
  const double disk = static_cast<double>(DirBytes(dir.path()));
  state.counters["disk_bytes_per_key"] =
      disk / static_cast<double>(w.posts_liked);
  state.counters["disk_bytes_per_like"] =
      disk / static_cast<double>(w.distinct);
  state.counters["sst_bytes_per_key"] =
      static_cast<double>(sst) / static_cast<double>(w.posts_liked);
  state.counters["sst_bytes_per_like"] =
      static_cast<double>(sst) / static_cast<double>(w.distinct);
}

void ReportWorkload(benchmark::State& state, const LikesWorkload& w) {
  state.counters["posts"] = static_cast<double>(w.posts);
  state.counters["posts_liked"] = static_cast<double>(w.posts_liked);
  state.counters["distinct_likes"] = static_cast<double>(w.distinct);
  state.counters["copies"] = static_cast<double>(w.copies);
}

// After a tally side's loop: the checks, then latency and workload
// figures; false when the benchmark failed (in the loop or here).
bool FinishTally(benchmark::State& state, Db* db, const LikesWorkload& w,
                 const Outcomes& o, LatencyLog* lat) {
  if (state.error_occurred()) return false;
  std::string err = CheckOutcomes(w, o);
  if (err.empty()) err = CheckTallyLikes(db, w);
  if (!err.empty()) {
    Fail(state, "likes check", err);
    return false;
  }
  lat->Report(state);
  ReportWorkload(state, w);
  return true;
}

void BM_TallyOnce(benchmark::State& state, int /*pair*/) {
  const LikesWorkload w =
      MakeLikes(PostCount(), static_cast<size_t>(state.max_iterations));
  TempDir dir;
  auto db = OpenTally(state, dir);
  if (db == nullptr || !CreateLikes(state, db.get())) return;
  LatencyLog lat;
  Outcomes o;
  IdText post, user;
  size_t next = 0;
  TimedLoop(state, &lat, 1, "IncrementOnce", [&](std::string* error) {
    const Like& l = w.deliveries[next++];
    Result<IncrementResult> r =
        db->IncrementOnce({kLikes, post.Of(l.post)}, user.Of(l.user), 1);
    if (!r.ok()) return Ok(r.status(), error);
    return o.Count(r->outcome, error);
  });
  if (!FinishTally(state, db.get(), w, o, &lat)) return;
}

// The batch side's load, also the database the read benchmarks use.
std::string LoadBatches(Db* db, const LikesWorkload& w, Outcomes* o) {
  Batch batch;
  std::vector<IncrementResult> results;
  std::string error;
  for (size_t i = 0; i < w.deliveries.size(); i += kBatch) {
    Status s = ApplyLikes(db, w, i, std::min(w.deliveries.size(), i + kBatch),
                          &batch, &results);
    if (!s.ok()) return s.ToString();
    for (const IncrementResult& r : results) {
      if (!o->Count(r.outcome, &error)) return error;
    }
  }
  return "";
}

void BM_TallyBatch(benchmark::State& state, int pair) {
  const LikesWorkload w = MakeLikes(
      PostCount(), static_cast<size_t>(state.max_iterations) * kBatch);
  TempDir dir;
  auto db = OpenTally(state, dir);
  if (db == nullptr || !CreateLikes(state, db.get())) return;
  LatencyLog lat;
  Outcomes o;
  Batch batch;
  std::vector<IncrementResult> results;
  size_t next = 0;
  TimedLoop(state, &lat, kBatch, "Apply", [&](std::string* error) {
    Status s = ApplyLikes(db.get(), w, next, next + kBatch, &batch, &results);
    next += kBatch;
    if (!s.ok()) return Ok(s, error);
    for (const IncrementResult& r : results) {
      if (!o.Count(r.outcome, error)) return false;
    }
    return true;
  });
  if (!FinishTally(state, db.get(), w, o, &lat)) return;
  if (pair == 0) ReportTallySpace(state, db.get(), dir, w);
}

// ---- SQLite ----

class LikesSqlite : public WalConnection {
 public:
  // WAL, synchronous=NORMAL, the two tables and the statements; an error
  // text or "".
  std::string Open(const std::string& path) {
    if (!OpenWal(path, "NORMAL") ||
        !Exec("CREATE TABLE likes(post INTEGER, user INTEGER, "
              "PRIMARY KEY(post, user)) WITHOUT ROWID") ||
        !Exec("CREATE TABLE posts(post INTEGER PRIMARY KEY, likes INTEGER)") ||
        !insert_.Prepare(db_,
                         "INSERT OR IGNORE INTO likes(post, user) "
                         "VALUES(?1, ?2)") ||
        !bump_.Prepare(db_,
                       "INSERT INTO posts(post, likes) VALUES(?1, 1) "
                       "ON CONFLICT(post) DO UPDATE SET likes = likes + 1") ||
        !page_.Prepare(db_, PageQuery().c_str())) {
      return Error();
    }
    return "";
  }

  // The like; *applied tells whether it was new. False on an error.
  bool AddLike(const Like& l, bool* applied) {
    sqlite3_bind_int64(insert_.get(), 1, l.post);
    sqlite3_bind_int64(insert_.get(), 2, l.user);
    if (!insert_.Run()) return false;
    *applied = sqlite3_changes(db_) == 1;
    if (!*applied) return true;
    sqlite3_bind_int64(bump_.get(), 1, l.post);
    return bump_.Run();
  }

  // The likes [begin, end) of `w` in one transaction; *applied counts the
  // new ones. False on an error.
  bool AddLikes(const LikesWorkload& w, size_t begin, size_t end,
                uint64_t* applied) {
    bool ok = Begin();
    for (size_t i = begin; i < end && ok; ++i) {
      bool fresh = false;
      ok = AddLike(w.deliveries[i], &fresh);
      *applied += fresh ? 1 : 0;
    }
    return ok && Commit();
  }

  // A feed page: the rows of kPageKeys posts (distinct ids) by one prepared
  // SELECT ... WHERE post IN (...); a post nobody liked has no row. Each
  // row must hold the generator's count and every liked post must have one.
  // An error text or "".
  std::string ReadPage(const uint32_t* posts, const LikesWorkload& w) {
    uint64_t liked = 0;
    for (int i = 0; i < kPageKeys; ++i) {
      sqlite3_bind_int64(page_.get(), i + 1, posts[i]);
      liked += w.likes[posts[i]] != 0 ? 1 : 0;
    }
    uint64_t rows = 0;
    std::string err = StepPosts(page_.get(), w, &rows);
    sqlite3_reset(page_.get());
    if (err.empty() && rows != liked) {
      err = Num(rows) + " rows (want " + Num(liked) + ")";
    }
    return err;
  }

  // Every post row equals the generator's count; so do the totals.
  std::string Check(const LikesWorkload& w) {
    Statement q;
    if (!q.Prepare(db_, "SELECT post, likes FROM posts")) return Error();
    uint64_t rows = 0;
    const std::string err = StepPosts(q.get(), w, &rows);
    if (!err.empty()) return err;
    Statement n;
    if (!n.Prepare(db_, "SELECT count(*) FROM likes") ||
        sqlite3_step(n.get()) != SQLITE_ROW) {
      return Error();
    }
    const uint64_t likes =
        static_cast<uint64_t>(sqlite3_column_int64(n.get(), 0));
    if (rows != w.posts_liked || likes != w.distinct) {
      return "posts " + Num(rows) + " (want " + Num(w.posts_liked) +
             "), likes rows " + Num(likes) + " (want " + Num(w.distinct) + ")";
    }
    return "";
  }

 private:
  // Steps `q`, a query of (post, likes) rows, to its end: each row must
  // hold the generator's count; *rows counts them. An error text or "".
  std::string StepPosts(sqlite3_stmt* q, const LikesWorkload& w,
                        uint64_t* rows) {
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
      const int64_t post = sqlite3_column_int64(q, 0);
      const int64_t v = sqlite3_column_int64(q, 1);
      if (post < 0 || post >= w.posts || v != w.likes[post]) {
        return "post " + std::to_string(post) + " has " + std::to_string(v);
      }
      ++*rows;
    }
    return rc == SQLITE_DONE ? "" : Error();
  }

  static std::string PageQuery() {
    std::string q = "SELECT post, likes FROM posts WHERE post IN (?";
    for (int i = 1; i < kPageKeys; ++i) q += ",?";
    return q + ")";
  }

  Statement insert_, bump_, page_;
};

void BM_Sqlite(benchmark::State& state, int per_txn, int pair) {
  const LikesWorkload w =
      MakeLikes(PostCount(), static_cast<size_t>(state.max_iterations) *
                                 static_cast<size_t>(per_txn));
  TempDir dir;
  LikesSqlite db;
  const std::string path = dir.Sub("likes.sqlite");
  const std::string err = dir.ok() ? db.Open(path) : "mkdtemp failed";
  if (!err.empty()) return Fail(state, "sqlite open", err);
  LatencyLog lat;
  uint64_t applied = 0;
  size_t next = 0;
  TimedLoop(state, &lat, per_txn, "transaction", [&](std::string* error) {
    const bool ok = db.AddLikes(w, next, next + per_txn, &applied);
    next += per_txn;
    if (!ok) *error = db.Error();
    return ok;
  });
  if (state.error_occurred()) return;
  std::string check = CheckApplied(w, applied);
  if (check.empty()) check = db.Check(w);
  if (!check.empty()) return Fail(state, "sqlite check", check);
  lat.Report(state);
  ReportWorkload(state, w);
  if (pair == 0 && per_txn > 1) {
    if (!db.Exec("PRAGMA wal_checkpoint(TRUNCATE)") || !db.Exec("VACUUM") ||
        !db.Exec("PRAGMA wal_checkpoint(TRUNCATE)")) {
      return Fail(state, "sqlite vacuum", db.Error());
    }
    const double bytes = static_cast<double>(DirBytes(dir.path()));
    state.counters["disk_bytes_per_key"] =
        bytes / static_cast<double>(w.posts_liked);
    state.counters["disk_bytes_per_like"] =
        bytes / static_cast<double>(w.distinct);
  }
}

// ---- Redis ----
#ifdef TALLY_LIKES_REDIS

const char* const kLikeScript =
    "if redis.call('SET', KEYS[1], 1, 'NX') then "
    "return redis.call('INCR', KEYS[2]) end return -1";

// The two keys of a like, like:P:U and post:P, in fixed buffers.
struct LikeKeys {
  char like[32];
  char post[20];
  int like_len = 0;
  int post_len = 0;
  void Of(const Like& l) {
    like_len = std::snprintf(like, sizeof(like), "like:%u:%u", l.post, l.user);
    post_len = std::snprintf(post, sizeof(post), "post:%u", l.post);
  }
};

// The likes [begin, end) of `w` by EVALSHA of the script `sha`, all of them
// in one round trip; *applied counts the new ones. False on an error.
bool SendLikes(Redis* redis, const std::string& sha, const LikesWorkload& w,
               size_t begin, size_t end, uint64_t* applied) {
  LikeKeys k;
  bool ok = true;
  for (size_t i = begin; i < end && ok; ++i) {
    k.Of(w.deliveries[i]);
    ok = redis->Append("EVALSHA %s 2 %b %b", sha.c_str(), k.like,
                       static_cast<size_t>(k.like_len), k.post,
                       static_cast<size_t>(k.post_len));
  }
  for (size_t i = begin; i < end && ok; ++i) {
    Reply r = redis->Next();
    ok = r != nullptr && r->type == REDIS_REPLY_INTEGER;
    if (ok && r->integer > 0) ++*applied;
  }
  return ok;
}

// The like script loaded into the server: its sha, or "" (*error set).
std::string LoadLikeScript(Redis* redis, std::string* error) {
  Reply loaded = redis->Command("SCRIPT LOAD %s", kLikeScript);
  if (loaded == nullptr || loaded->type != REDIS_REPLY_STRING) {
    *error = "SCRIPT LOAD: " + redis->Error();
    return "";
  }
  return std::string(loaded->str, loaded->len);
}

std::string CheckRedis(Redis* redis, const LikesWorkload& w) {
  // Every liked post's counter, pipelined 1000 GETs at a time.
  std::vector<uint32_t> liked;
  for (uint32_t p = 0; p < w.posts; ++p) {
    if (w.likes[p] != 0) liked.push_back(p);
  }
  char key[20];
  for (size_t i = 0; i < liked.size(); i += kBatch) {
    const size_t end = std::min(liked.size(), i + kBatch);
    for (size_t j = i; j < end; ++j) {
      const int n = std::snprintf(key, sizeof(key), "post:%u", liked[j]);
      if (!redis->Append("GET %b", key, static_cast<size_t>(n))) {
        return redis->Error();
      }
    }
    for (size_t j = i; j < end; ++j) {
      Reply r = redis->Next();
      if (r == nullptr || r->type != REDIS_REPLY_STRING ||
          std::atoll(r->str) != w.likes[liked[j]]) {
        return "post:" + Num(liked[j]) + " (want " + Num(w.likes[liked[j]]) +
               ")";
      }
    }
  }
  const int64_t keys = redis->DbSize();
  if (keys != static_cast<int64_t>(w.distinct + w.posts_liked)) {
    return "DBSIZE " + std::to_string(keys) + " (want " +
           Num(w.distinct + w.posts_liked) + ")";
  }
  return "";
}

void BM_Redis(benchmark::State& state, int depth, int pair) {
  const LikesWorkload w =
      MakeLikes(PostCount(), static_cast<size_t>(state.max_iterations) *
                                 static_cast<size_t>(depth));
  Redis redis;
  std::string err = redis.Connect();
  if (!err.empty()) return Fail(state, "redis", err);
  const std::string sha = LoadLikeScript(&redis, &err);
  if (sha.empty()) return Fail(state, "redis", err);
  const int64_t memory_before = redis.UsedMemory();
  LatencyLog lat;
  uint64_t applied = 0;
  size_t next = 0;
  TimedLoop(state, &lat, depth, "EVALSHA", [&](std::string* error) {
    const bool ok = SendLikes(&redis, sha, w, next, next + depth, &applied);
    next += depth;
    if (!ok) *error = redis.Error();
    return ok;
  });
  if (state.error_occurred()) return;
  err = CheckApplied(w, applied);
  if (err.empty()) err = CheckRedis(&redis, w);
  if (!err.empty()) return Fail(state, "redis check", err);
  lat.Report(state);
  ReportWorkload(state, w);
  if (pair == 0 && depth > 1) {
    const double used = static_cast<double>(redis.UsedMemory() - memory_before);
    state.counters["memory_bytes_per_key"] =
        used / static_cast<double>(w.posts_liked);
    state.counters["memory_bytes_per_like"] =
        used / static_cast<double>(w.distinct);
    state.counters["used_memory_rss_mb"] =
        static_cast<double>(redis.MemoryField("used_memory_rss")) / 1048576.0;
  }
}
#endif  // TALLY_LIKES_REDIS

// ---- the loaded database: TopKeys and feed-page reads ----

struct Loaded {
  LikesWorkload w;
  TempDir dir;
  std::unique_ptr<Db> db;
  std::string error;
  // The same likes written by the peers' batch sides, for their feed
  // pages: built by the first feed-page benchmark of each.
  std::unique_ptr<LikesSqlite> sqlite;
#ifdef TALLY_LIKES_REDIS
  std::unique_ptr<Redis> redis;
#endif
};

// Built by the first benchmark that needs it: the batch side's load
// (deliveries of one batch-side run), checked, compacted. Closed by main()
// after the benchmarks, before static destruction.
std::unique_ptr<Loaded> g_loaded;

Loaded* GetLoaded(benchmark::State& state) {
  if (g_loaded == nullptr) {
    g_loaded = std::make_unique<Loaded>();
    Loaded* l = g_loaded.get();
    l->w = MakeLikes(PostCount(), static_cast<size_t>(Scaled(240) * kBatch));
    Status s = Db::Open(Options(), l->dir.Sub("tally"), &l->db);
    if (s.ok()) {
      CounterSpec spec;
      spec.keyed = true;
      s = l->db->CreateCounter(kLikes, spec);
    }
    Outcomes o;
    if (s.ok()) l->error = LoadBatches(l->db.get(), l->w, &o);
    if (s.ok() && l->error.empty()) l->error = CheckOutcomes(l->w, o);
    if (s.ok() && l->error.empty()) {
      l->error = CheckTallyLikes(l->db.get(), l->w);
    }
    if (s.ok() && l->error.empty()) s = tally::Compact(*l->db);
    if (!s.ok()) l->error = s.ToString();
  }
  if (!g_loaded->error.empty()) {
    Fail(state, "loaded database", g_loaded->error);
    return nullptr;
  }
  return g_loaded.get();
}

// The loaded likes written again by the SQLite batch side's code (one
// transaction per kBatch deliveries, WAL, synchronous=NORMAL) and checked
// whole; null (the benchmark failed) on an error.
LikesSqlite* LoadedSqlite(benchmark::State& state, Loaded* l) {
  if (l->sqlite != nullptr) return l->sqlite.get();
  auto db = std::make_unique<LikesSqlite>();
  std::string err = db->Open(l->dir.Sub("likes.sqlite"));
  uint64_t applied = 0;
  const size_t n = l->w.deliveries.size();
  for (size_t i = 0; err.empty() && i < n; i += kBatch) {
    if (!db->AddLikes(l->w, i, std::min(n, i + kBatch), &applied)) {
      err = db->Error();
    }
  }
  if (err.empty()) err = CheckApplied(l->w, applied);
  if (err.empty()) err = db->Check(l->w);
  if (!err.empty()) {
    Fail(state, "sqlite load", err);
    return nullptr;
  }
  l->sqlite = std::move(db);
  return l->sqlite.get();
}

#ifdef TALLY_LIKES_REDIS
// The loaded likes written again by the Redis pipelined side's code (the
// Lua script, kBatch EVALSHA per round trip) into the emptied server and
// checked whole; null (the benchmark failed) on an error.
Redis* LoadedRedis(benchmark::State& state, Loaded* l) {
  if (l->redis != nullptr) return l->redis.get();
  auto redis = std::make_unique<Redis>();
  std::string err = redis->Connect();
  const std::string sha = err.empty() ? LoadLikeScript(redis.get(), &err) : "";
  uint64_t applied = 0;
  const size_t n = l->w.deliveries.size();
  for (size_t i = 0; err.empty() && i < n; i += kBatch) {
    if (!SendLikes(redis.get(), sha, l->w, i, std::min(n, i + kBatch),
                   &applied)) {
      err = redis->Error();
    }
  }
  if (err.empty()) err = CheckApplied(l->w, applied);
  if (err.empty()) err = CheckRedis(redis.get(), l->w);
  if (!err.empty()) {
    Fail(state, "redis load", err);
    return nullptr;
  }
  l->redis = std::move(redis);
  return l->redis.get();
}
#endif  // TALLY_LIKES_REDIS

// The generator's top `n`: largest count first, ties in key byte order (as
// TopKeys orders them).
std::vector<KeyValue> ExpectedTop(const LikesWorkload& w, size_t n) {
  std::vector<KeyValue> all;
  for (uint32_t p = 0; p < w.posts; ++p) {
    if (w.likes[p] != 0) all.push_back({Num(p), w.likes[p]});
  }
  auto order = [](const KeyValue& a, const KeyValue& b) {
    return a.value != b.value ? a.value > b.value : a.key < b.key;
  };
  n = std::min(n, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<ptrdiff_t>(n),
                    all.end(), order);
  all.resize(n);
  return all;
}

std::string SameTop(const std::vector<KeyValue>& got,
                    const std::vector<KeyValue>& want, const char* what) {
  bool same = got.size() == want.size();
  for (size_t i = 0; same && i < got.size(); ++i) {
    same = got[i].key == want[i].key && got[i].value == want[i].value;
  }
  if (same) return "";
  std::string text = std::string(what) + " top differs: got";
  for (const KeyValue& kv : got) {
    text += " " + kv.key + "=" + std::to_string(kv.value);
  }
  text += "; want";
  for (const KeyValue& kv : want) {
    text += " " + kv.key + "=" + std::to_string(kv.value);
  }
  return text;
}

void BM_Top(benchmark::State& state, bool exact) {
  Loaded* l = GetLoaded(state);
  if (l == nullptr) return;
  const std::vector<KeyValue> want = ExpectedTop(l->w, 10);
  if (!exact) {
    Stopwatch sw;
    Status s = l->db->RollupNow(kLikes);
    if (!s.ok()) return Fail(state, "RollupNow", s.ToString());
    state.counters["rollup_ms"] = static_cast<double>(sw.Lap()) / 1e6;
  }
  LatencyLog lat;
  TopKeysOptions options;
  options.exact = exact;
  std::string first_error;
  TimedLoop(state, &lat, 1, "TopKeys", [&](std::string* error) {
    Result<TopKeysResult> r = l->db->TopKeys(kLikes, 10, options);
    if (!r.ok()) return Ok(r.status(), error);
    *error = SameTop(r->keys, want, exact ? "exact" : "roll-up");
    if (error->empty() && (r->total != static_cast<int64_t>(l->w.distinct) ||
                           r->key_count != l->w.posts_liked)) {
      *error =
          "total " + std::to_string(r->total) + ", keys " + Num(r->key_count);
    }
    return error->empty();
  });
  if (state.error_occurred()) return;
  lat.Report(state);
  state.counters["keys"] = static_cast<double>(l->w.posts_liked);
}

// Feed pages: kPageKeys distinct posts each (a feed shows a post once per
// page), drawn from the same Zipf popularity (with another seed), so a page
// mixes celebrities, cold posts and posts nobody liked (they read 0). Every
// side reads the same pages in the same order.
struct Pages {
  std::vector<uint32_t> posts;          // page p: [p * kPageKeys, +kPageKeys)
  std::vector<std::string> keys;        // the same posts as tally keys
  std::vector<std::string_view> views;  // the same, as views
};

Pages MakePages(const LikesWorkload& w, size_t pages) {
  Pages out;
  std::mt19937_64 rng(1515);
  ZipfSampler zipf(w.posts, kZipfExponent);
  out.posts.reserve(pages * kPageKeys);
  for (size_t p = 0; p < pages; ++p) {
    const auto first = static_cast<ptrdiff_t>(p * kPageKeys);
    while (out.posts.size() < (p + 1) * kPageKeys) {
      const uint32_t post = PostOfRank(zipf.Sample(rng), w.posts);
      if (std::find(out.posts.begin() + first, out.posts.end(), post) ==
          out.posts.end()) {
        out.posts.push_back(post);
      }
    }
  }
  for (uint32_t post : out.posts) out.keys.push_back(Num(post));
  out.views.assign(out.keys.begin(), out.keys.end());
  return out;
}

// "" when `got` is the generator's count of `post`, else what differs.
std::string CheckPost(const LikesWorkload& w, uint32_t post, int64_t got) {
  if (got == w.likes[post]) return "";
  return "post " + Num(post) + " reads " + std::to_string(got) + " (want " +
         Num(w.likes[post]) + ")";
}

// tally: one ReadKeys of the page (`multi`) or kPageKeys ReadExact.
void BM_Read50(benchmark::State& state, bool multi) {
  Loaded* l = GetLoaded(state);
  if (l == nullptr) return;
  const Pages pages =
      MakePages(l->w, static_cast<size_t>(state.max_iterations));
  LatencyLog lat;
  size_t at = 0;  // the page's first post
  std::vector<std::string_view> keys(kPageKeys);
  TimedLoop(state, &lat, kPageKeys, "read", [&](std::string* error) {
    const std::string_view* first = &pages.views[at];
    if (multi) {
      keys.assign(first, first + kPageKeys);
      Result<std::vector<int64_t>> r = l->db->ReadKeys(kLikes, keys);
      if (!r.ok()) return Ok(r.status(), error);
      for (int i = 0; i < kPageKeys && error->empty(); ++i) {
        *error = CheckPost(l->w, pages.posts[at + i], (*r)[i]);
      }
    } else {
      for (int i = 0; i < kPageKeys && error->empty(); ++i) {
        Result<int64_t> r = l->db->ReadExact({kLikes, first[i]});
        if (!r.ok()) return Ok(r.status(), error);
        *error = CheckPost(l->w, pages.posts[at + i], *r);
      }
    }
    at += kPageKeys;
    return error->empty();
  });
  if (!state.error_occurred()) lat.Report(state);
}

// SQLite: one prepared SELECT ... WHERE post IN (50 ids) per page.
void BM_SqliteIn(benchmark::State& state) {
  Loaded* l = GetLoaded(state);
  LikesSqlite* db = l != nullptr ? LoadedSqlite(state, l) : nullptr;
  if (db == nullptr) return;
  const Pages pages =
      MakePages(l->w, static_cast<size_t>(state.max_iterations));
  LatencyLog lat;
  size_t at = 0;
  TimedLoop(state, &lat, kPageKeys, "SELECT", [&](std::string* error) {
    *error = db->ReadPage(&pages.posts[at], l->w);
    at += kPageKeys;
    return error->empty();
  });
  if (!state.error_occurred()) lat.Report(state);
}

#ifdef TALLY_LIKES_REDIS
// "" when the MGET reply holds the generator's counts of `posts` (nil for a
// post nobody liked), else what differs.
std::string CheckMget(const redisReply* r, const uint32_t* posts,
                      const LikesWorkload& w) {
  if (r == nullptr || r->type != REDIS_REPLY_ARRAY ||
      r->elements != static_cast<size_t>(kPageKeys)) {
    return "not an array of " + std::to_string(kPageKeys);
  }
  std::string error;
  for (int i = 0; i < kPageKeys && error.empty(); ++i) {
    const redisReply* e = r->element[i];
    if (e->type != REDIS_REPLY_NIL && e->type != REDIS_REPLY_STRING) {
      return "post:" + Num(posts[i]) + " is not a string";
    }
    error = CheckPost(w, posts[i],
                      e->type == REDIS_REPLY_NIL ? 0 : std::atoll(e->str));
  }
  return error;
}

// Redis: one MGET of a page's 50 post:<id> keys, `depth` pages per round
// trip (pipelined).
void BM_RedisMget(benchmark::State& state, int depth) {
  Loaded* l = GetLoaded(state);
  Redis* redis = l != nullptr ? LoadedRedis(state, l) : nullptr;
  if (redis == nullptr) return;
  const Pages pages = MakePages(
      l->w, static_cast<size_t>(state.max_iterations) * static_cast<size_t>(depth));
  std::vector<std::string> names;  // post:<id> of every page, in order
  names.reserve(pages.posts.size());
  for (uint32_t post : pages.posts) names.push_back("post:" + Num(post));
  std::vector<const char*> argv(kPageKeys + 1);
  std::vector<size_t> lens(kPageKeys + 1);
  argv[0] = "MGET";
  lens[0] = 4;
  LatencyLog lat;
  size_t at = 0;
  TimedLoop(state, &lat, int64_t{depth} * kPageKeys, "MGET",
            [&](std::string* error) {
              for (int d = 0; d < depth; ++d) {
                for (int i = 0; i < kPageKeys; ++i) {
                  const std::string& n = names[at + d * kPageKeys + i];
                  argv[i + 1] = n.data();
                  lens[i + 1] = n.size();
                }
                if (!redis->AppendArgv(kPageKeys + 1, argv.data(),
                                       lens.data())) {
                  *error = redis->Error();
                  return false;
                }
              }
              for (int d = 0; d < depth && error->empty(); ++d) {
                Reply r = redis->Next();
                *error = CheckMget(r.get(), &pages.posts[at], l->w);
                at += kPageKeys;
              }
              return error->empty();
            });
  if (!state.error_occurred()) lat.Report(state);
}
#endif  // TALLY_LIKES_REDIS

// ---- RSS with 10M keys ----

// What the memory bound allows: the block cache, every family's memtables
// at their most (write_buffer_size x max_write_buffer_number, as
// engine::MakeRocksOptions configures them) and 64 MiB.
double RssBoundBytes(const Options& options) {
  const engine::RocksOptions r = engine::MakeRocksOptions(options);
  double bytes =
      static_cast<double>(options.block_cache_bytes) + 64.0 * 1048576;
  for (const rocksdb::ColumnFamilyDescriptor& f : r.families) {
    bytes += static_cast<double>(f.options.write_buffer_size) *
             static_cast<double>(f.options.max_write_buffer_number);
  }
  return bytes;
}

uint64_t StatusBytes(const char* field) {  // VmRSS / VmHWM of this process
  std::ifstream f("/proc/self/status");
  std::string line;
  const size_t n = std::strlen(field);
  while (std::getline(f, line)) {
    if (line.compare(0, n, field) == 0 && line.size() > n && line[n] == ':') {
      return std::strtoull(line.c_str() + n + 1, nullptr, 10) * 1024;
    }
  }
  return 0;
}

void BM_Rss(benchmark::State& state, uint32_t keys) {
  ResetPeakRss();
  const Options options;
  TempDir dir;
  auto db = OpenTally(state, dir, options);
  if (db == nullptr || !CreateLikes(state, db.get())) return;
  Batch batch;
  std::vector<IncrementResult> results;
  IdText key;
  Status s;
  for (auto _ : state) {
    for (uint32_t k = 0; k < keys && s.ok(); k += kBatch) {
      batch.Clear();
      for (uint32_t j = k; j < keys && j < k + kBatch; ++j) {
        batch.Add({kLikes, key.Of(j)}, 1);
      }
      s = db->Apply(batch, &results);
    }
  }
  if (!s.ok()) return Fail(state, "write", s.ToString());
  const double rss = static_cast<double>(StatusBytes("VmRSS"));
  const double hwm = static_cast<double>(StatusBytes("VmHWM"));
  for (uint32_t k = 0; k < keys; k += keys / 16 + 1) {
    Result<int64_t> v = db->ReadExact({kLikes, key.Of(k)});
    if (!v.ok() || *v != 1) return Fail(state, "check", "key " + Num(k));
  }
  const double bound = RssBoundBytes(options);
  state.SetItemsProcessed(keys);
  state.counters["keys"] = keys;
  state.counters["vmrss_mb"] = rss / 1048576.0;
  state.counters["vmhwm_mb"] = hwm / 1048576.0;
  state.counters["rss_bound_mb"] = bound / 1048576.0;
  state.counters["hwm_over_bound"] = hwm / bound;
}

void RegisterAll() {
  const uint32_t rss_keys =
      FullMode() ? 10'000'000 : static_cast<uint32_t>(Scaled(200'000));
  Register("likes/rss/keys:" + Num(rss_keys), 1, BM_Rss, rss_keys);
#ifdef TALLY_LIKES_REDIS
  const bool redis = std::getenv("REDIS_PORT") != nullptr;
  const char* why = "REDIS_PORT is not set";
#else
  const bool redis = false;
  const char* why = "built without hiredis";
#endif
  if (!redis)
    std::fprintf(stderr, "tally_likes_bench: no Redis rows (%s)\n", why);
  for (int k = 0; k < kPairs; ++k) {
    const std::string p = "/pair:" + std::to_string(k);
    Register("likes/tally/once" + p, Scaled(60'000), BM_TallyOnce, k);
    Register("likes/tally/batch:1000" + p, Scaled(240), BM_TallyBatch, k);
    Register("likes/sqlite/batch:1" + p, Scaled(20'000), BM_Sqlite, 1, k);
    Register("likes/sqlite/batch:1000" + p, Scaled(240), BM_Sqlite, kBatch, k);
#ifdef TALLY_LIKES_REDIS
    if (redis) {
      Register("likes/redis/lua" + p, Scaled(10'000), BM_Redis, 1, k);
      Register("likes/redis/lua_pipelined/depth:1000" + p, Scaled(240),
               BM_Redis, kBatch, k);
    }
#endif
  }
  Register("likes/top10/rollup", Scaled(1000), BM_Top, false);
  Register("likes/top10/exact", 3, BM_Top, true);
  for (int k = 0; k < kPairs; ++k) {
    const std::string p = "/pair:" + std::to_string(k);
    Register("likes/read50/read_keys" + p, Scaled(2000), BM_Read50, true);
    Register("likes/read50/read_exact" + p, Scaled(2000), BM_Read50, false);
    Register("likes/read50/sqlite_in" + p, Scaled(2000), BM_SqliteIn);
#ifdef TALLY_LIKES_REDIS
    if (redis) {
      for (int depth : {1, kMgetDepth}) {
        Register("likes/read50/redis_mget/depth:" + std::to_string(depth) + p,
                 Scaled(2000) / depth, BM_RedisMget, depth);
      }
    }
#endif
  }
}

}  // namespace
}  // namespace tally::bench

int main(int argc, char** argv) {
  tally::bench::RegisterAll();
  const int rc = tally::bench::RunBenchmarks(
      argc, argv,
      {{"tally_version", TALLY_VERSION_STRING},
       {"sqlite_version", sqlite3_libversion()},
       {"likes_posts", std::to_string(tally::bench::PostCount())}});
  tally::bench::g_loaded.reset();
  return rc;
}
