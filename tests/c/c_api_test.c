/* The C API (include/tally/c.h), from C: every function is called, with
 * its answers checked against what the C++ API promises, and its error
 * paths (a NULL handle or out pointer, a NULL string with a length, an
 * enum value out of range, too little room, and the engine's own refusals)
 * each give their code and a message naming the bad value. Real databases
 * in a temporary directory; run under ASAN and UBSAN by the clang pass.
 * tests/c/check_calls.py checks that every function of c.h is called here.
 *
 * Usage: tally_c_api_test SCRATCH_DIR (created if missing, left behind). */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tally/c.h"
#include "tally/version.h"

static int failures = 0;
static char scratch[4096];

#define CHECK(cond)                                                     \
  do {                                                                  \
    if (!(cond)) {                                                      \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, \
              #cond);                                                   \
      failures++;                                                       \
    }                                                                   \
  } while (0)

/* A call that must succeed; its message (if any) is printed. */
#define OK(call)                                                        \
  do {                                                                  \
    char* err_ = NULL;                                                  \
    tally_code c_ = (call);                                             \
    if (c_ != TALLY_OK) {                                               \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__,     \
              #call, err_ ? err_ : "(no message)");                     \
      failures++;                                                       \
    }                                                                   \
    CHECK(err_ == NULL);                                                \
    tally_free(err_);                                                   \
  } while (0)

/* A call that must fail with `code` and a message holding `needle`. The
 * call's last argument is &err_. */
#define FAILS(code, needle, call)                                          \
  do {                                                                     \
    char* err_ = NULL;                                                     \
    tally_code c_ = (call);                                                \
    if (c_ != (code)) {                                                    \
      fprintf(stderr, "%s:%d: %s gave %s, not %s: %s\n", __FILE__,        \
              __LINE__, #call, tally_code_name(c_), tally_code_name(code), \
              err_ ? err_ : "(no message)");                               \
      failures++;                                                          \
    } else if (err_ == NULL || strstr(err_, (needle)) == NULL) {           \
      fprintf(stderr, "%s:%d: %s: message \"%s\" lacks \"%s\"\n",         \
              __FILE__, __LINE__, #call, err_ ? err_ : "(null)",          \
              (needle));                                                   \
      failures++;                                                          \
    }                                                                      \
    tally_free(err_);                                                      \
  } while (0)

#define S(lit) lit, sizeof(lit) - 1 /* a literal as pointer and length */

static const char* path_of(const char* name) {
  static char buf[8][4200];
  static int next = 0;
  char* p = buf[next++ % 8];
  snprintf(p, 4200, "%s/%s", scratch, name);
  return p;
}

/* A clock the test moves (tally_options_set_clock). */
static int64_t test_now = 1700000000000;
static int clock_calls = 0;
static int64_t test_clock(void* ctx) {
  (void)ctx;
  clock_calls++;
  return test_now;
}

static tally_db* open_db(const char* name) {
  tally_options* o = tally_options_create();
  tally_options_set_clock(o, test_clock, NULL);
  tally_options_set_rollup_interval_ms(o, 0);
  tally_db* db = NULL;
  OK(tally_open(o, path_of(name), &db, &err_));
  tally_options_destroy(o); /* the db keeps its own copy of the clock */
  return db;
}

static void test_version_and_names(void) {
  CHECK(strcmp(tally_version(), TALLY_VERSION_STRING) == 0);
  CHECK(tally_version_number() == TALLY_VERSION_MAJOR * 1000000 +
                                      TALLY_VERSION_MINOR * 1000 +
                                      TALLY_VERSION_PATCH);
  CHECK(strstr(tally_storage_engine_version(), "RocksDB") != NULL);
  CHECK(strcmp(tally_code_name(TALLY_OK), "OK") == 0);
  CHECK(strcmp(tally_code_name(TALLY_NOT_SUPPORTED), "NotSupported") == 0);
  CHECK(strcmp(tally_code_name(99), "unknown") == 0);
  CHECK(strcmp(tally_outcome_name(TALLY_DUPLICATE), "duplicate") == 0);
  CHECK(strcmp(tally_outcome_name(-1), "unknown") == 0);
  CHECK(strcmp(tally_hold_state_name(TALLY_HOLD_COMMITTED), "committed") == 0);
  CHECK(strcmp(tally_hold_state_name(9), "unknown") == 0);
  CHECK(strcmp(tally_claim_state_name(TALLY_CLAIM_DONE), "done") == 0);
  CHECK(strcmp(tally_claim_state_name(9), "unknown") == 0);
  CHECK(strcmp(tally_claim_answer_name(TALLY_ANSWER_STALE_TOKEN),
               "stale_token") == 0);
  CHECK(strcmp(tally_claim_answer_name(9), "unknown") == 0);
  tally_free(NULL);
}

static void test_open_and_options(void) {
  tally_db* db = NULL;
  FAILS(TALLY_INVALID_ARGUMENT, "target is NULL",
        tally_open(NULL, NULL, &db, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "db is NULL",
        tally_open(NULL, path_of("x"), NULL, &err_));
  /* Every setter, then open: the values are checked by tally_open. */
  tally_options* o = tally_options_create();
  tally_options_set_create_if_missing(o, 0);
  FAILS(TALLY_NOT_FOUND, "", tally_open(o, path_of("absent"), &db, &err_));
  CHECK(db == NULL);
  tally_options_set_create_if_missing(o, 1);
  tally_options_set_block_cache_bytes(o, 1); /* below kMinBlockCacheBytes */
  FAILS(TALLY_INVALID_ARGUMENT, "block_cache_bytes",
        tally_open(o, path_of("opts"), &db, &err_));
  tally_options_set_block_cache_bytes(o, (size_t)8 << 20);
  tally_options_set_write_buffer_bytes(o, (size_t)4 << 20);
  tally_options_set_max_wal_bytes(o, (uint64_t)4 << 20);
  tally_options_set_sync(o, 1);
  tally_options_set_group_commit_max_delay_us(o, 0);
  tally_options_set_rollup_interval_ms(o, 0);
  tally_options_set_clock(o, NULL, NULL); /* the system clock */
  tally_options_set_max_pending_operands(o, 65537);
  FAILS(TALLY_INVALID_ARGUMENT, "max_pending_operands",
        tally_open(o, path_of("opts"), &db, &err_));
  tally_options_set_max_pending_operands(o, 64);
  tally_options_set_event_lock_stripes(o, 0);
  FAILS(TALLY_INVALID_ARGUMENT, "event_lock_stripes",
        tally_open(o, path_of("opts"), &db, &err_));
  tally_options_set_event_lock_stripes(o, 1024);
  tally_options_set_stats_publish_interval_ms(o, 50);
  FAILS(TALLY_INVALID_ARGUMENT, "stats_publish_interval_ms",
        tally_open(o, path_of("opts"), &db, &err_));
  tally_options_set_stats_publish_interval_ms(o, 1000);
  tally_options_set_expiry_sweep_seconds(o, 1);
  FAILS(TALLY_INVALID_ARGUMENT, "expiry_sweep_seconds",
        tally_open(o, path_of("opts"), &db, &err_));
  tally_options_set_expiry_sweep_seconds(o, 86400);
  tally_options_set_outbox_max_entries(o, 0);
  FAILS(TALLY_INVALID_ARGUMENT, "outbox_max_entries",
        tally_open(o, path_of("opts"), &db, &err_));
  tally_options_set_outbox_max_entries(o, 1000000);
  tally_options_set_group_commit_max_bytes(o, 0);
  FAILS(TALLY_INVALID_ARGUMENT, "group_commit_max_bytes",
        tally_open(o, path_of("opts"), &db, &err_));
  tally_options_set_group_commit_max_bytes(o, 1048576);
  tally_options_set_group_commit_max_ops(o, 0);
  FAILS(TALLY_INVALID_ARGUMENT, "group_commit_max_ops",
        tally_open(o, path_of("opts"), &db, &err_));
  tally_options_set_group_commit_max_ops(o, 16384);
  tally_options_set_max_pending_operands(o, 64);
  tally_options_set_event_lock_stripes(o, 1024);
  tally_options_set_stats_publish_interval_ms(o, 1000);
  tally_options_set_expiry_sweep_seconds(o, 86400);
  tally_options_set_outbox_max_entries(o, 1000000);
  tally_options_set_group_commit_max_bytes(o, 1048576);
  tally_options_set_group_commit_max_ops(o, 16384);
  tally_options_set_salvage_wal(o, 0);
  OK(tally_open(o, path_of("opts"), &db, &err_));
  CHECK(db != NULL);
  tally_db* second = NULL;
  FAILS(TALLY_BUSY, "", tally_open(o, path_of("opts"), &second, &err_));
  tally_counter_spec spec;
  tally_counter_spec_init(&spec);
  OK(tally_create_counter(db, S("c"), &spec, &err_));
  tally_increment_result r;
  OK(tally_increment(db, S("c"), NULL, 0, 3, NULL, &r, &err_));
  /* A reader in read-only mode, while the writer holds the database. */
  tally_options_set_read_only(o, 1);
  tally_options_set_reads(o, TALLY_READ_VALUES);
  OK(tally_open(o, path_of("opts"), &second, &err_));
  int64_t v = 0;
  OK(tally_read_exact(second, S("c"), NULL, 0, &v, &err_));
  CHECK(v == 3);
  uint64_t n = 0;
  FAILS(TALLY_NOT_SUPPORTED, "",
        tally_count_markers(second, S("c"), NULL, 0, &n, &err_));
  FAILS(TALLY_NOT_SUPPORTED, "",
        tally_increment(second, S("c"), NULL, 0, 1, NULL, &r, &err_));
  OK(tally_increment(db, S("c"), NULL, 0, 4, NULL, &r, &err_));
  OK(tally_refresh(second, &err_));
  OK(tally_read_exact(second, S("c"), NULL, 0, &v, &err_));
  CHECK(v == 7);
  tally_close(second);
  tally_close(db);
  tally_options_destroy(o);
  /* NULL handles are no-ops for the destroyers and setters. */
  tally_close(NULL);
  tally_options_destroy(NULL);
  tally_options_set_sync(NULL, 1);
  tally_options_set_create_if_missing(NULL, 1);
  tally_options_set_read_only(NULL, 1);
  tally_options_set_reads(NULL, 1);
  tally_options_set_block_cache_bytes(NULL, 1);
  tally_options_set_write_buffer_bytes(NULL, 1);
  tally_options_set_max_wal_bytes(NULL, 1);
  tally_options_set_rollup_interval_ms(NULL, 1);
  tally_options_set_group_commit_max_delay_us(NULL, 1);
  tally_options_set_max_pending_operands(NULL, 1);
  tally_options_set_event_lock_stripes(NULL, 1);
  tally_options_set_stats_publish_interval_ms(NULL, 1);
  tally_options_set_expiry_sweep_seconds(NULL, 1);
  tally_options_set_outbox_max_entries(NULL, 1);
  tally_options_set_group_commit_max_bytes(NULL, 1);
  tally_options_set_group_commit_max_ops(NULL, 1);
  tally_options_set_salvage_wal(NULL, 1);
  tally_options_set_clock(NULL, test_clock, NULL);
  tally_counter_spec_init(NULL);
  tally_write_options_init(NULL);
}

static void test_counters(tally_db* db) {
  tally_counter_spec spec;
  tally_counter_spec_init(&spec);
  CHECK(spec.shards == 1 && spec.policy == TALLY_POLICY_RANDOM &&
        spec.bucket == TALLY_BUCKET_NONE && !spec.keyed && !spec.has_min);
  spec.shards = 4;
  OK(tally_create_counter(db, S("orders"), &spec, &err_));
  FAILS(TALLY_ALREADY_EXISTS, "orders",
        tally_create_counter(db, S("orders"), &spec, &err_));
  spec.shards = 0;
  FAILS(TALLY_INVALID_ARGUMENT, "0",
        tally_create_counter(db, S("bad"), &spec, &err_));
  spec.shards = 1;
  spec.policy = 7;
  FAILS(TALLY_INVALID_ARGUMENT, "policy 7",
        tally_create_counter(db, S("bad"), &spec, &err_));
  spec.policy = TALLY_POLICY_RANDOM;
  spec.bucket = -1;
  FAILS(TALLY_INVALID_ARGUMENT, "bucket -1",
        tally_create_counter(db, S("bad"), &spec, &err_));
  spec.bucket = TALLY_BUCKET_NONE;
  FAILS(TALLY_INVALID_ARGUMENT, "spec is NULL",
        tally_create_counter(db, S("bad"), NULL, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "name is NULL with length 3",
        tally_create_counter(db, NULL, 3, &spec, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "db is NULL",
        tally_create_counter(NULL, S("x"), &spec, &err_));
  /* A NULL errmsg: the code alone. */
  CHECK(tally_create_counter(db, S("orders"), &spec, NULL) ==
        TALLY_ALREADY_EXISTS);

  tally_counter_spec_init(&spec);
  spec.bucket = TALLY_BUCKET_HOUR;
  spec.retention_ms = 0;
  spec.dedupe_window_ms = 3600000;
  spec.policy = TALLY_POLICY_AFFINITY;
  spec.shards = 2;
  OK(tally_create_counter(db, S("hourly"), &spec, &err_));

  tally_counter_info info;
  OK(tally_describe_counter(db, S("hourly"), &info, &err_));
  CHECK(info.name == NULL && info.id > 0 && info.spec.shards == 2);
  CHECK(info.spec.bucket == TALLY_BUCKET_HOUR);
  CHECK(info.spec.policy == TALLY_POLICY_AFFINITY);
  CHECK(info.spec.dedupe_window_ms == 3600000);
  CHECK(info.created_at_ms == test_now);
  FAILS(TALLY_NOT_FOUND, "nope",
        tally_describe_counter(db, S("nope"), &info, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "info is NULL",
        tally_describe_counter(db, S("hourly"), NULL, &err_));

  tally_counter_list* list = NULL;
  OK(tally_list_counters(db, &list, &err_));
  CHECK(tally_counter_list_count(list) == 2);
  CHECK(tally_counter_list_get(list, 0, &info) == 1);
  CHECK(info.name_len == 6 && memcmp(info.name, "hourly", 6) == 0);
  CHECK(tally_counter_list_get(list, 1, &info) == 1);
  CHECK(info.name_len == 6 && memcmp(info.name, "orders", 6) == 0);
  CHECK(info.spec.shards == 4);
  CHECK(tally_counter_list_get(list, 2, &info) == 0);
  CHECK(info.name == NULL && info.id == 0); /* zeroed beyond the list */
  CHECK(tally_counter_list_get(list, 0, NULL) == 0);
  tally_counter_list_destroy(list);
  CHECK(tally_counter_list_count(NULL) == 0);
  CHECK(tally_counter_list_get(NULL, 0, &info) == 0);
  tally_counter_list_destroy(NULL);
  FAILS(TALLY_INVALID_ARGUMENT, "list is NULL",
        tally_list_counters(db, NULL, &err_));

  OK(tally_create_counter(db, S("gone"), &spec, &err_));
  OK(tally_delete_counter(db, S("gone"), &err_));
  FAILS(TALLY_NOT_FOUND, "gone", tally_delete_counter(db, S("gone"), &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "name is NULL",
        tally_delete_counter(db, NULL, 1, &err_));
}

static void test_writes(tally_db* db) {
  tally_increment_result r;
  tally_write_options wo;
  tally_write_options_init(&wo);
  CHECK(wo.event_time_ms == TALLY_EVENT_TIME_NOW && wo.affinity_key == NULL &&
        !wo.saturate);

  OK(tally_increment(db, S("orders"), NULL, 0, 5, NULL, &r, &err_));
  CHECK(r.outcome == TALLY_APPLIED && r.applied == 5 && r.shard < 4);
  OK(tally_increment_once(db, S("orders"), NULL, 0, S("order-1"), 2, &wo, &r,
                          &err_));
  CHECK(r.outcome == TALLY_APPLIED && r.applied == 2);
  const uint32_t shard = r.shard;
  OK(tally_increment_once(db, S("orders"), NULL, 0, S("order-1"), 2, NULL, &r,
                          &err_));
  CHECK(r.outcome == TALLY_DUPLICATE && r.applied == 2 && r.shard == shard);
  OK(tally_increment_once(db, S("orders"), NULL, 0, S("order-1"), 3, NULL, &r,
                          &err_));
  CHECK(r.outcome == TALLY_CONFLICT && r.applied == 0);
  int64_t v = 0;
  OK(tally_read_exact(db, S("orders"), NULL, 0, &v, &err_));
  CHECK(v == 7);

  /* Affinity and event times on the hourly counter (a dedupe window). */
  wo.affinity_key = "device-1";
  wo.affinity_key_len = 8;
  wo.event_time_ms = test_now;
  OK(tally_increment(db, S("hourly"), NULL, 0, 1, &wo, &r, &err_));
  const uint32_t pinned = r.shard;
  OK(tally_increment(db, S("hourly"), NULL, 0, 1, &wo, &r, &err_));
  CHECK(r.shard == pinned);
  OK(tally_increment_once(db, S("hourly"), NULL, 0, S("e1"), 1, &wo, &r,
                          &err_));
  CHECK(r.outcome == TALLY_APPLIED && r.shard == pinned);
  wo.event_time_ms = test_now - 2 * 3600000; /* older than the window */
  OK(tally_increment_once(db, S("hourly"), NULL, 0, S("e2"), 1, &wo, &r,
                          &err_));
  CHECK(r.outcome == TALLY_OUTSIDE_WINDOW);
  FAILS(TALLY_INVALID_ARGUMENT, "",
        tally_increment_once(db, S("hourly"), NULL, 0, S("e3"), 1, NULL, &r,
                             &err_)); /* the window needs an event time */
  wo.affinity_key = NULL;
  wo.affinity_key_len = 4;
  FAILS(TALLY_INVALID_ARGUMENT, "affinity_key is NULL with length 4",
        tally_increment(db, S("hourly"), NULL, 0, 1, &wo, &r, &err_));
  tally_write_options_init(&wo);

  /* Bad arguments. */
  FAILS(TALLY_NOT_FOUND, "nope",
        tally_increment(db, S("nope"), NULL, 0, 1, NULL, &r, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "counter is NULL with length 2",
        tally_increment(db, NULL, 2, NULL, 0, 1, NULL, &r, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "key is NULL with length 2",
        tally_increment(db, S("orders"), NULL, 2, 1, NULL, &r, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "result is NULL",
        tally_increment(db, S("orders"), NULL, 0, 1, NULL, NULL, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "db is NULL",
        tally_increment(NULL, S("orders"), NULL, 0, 1, NULL, &r, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "event_id is NULL with length 1",
        tally_increment_once(db, S("orders"), NULL, 0, NULL, 1, 1, NULL, &r,
                             &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "db is NULL",
        tally_increment_once(NULL, S("orders"), NULL, 0, S("e"), 1, NULL, &r,
                             &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "",
        tally_increment(db, S("orders"), S("a-key"), 1, NULL, &r, &err_));
  /* Shards keep exact sums beyond int64; a read of one is OutOfRange. */
  tally_counter_spec big;
  tally_counter_spec_init(&big);
  OK(tally_create_counter(db, S("big"), &big, &err_));
  OK(tally_increment(db, S("big"), NULL, 0, INT64_MAX, NULL, &r, &err_));
  OK(tally_increment(db, S("big"), NULL, 0, 1, NULL, &r, &err_));
  FAILS(TALLY_OUT_OF_RANGE, "beyond int64",
        tally_read_exact(db, S("big"), NULL, 0, &v, &err_));
  OK(tally_delete_counter(db, S("big"), &err_));

  /* Reset: once per reset id. */
  OK(tally_reset(db, S("orders"), NULL, 0, S("r1"), 100, NULL, &r, &err_));
  CHECK(r.outcome == TALLY_APPLIED);
  OK(tally_read_exact(db, S("orders"), NULL, 0, &v, &err_));
  CHECK(v == 100);
  OK(tally_reset(db, S("orders"), NULL, 0, S("r1"), 100, NULL, &r, &err_));
  CHECK(r.outcome == TALLY_DUPLICATE);
  wo.saturate = 1;
  FAILS(TALLY_INVALID_ARGUMENT, "a reset takes an event time only",
        tally_reset(db, S("orders"), NULL, 0, S("r2"), 1, &wo, &r, &err_));
  tally_write_options_init(&wo);
  FAILS(TALLY_INVALID_ARGUMENT, "reset_id is NULL",
        tally_reset(db, S("orders"), NULL, 0, NULL, 2, 1, NULL, &r, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "db is NULL",
        tally_reset(NULL, S("orders"), NULL, 0, S("r"), 1, NULL, &r, &err_));
}

static void test_batches(tally_db* db) {
  tally_batch* b = tally_batch_create();
  CHECK(tally_batch_count(b) == 0);
  OK(tally_batch_add(b, S("orders"), NULL, 0, 1, NULL, &err_));
  OK(tally_batch_add_once(b, S("orders"), NULL, 0, S("b1"), 10, NULL, &err_));
  OK(tally_batch_add_once(b, S("orders"), NULL, 0, S("b1"), 10, NULL, &err_));
  CHECK(tally_batch_count(b) == 3);
  tally_increment_result results[3];
  FAILS(TALLY_INVALID_ARGUMENT, "room for 2 answers",
        tally_apply(db, b, results, 2, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "results NULL",
        tally_apply(db, b, NULL, 3, &err_));
  int64_t before = 0, after = 0;
  OK(tally_read_exact(db, S("orders"), NULL, 0, &before, &err_));
  OK(tally_apply(db, b, results, 3, &err_));
  CHECK(results[0].outcome == TALLY_APPLIED && results[0].applied == 1);
  CHECK(results[1].outcome == TALLY_APPLIED && results[1].applied == 10);
  CHECK(results[2].outcome == TALLY_DUPLICATE && results[2].applied == 10);
  OK(tally_read_exact(db, S("orders"), NULL, 0, &after, &err_));
  CHECK(after == before + 11);
  OK(tally_apply(db, b, NULL, 0, &err_)); /* again, answers not wanted */
  OK(tally_read_exact(db, S("orders"), NULL, 0, &after, &err_));
  CHECK(after == before + 12); /* the plain one again, the once ones not */
  /* One bad op refuses the whole batch, naming its index. */
  tally_batch_clear(b);
  CHECK(tally_batch_count(b) == 0);
  OK(tally_batch_add(b, S("orders"), NULL, 0, 1, NULL, &err_));
  OK(tally_batch_add(b, S("nope"), NULL, 0, 1, NULL, &err_));
  FAILS(TALLY_NOT_FOUND, "1", tally_apply(db, b, NULL, 0, &err_));
  OK(tally_read_exact(db, S("orders"), NULL, 0, &before, &err_));
  CHECK(before == after);
  FAILS(TALLY_INVALID_ARGUMENT, "batch is NULL",
        tally_batch_add(NULL, S("c"), NULL, 0, 1, NULL, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "counter is NULL",
        tally_batch_add(b, NULL, 1, NULL, 0, 1, NULL, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "batch is NULL",
        tally_batch_add_once(NULL, S("c"), NULL, 0, S("e"), 1, NULL, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "event_id is NULL",
        tally_batch_add_once(b, S("c"), NULL, 0, NULL, 1, 1, NULL, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "batch is NULL",
        tally_apply(db, NULL, NULL, 0, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "db is NULL",
        tally_apply(NULL, b, NULL, 0, &err_));
  tally_batch_destroy(b);
  tally_batch_destroy(NULL);
  tally_batch_clear(NULL);
  CHECK(tally_batch_count(NULL) == 0);
}

static void test_reads(tally_db* db) {
  int64_t v = 0;
  int64_t shards[4];
  size_t count = 0;
  OK(tally_shard_counts(db, S("orders"), NULL, 0, shards, 4, &count, &err_));
  CHECK(count == 4);
  int64_t sum = shards[0] + shards[1] + shards[2] + shards[3];
  OK(tally_read_exact(db, S("orders"), NULL, 0, &v, &err_));
  CHECK(sum == v);
  FAILS(TALLY_INVALID_ARGUMENT, "room for 2 shards",
        tally_shard_counts(db, S("orders"), NULL, 0, shards, 2, &count, &err_));
  CHECK(count == 4);
  FAILS(TALLY_INVALID_ARGUMENT, "count is NULL",
        tally_shard_counts(db, S("orders"), NULL, 0, shards, 4, NULL, &err_));
  FAILS(TALLY_NOT_FOUND, "",
        tally_shard_counts(db, S("nope"), NULL, 0, shards, 4, &count, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "value is NULL",
        tally_read_exact(db, S("orders"), NULL, 0, NULL, &err_));
  FAILS(TALLY_NOT_FOUND, "", tally_read_exact(db, S("nope"), NULL, 0, &v, &err_));

  /* Ranges of the hourly counter: this hour holds its 2 + 1. */
  const int64_t hour = test_now - test_now % 3600000;
  OK(tally_read_range(db, S("hourly"), NULL, 0, hour, hour + 3600000, &v,
                      &err_));
  CHECK(v == 3);
  OK(tally_read_range(db, S("hourly"), NULL, 0, hour - 3600000, hour, &v,
                      &err_));
  CHECK(v == 0);
  FAILS(TALLY_INVALID_ARGUMENT, "",
        tally_read_range(db, S("orders"), NULL, 0, 0, 1, &v, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "value is NULL",
        tally_read_range(db, S("hourly"), NULL, 0, 0, 1, NULL, &err_));

  /* Roll-ups. */
  tally_cached_value cached;
  OK(tally_rollup_now(db, S("orders"), &err_));
  OK(tally_read_cached(db, S("orders"), &cached, &err_));
  OK(tally_read_exact(db, S("orders"), NULL, 0, &v, &err_));
  CHECK(cached.value == v && cached.as_of_ms == test_now);
  OK(tally_rollup_now(db, NULL, 0, &err_)); /* every counter */
  FAILS(TALLY_NOT_FOUND, "", tally_rollup_now(db, S("nope"), &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "value is NULL",
        tally_read_cached(db, S("orders"), NULL, &err_));
  FAILS(TALLY_NOT_FOUND, "", tally_read_cached(db, S("nope"), &cached, &err_));
  OK(tally_refresh(db, &err_)); /* a writer is always current */
  FAILS(TALLY_INVALID_ARGUMENT, "db is NULL", tally_refresh(NULL, &err_));
}

static void test_keyed(tally_db* db) {
  tally_counter_spec spec;
  tally_counter_spec_init(&spec);
  spec.keyed = 1;
  spec.shards = 2;
  OK(tally_create_counter(db, S("likes"), &spec, &err_));
  tally_increment_result r;
  OK(tally_increment_once(db, S("likes"), S("post-1"), S("u1"), 1, NULL, &r,
                          &err_));
  OK(tally_increment_once(db, S("likes"), S("post-1"), S("u2"), 1, NULL, &r,
                          &err_));
  OK(tally_increment_once(db, S("likes"), S("post-2"), S("u1"), 1, NULL, &r,
                          &err_));
  OK(tally_increment_once(db, S("likes"), S("post-1"), S("u1"), 1, NULL, &r,
                          &err_));
  CHECK(r.outcome == TALLY_DUPLICATE);
  FAILS(TALLY_INVALID_ARGUMENT, "likes",
        tally_increment(db, S("likes"), NULL, 0, 1, NULL, &r, &err_));

  const char* keys[3] = {"post-2", "post-1", "post-9"};
  size_t lens[3] = {6, 6, 6};
  int64_t values[3] = {-1, -1, -1};
  OK(tally_read_keys(db, S("likes"), keys, lens, 3, values, &err_));
  CHECK(values[0] == 1 && values[1] == 2 && values[2] == 0);
  FAILS(TALLY_INVALID_ARGUMENT, "keys is NULL",
        tally_read_keys(db, S("likes"), NULL, lens, 3, values, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "values is NULL",
        tally_read_keys(db, S("likes"), keys, lens, 3, NULL, &err_));
  const char* bad[2] = {"post-1", NULL};
  size_t bad_lens[2] = {6, 3};
  FAILS(TALLY_INVALID_ARGUMENT, "keys[1] is NULL with length 3",
        tally_read_keys(db, S("likes"), bad, bad_lens, 2, values, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "",
        tally_read_keys(db, S("likes"), keys, lens, 0, values, &err_));

  tally_key_list* list = NULL;
  tally_key_value kv;
  OK(tally_list_keys(db, S("likes"), S("post-"), NULL, 0, 10, &list, &err_));
  CHECK(tally_key_list_count(list) == 2);
  CHECK(tally_key_list_get(list, 0, &kv) == 1);
  CHECK(kv.key_len == 6 && memcmp(kv.key, "post-1", 6) == 0 && kv.value == 2);
  CHECK(tally_key_list_get(list, 1, &kv) == 1 && kv.value == 1);
  CHECK(tally_key_list_get(list, 2, &kv) == 0 && kv.key == NULL);
  tally_key_list_destroy(list);
  OK(tally_list_keys(db, S("likes"), NULL, 0, S("post-1"), 10, &list, &err_));
  CHECK(tally_key_list_count(list) == 1);
  tally_key_list_destroy(list);
  FAILS(TALLY_INVALID_ARGUMENT, "",
        tally_list_keys(db, S("likes"), NULL, 0, NULL, 0, 0, &list, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "list is NULL",
        tally_list_keys(db, S("likes"), NULL, 0, NULL, 0, 10, NULL, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "prefix is NULL",
        tally_list_keys(db, S("likes"), NULL, 1, NULL, 0, 10, &list, &err_));
  CHECK(tally_key_list_count(NULL) == 0);
  CHECK(tally_key_list_get(NULL, 0, &kv) == 0);
  tally_key_list_destroy(NULL);

  tally_top_keys_info top;
  OK(tally_top_keys(db, S("likes"), 1, 1, &list, &top, &err_));
  CHECK(top.exact && top.key_count == 2 && top.total == 3 &&
        top.out_of_range_keys == 0 && top.first_out_of_range_key_len == 0);
  CHECK(tally_key_list_count(list) == 1);
  CHECK(tally_key_list_get(list, 0, &kv) == 1 && kv.value == 2);
  tally_key_list_destroy(list);
  OK(tally_top_keys(db, S("likes"), 5, 0, &list, &top, &err_)); /* roll-up */
  CHECK(!top.exact && top.total == 3 && tally_key_list_count(list) == 2);
  tally_key_list_destroy(list);
  FAILS(TALLY_INVALID_ARGUMENT, "",
        tally_top_keys(db, S("likes"), 0, 1, &list, &top, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "info is NULL",
        tally_top_keys(db, S("likes"), 1, 1, &list, NULL, &err_));

  OK(tally_delete_key(db, S("likes"), S("post-2"), &err_));
  int64_t v = -1;
  OK(tally_read_exact(db, S("likes"), S("post-2"), &v, &err_));
  CHECK(v == 0);
  FAILS(TALLY_INVALID_ARGUMENT, "key is NULL",
        tally_delete_key(db, S("likes"), NULL, 1, &err_));
  FAILS(TALLY_NOT_FOUND, "", tally_delete_key(db, S("nope"), S("k"), &err_));
}

static void test_markers(tally_db* db) {
  uint64_t n = 0;
  OK(tally_count_markers(db, S("orders"), NULL, 0, &n, &err_));
  CHECK(n == 3); /* order-1, b1 and the reset r1 */
  OK(tally_count_markers(db, S("likes"), NULL, 0, &n, &err_));
  CHECK(n == 2); /* post-1's two (post-2's went with its key) */
  FAILS(TALLY_INVALID_ARGUMENT, "count is NULL",
        tally_count_markers(db, S("orders"), NULL, 0, NULL, &err_));

  tally_marker_list* list = NULL;
  tally_marker_info m;
  OK(tally_list_markers(db, S("orders"), NULL, 0, 10, INT64_MIN, NULL, 0,
                        &list, &err_));
  CHECK(tally_marker_list_count(list) == 3);
  CHECK(tally_marker_list_get(list, 0, &m) == 1);
  CHECK(m.event_id_len == 2 && memcmp(m.event_id, "b1", 2) == 0 &&
        m.delta == 10 && m.created_at_ms == test_now);
  CHECK(tally_marker_list_get(list, 2, &m) == 1 && m.reset);
  CHECK(tally_marker_list_get(list, 3, &m) == 0 && m.event_id == NULL);
  tally_marker_list_destroy(list);
  OK(tally_list_markers(db, S("orders"), NULL, 0, 10, INT64_MIN, S("b1"),
                        &list, &err_));
  CHECK(tally_marker_list_count(list) == 2);
  tally_marker_list_destroy(list);
  FAILS(TALLY_INVALID_ARGUMENT, "",
        tally_list_markers(db, S("orders"), NULL, 0, 0, INT64_MIN, NULL, 0,
                           &list, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "start_after is NULL",
        tally_list_markers(db, S("orders"), NULL, 0, 10, INT64_MIN, NULL, 2,
                           &list, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "list is NULL",
        tally_list_markers(db, S("orders"), NULL, 0, 10, INT64_MIN, NULL, 0,
                           NULL, &err_));

  OK(tally_get_marker(db, S("likes"), S("post-1"), S("u2"), &list, &err_));
  CHECK(tally_marker_list_count(list) == 1);
  CHECK(tally_marker_list_get(list, 0, &m) == 1);
  CHECK(m.key_len == 6 && memcmp(m.key, "post-1", 6) == 0 && m.delta == 1);
  tally_marker_list_destroy(list);
  FAILS(TALLY_NOT_FOUND, "",
        tally_get_marker(db, S("orders"), NULL, 0, S("never"), &list, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "event_id is NULL",
        tally_get_marker(db, S("orders"), NULL, 0, NULL, 3, &list, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "list is NULL",
        tally_get_marker(db, S("orders"), NULL, 0, S("b1"), NULL, &err_));
  CHECK(tally_marker_list_count(NULL) == 0);
  CHECK(tally_marker_list_get(NULL, 0, &m) == 0);
  tally_marker_list_destroy(NULL);
}

static void test_strict(tally_db* db) {
  tally_counter_spec spec;
  tally_counter_spec_init(&spec);
  spec.has_min = 1;
  spec.min = 0;
  OK(tally_create_counter(db, S("stock"), &spec, &err_));
  tally_increment_result r;
  OK(tally_increment(db, S("stock"), NULL, 0, 10, NULL, &r, &err_));
  CHECK(r.value == 10);
  OK(tally_increment_once(db, S("stock"), NULL, 0, S("sale-1"), -12, NULL, &r,
                          &err_));
  CHECK(r.outcome == TALLY_REFUSED && r.value == 10);
  tally_write_options wo;
  tally_write_options_init(&wo);
  wo.saturate = 1;
  OK(tally_increment_once(db, S("stock"), NULL, 0, S("sale-2"), -12, &wo, &r,
                          &err_));
  CHECK(r.outcome == TALLY_APPLIED && r.applied == -10 && r.value == 0 &&
        r.remaining == 0);
  OK(tally_increment(db, S("stock"), NULL, 0, 5, NULL, &r, &err_));

  /* Reservations: hold 3 of 5, commit; hold 2, let it run out. */
  tally_reservation_result rr;
  OK(tally_reserve(db, S("stock"), NULL, 0, S("cart-1"), 3, 60000, &rr,
                   &err_));
  CHECK(rr.outcome == TALLY_APPLIED && rr.state == TALLY_HOLD_HELD &&
        rr.value == 5 && rr.available == 2 &&
        rr.expires_at_ms == test_now + 60000);
  OK(tally_reserve(db, S("stock"), NULL, 0, S("cart-2"), 3, 60000, &rr,
                   &err_));
  CHECK(rr.outcome == TALLY_REFUSED && rr.state == TALLY_HOLD_REFUSED);
  tally_held_value held;
  OK(tally_read_held(db, S("stock"), NULL, 0, &held, &err_));
  CHECK(held.value == 5 && held.held == 3 && held.available == 2 &&
        held.open == 1 && held.next_expiry_ms == test_now + 60000);
  OK(tally_commit_reservation(db, S("stock"), NULL, 0, S("cart-1"), &rr,
                              &err_));
  CHECK(rr.outcome == TALLY_APPLIED && rr.state == TALLY_HOLD_COMMITTED &&
        rr.value == 2);
  OK(tally_reserve(db, S("stock"), NULL, 0, S("cart-3"), 2, 1000, &rr, &err_));
  test_now += 1001; /* its hold runs out */
  tally_reservation_info ri;
  OK(tally_get_reservation(db, S("stock"), NULL, 0, S("cart-3"), &ri, &err_));
  CHECK(ri.state == TALLY_HOLD_EXPIRED && ri.units == 2);
  OK(tally_release_reservation(db, S("stock"), NULL, 0, S("cart-3"), &rr,
                               &err_));
  CHECK(rr.outcome == TALLY_DUPLICATE && rr.state == TALLY_HOLD_EXPIRED);
  OK(tally_reserve(db, S("stock"), NULL, 0, S("cart-4"), 1, 1000, &rr, &err_));
  OK(tally_release_reservation(db, S("stock"), NULL, 0, S("cart-4"), &rr,
                               &err_));
  CHECK(rr.outcome == TALLY_APPLIED && rr.state == TALLY_HOLD_RELEASED);
  FAILS(TALLY_NOT_FOUND, "",
        tally_commit_reservation(db, S("stock"), NULL, 0, S("nope"), &rr,
                                 &err_));
  FAILS(TALLY_NOT_FOUND, "",
        tally_get_reservation(db, S("stock"), NULL, 0, S("nope"), &ri, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "",
        tally_reserve(db, S("orders"), NULL, 0, S("x"), 1, 1000, &rr, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "",
        tally_reserve(db, S("stock"), NULL, 0, S("x"), 0, 1000, &rr, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "result is NULL",
        tally_reserve(db, S("stock"), NULL, 0, S("x"), 1, 1000, NULL, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "reservation_id is NULL",
        tally_release_reservation(db, S("stock"), NULL, 0, NULL, 1, &rr,
                                  &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "info is NULL",
        tally_get_reservation(db, S("stock"), NULL, 0, S("cart-1"), NULL,
                              &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "value is NULL",
        tally_read_held(db, S("stock"), NULL, 0, NULL, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "",
        tally_read_held(db, S("orders"), NULL, 0, &held, &err_));

  /* A quota: at most 2 a minute. */
  tally_counter_spec_init(&spec);
  spec.bucket = TALLY_BUCKET_MINUTE;
  spec.has_min = 1;
  spec.min = 0;
  spec.has_max = 1;
  spec.max = 2;
  OK(tally_create_counter(db, S("api"), &spec, &err_));
  OK(tally_increment(db, S("api"), NULL, 0, 1, NULL, &r, &err_));
  OK(tally_increment(db, S("api"), NULL, 0, 1, NULL, &r, &err_));
  CHECK(r.outcome == TALLY_APPLIED && r.remaining == 0);
  OK(tally_increment(db, S("api"), NULL, 0, 1, NULL, &r, &err_));
  CHECK(r.outcome == TALLY_REFUSED && r.window_ends_ms > test_now);
  tally_quota_state q;
  OK(tally_read_quota(db, S("api"), NULL, 0, &q, &err_));
  CHECK(q.used == 2 && q.remaining == 0 && q.window_ends_ms == r.window_ends_ms &&
        q.window_start_ms + 60000 == q.window_ends_ms);
  FAILS(TALLY_INVALID_ARGUMENT, "",
        tally_read_quota(db, S("orders"), NULL, 0, &q, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "state is NULL",
        tally_read_quota(db, S("api"), NULL, 0, NULL, &err_));
}

static void test_claims(tally_db* db) {
  tally_claim_result* cr = NULL;
  tally_claim_info ci;
  OK(tally_claim(db, S("send-mail-1"), S("worker-a"), 30000, &cr, &err_));
  CHECK(tally_claim_result_answer(cr) == TALLY_ANSWER_ACQUIRED);
  CHECK(!tally_claim_result_repeated(cr));
  tally_claim_result_claim(cr, &ci);
  CHECK(ci.token == 1 && ci.state == TALLY_CLAIM_HELD && ci.holder_len == 8 &&
        memcmp(ci.holder, "worker-a", 8) == 0 &&
        ci.lease_until_ms == test_now + 30000);
  tally_claim_result_destroy(cr);
  OK(tally_claim(db, S("send-mail-1"), S("worker-b"), 30000, &cr, &err_));
  CHECK(tally_claim_result_answer(cr) == TALLY_ANSWER_BUSY);
  tally_claim_result_destroy(cr);

  /* Complete with counts in the same write. */
  tally_batch* counts = tally_batch_create();
  OK(tally_batch_add_once(counts, S("orders"), NULL, 0, S("mail-1"), 1, NULL,
                          &err_));
  OK(tally_complete_claim(db, S("send-mail-1"), 1, S("sent"), counts, &cr,
                          &err_));
  CHECK(tally_claim_result_answer(cr) == TALLY_ANSWER_COMPLETED);
  CHECK(tally_claim_result_counted_count(cr) == 1);
  tally_increment_result ir;
  CHECK(tally_claim_result_counted(cr, 0, &ir) == 1 &&
        ir.outcome == TALLY_APPLIED);
  CHECK(tally_claim_result_counted(cr, 1, &ir) == 0);
  tally_claim_result_claim(cr, &ci);
  CHECK(ci.state == TALLY_CLAIM_DONE && ci.result_len == 4 &&
        memcmp(ci.result, "sent", 4) == 0);
  tally_claim_result_destroy(cr);
  OK(tally_complete_claim(db, S("send-mail-1"), 1, S("sent"), NULL, &cr,
                          &err_));
  CHECK(tally_claim_result_answer(cr) == TALLY_ANSWER_COMPLETED &&
        tally_claim_result_repeated(cr));
  tally_claim_result_destroy(cr);
  tally_batch_destroy(counts);

  OK(tally_claim(db, S("job-2"), S("worker-a"), 30000, &cr, &err_));
  tally_claim_result_destroy(cr);
  OK(tally_release_claim(db, S("job-2"), 1, &cr, &err_));
  CHECK(tally_claim_result_answer(cr) == TALLY_ANSWER_RELEASED);
  tally_claim_result_destroy(cr);
  OK(tally_claim(db, S("job-2"), S("worker-b"), 30000, &cr, &err_));
  tally_claim_result_claim(cr, &ci);
  CHECK(ci.token == 2);
  tally_claim_result_destroy(cr);
  OK(tally_complete_claim(db, S("job-2"), 1, NULL, 0, NULL, &cr, &err_));
  CHECK(tally_claim_result_answer(cr) == TALLY_ANSWER_STALE_TOKEN);
  tally_claim_result_destroy(cr);

  FAILS(TALLY_NOT_FOUND, "",
        tally_release_claim(db, S("never"), 1, &cr, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "",
        tally_complete_claim(db, S("job-2"), 99, NULL, 0, NULL, &cr, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "",
        tally_claim(db, S("job-3"), S("w"), 0, &cr, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "holder is NULL",
        tally_claim(db, S("job-3"), NULL, 1, 1000, &cr, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "result is NULL",
        tally_claim(db, S("job-3"), S("w"), 1000, NULL, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "result_text is NULL",
        tally_complete_claim(db, S("job-2"), 2, NULL, 3, NULL, &cr, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "key is NULL",
        tally_release_claim(db, NULL, 2, 2, &cr, &err_));
  CHECK(tally_claim_result_answer(NULL) == -1);
  CHECK(tally_claim_result_repeated(NULL) == 0);
  CHECK(tally_claim_result_counted_count(NULL) == 0);
  CHECK(tally_claim_result_counted(NULL, 0, &ir) == 0);
  tally_claim_result_claim(NULL, &ci);
  CHECK(ci.key == NULL);
  tally_claim_result_destroy(NULL);

  tally_claim_list* list = NULL;
  OK(tally_get_claim(db, S("send-mail-1"), &list, &err_));
  CHECK(tally_claim_list_count(list) == 1);
  CHECK(tally_claim_list_get(list, 0, &ci) == 1 && ci.state == TALLY_CLAIM_DONE);
  tally_claim_list_destroy(list);
  FAILS(TALLY_NOT_FOUND, "", tally_get_claim(db, S("never"), &list, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "list is NULL",
        tally_get_claim(db, S("job-2"), NULL, &err_));
  OK(tally_list_claims(db, TALLY_CLAIMS_ALL, 10, NULL, 0, &list, &err_));
  CHECK(tally_claim_list_count(list) == 2);
  tally_claim_list_destroy(list);
  OK(tally_list_claims(db, TALLY_CLAIMS_HELD, 10, NULL, 0, &list, &err_));
  CHECK(tally_claim_list_count(list) == 1);
  CHECK(tally_claim_list_get(list, 0, &ci) == 1 && ci.key_len == 5);
  CHECK(tally_claim_list_get(list, 1, &ci) == 0);
  tally_claim_list_destroy(list);
  OK(tally_list_claims(db, TALLY_CLAIMS_DONE, 10, S("job-2"), &list, &err_));
  CHECK(tally_claim_list_count(list) == 1);
  tally_claim_list_destroy(list);
  FAILS(TALLY_INVALID_ARGUMENT, "filter 5",
        tally_list_claims(db, 5, 10, NULL, 0, &list, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "",
        tally_list_claims(db, TALLY_CLAIMS_ALL, 0, NULL, 0, &list, &err_));
  CHECK(tally_claim_list_count(NULL) == 0);
  CHECK(tally_claim_list_get(NULL, 0, &ci) == 0);
  tally_claim_list_destroy(NULL);
}

static void test_outbox_and_sync(void) {
  tally_db* edge = open_db("edge");
  tally_db* hub = open_db("hub");
  tally_counter_spec spec;
  tally_counter_spec_init(&spec);
  spec.outbox = 1;
  OK(tally_create_counter(edge, S("views"), &spec, &err_));
  tally_counter_spec_init(&spec);
  spec.shards = 8;
  OK(tally_create_counter(hub, S("views"), &spec, &err_));
  tally_increment_result r;
  OK(tally_increment_once(edge, S("views"), NULL, 0, S("v1"), 2, NULL, &r,
                          &err_));
  OK(tally_increment(edge, S("views"), NULL, 0, 3, NULL, &r, &err_));

  tally_outbox_list* list = NULL;
  tally_outbox_entry e;
  OK(tally_read_outbox(edge, 0, 10, &list, &err_));
  CHECK(tally_outbox_list_count(list) == 2);
  CHECK(tally_outbox_list_get(list, 0, &e) == 1);
  CHECK(e.seq == 1 && e.delta == 2 && e.event_id_len == 2 &&
        memcmp(e.event_id, "v1", 2) == 0 && e.counter_len == 5 &&
        e.time_ms == test_now);
  CHECK(tally_outbox_list_get(list, 1, &e) == 1 && e.event_id_len == 0);
  CHECK(tally_outbox_list_get(list, 2, &e) == 0);
  tally_outbox_list_destroy(list);
  tally_outbox_status st;
  OK(tally_get_outbox_status(edge, &st, &err_));
  CHECK(st.entries == 2 && st.last_seq == 2 && st.acked_through == 0);
  char* id = NULL;
  OK(tally_database_id(edge, &id, &err_));
  CHECK(id != NULL && strlen(id) > 0);
  tally_free(id);

  tally_sync_report rep;
  OK(tally_sync_outbox(edge, hub, 1000, 1, &rep, &err_));
  CHECK(rep.entries == 2 && rep.applied == 2 && rep.acked_through == 2);
  int64_t v = 0;
  OK(tally_read_exact(hub, S("views"), NULL, 0, &v, &err_));
  CHECK(v == 5);
  OK(tally_sync_outbox(edge, hub, 1000, 0, &rep, &err_)); /* nothing new */
  CHECK(rep.entries == 0);
  OK(tally_get_outbox_status(edge, &st, &err_));
  CHECK(st.acked_through == 2 && st.entries == 0);
  OK(tally_increment(edge, S("views"), NULL, 0, 1, NULL, &r, &err_));
  OK(tally_ack_outbox(edge, 3, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "", tally_ack_outbox(edge, 99, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "",
        tally_read_outbox(edge, 0, 0, &list, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "list is NULL",
        tally_read_outbox(edge, 0, 10, NULL, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "status is NULL",
        tally_get_outbox_status(edge, NULL, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "id is NULL",
        tally_database_id(edge, NULL, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "",
        tally_sync_outbox(edge, hub, 0, 1, &rep, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "hub is NULL",
        tally_sync_outbox(edge, NULL, 10, 1, &rep, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "edge is NULL",
        tally_sync_outbox(NULL, hub, 10, 1, &rep, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "report is NULL",
        tally_sync_outbox(edge, hub, 10, 1, NULL, &err_));
  CHECK(tally_outbox_list_count(NULL) == 0);
  CHECK(tally_outbox_list_get(NULL, 0, &e) == 0);
  tally_outbox_list_destroy(NULL);
  tally_close(hub);
  tally_close(edge);
}

static void test_admin(tally_db* db) {
  tally_verify_report rep;
  char* problems = (char*)"not touched";
  OK(tally_verify(db, &rep, &problems, &err_));
  CHECK(rep.counters == 5 && rep.markers > 0 && rep.problems == 0);
  CHECK(problems == NULL);
  OK(tally_verify(db, &rep, NULL, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "report is NULL",
        tally_verify(db, NULL, NULL, &err_));
  OK(tally_compact(db, &err_));
  tally_engine_stats stats;
  OK(tally_get_stats(db, &stats, &err_));
  CHECK(stats.applied > 0 && stats.duplicates > 0 && stats.conflicts > 0 &&
        stats.refused > 0);
  FAILS(TALLY_INVALID_ARGUMENT, "stats is NULL",
        tally_get_stats(db, NULL, &err_));

  OK(tally_checkpoint(db, path_of("checkpoint"), &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "", /* it exists now */
        tally_checkpoint(db, path_of("checkpoint"), &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "dir is NULL",
        tally_checkpoint(db, NULL, &err_));
  tally_db* copy = NULL;
  OK(tally_open(NULL, path_of("checkpoint"), &copy, &err_));
  int64_t a = 0, b = 0;
  OK(tally_read_exact(db, S("orders"), NULL, 0, &a, &err_));
  OK(tally_read_exact(copy, S("orders"), NULL, 0, &b, &err_));
  CHECK(a == b);
  tally_close(copy);

  tally_backup_info info;
  OK(tally_create_backup(db, path_of("backups"), &info, &err_));
  CHECK(info.id == 1 && info.files > 0 && info.bytes > 0);
  OK(tally_create_backup(db, path_of("backups"), &info, &err_));
  CHECK(info.id == 2);
  tally_backup_info infos[4];
  size_t count = 0;
  OK(tally_list_backups(path_of("backups"), infos, 4, &count, &err_));
  CHECK(count == 2 && infos[0].id == 1 && infos[1].id == 2);
  FAILS(TALLY_INVALID_ARGUMENT, "room for 1 backups",
        tally_list_backups(path_of("backups"), infos, 1, &count, &err_));
  CHECK(count == 2);
  FAILS(TALLY_INVALID_ARGUMENT, "count is NULL",
        tally_list_backups(path_of("backups"), infos, 4, NULL, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "backup_dir is NULL",
        tally_list_backups(NULL, infos, 4, &count, &err_));
  OK(tally_verify_backup(path_of("backups"), 2, &err_));
  FAILS(TALLY_NOT_FOUND, "", tally_verify_backup(path_of("backups"), 9, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "backup_dir is NULL",
        tally_verify_backup(NULL, 1, &err_));
  OK(tally_restore_backup(path_of("backups"), 2, path_of("restored"), &err_));
  OK(tally_open(NULL, path_of("restored"), &copy, &err_));
  OK(tally_read_exact(copy, S("orders"), NULL, 0, &b, &err_));
  CHECK(a == b);
  tally_close(copy);
  FAILS(TALLY_INVALID_ARGUMENT, "db_path is NULL",
        tally_restore_backup(path_of("backups"), 2, NULL, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "backup_dir is NULL",
        tally_create_backup(db, NULL, &info, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, "info is NULL",
        tally_create_backup(db, path_of("backups"), NULL, &err_));
}

/* Every call that takes a tally_db answers a NULL one with
 * InvalidArgument "db is NULL" (the write calls' are checked above). */
static void test_null_db(void) {
  tally_counter_info ci;
  tally_counter_list* cl;
  int64_t v;
  size_t n;
  uint64_t u;
  tally_cached_value cv;
  tally_quota_state q;
  tally_key_list* kl;
  tally_top_keys_info ti;
  tally_marker_list* ml;
  tally_reservation_result rr;
  tally_reservation_info ri;
  tally_held_value hv;
  tally_claim_result* cr;
  tally_claim_list* cll;
  tally_outbox_list* ol;
  tally_outbox_status os;
  char* id;
  tally_verify_report vr;
  tally_engine_stats es;
  tally_backup_info bi;
  const char* keys[1] = {"k"};
  size_t lens[1] = {1};
  const char* d = "db is NULL";
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_describe_counter(NULL, S("c"), &ci, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_list_counters(NULL, &cl, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_read_exact(NULL, S("c"), NULL, 0, &v, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_read_range(NULL, S("c"), NULL, 0, 0, 1, &v, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_shard_counts(NULL, S("c"), NULL, 0, &v, 1, &n, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_read_keys(NULL, S("c"), keys, lens, 1, &v, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_read_cached(NULL, S("c"), &cv, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_rollup_now(NULL, S("c"), &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_read_quota(NULL, S("c"), NULL, 0, &q, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_list_keys(NULL, S("c"), NULL, 0, NULL, 0, 1, &kl, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_top_keys(NULL, S("c"), 1, 1, &kl, &ti, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_delete_key(NULL, S("c"), S("k"), &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_count_markers(NULL, S("c"), NULL, 0, &u, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_list_markers(NULL, S("c"), NULL, 0, 1, 0, NULL, 0, &ml, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_get_marker(NULL, S("c"), NULL, 0, S("e"), &ml, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_reserve(NULL, S("c"), NULL, 0, S("r"), 1, 1, &rr, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_commit_reservation(NULL, S("c"), NULL, 0, S("r"), &rr, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_release_reservation(NULL, S("c"), NULL, 0, S("r"), &rr, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_get_reservation(NULL, S("c"), NULL, 0, S("r"), &ri, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_read_held(NULL, S("c"), NULL, 0, &hv, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_claim(NULL, S("k"), S("h"), 1, &cr, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_complete_claim(NULL, S("k"), 1, NULL, 0, NULL, &cr, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_release_claim(NULL, S("k"), 1, &cr, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_get_claim(NULL, S("k"), &cll, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_list_claims(NULL, 0, 1, NULL, 0, &cll, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_read_outbox(NULL, 0, 1, &ol, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_ack_outbox(NULL, 0, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_get_outbox_status(NULL, &os, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_database_id(NULL, &id, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_verify(NULL, &vr, NULL, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_compact(NULL, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_get_stats(NULL, &es, &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_checkpoint(NULL, "x", &err_));
  FAILS(TALLY_INVALID_ARGUMENT, d, tally_create_backup(NULL, "x", &bi, &err_));
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s SCRATCH_DIR\n", argv[0]);
    return 2;
  }
  snprintf(scratch, sizeof scratch, "%s", argv[1]);
  mkdir(scratch, 0755); /* may exist */
  test_version_and_names();
  test_open_and_options();
  tally_db* db = open_db("main");
  if (db == NULL) return 1;
  test_counters(db);
  test_writes(db);
  test_batches(db);
  test_reads(db);
  test_keyed(db);
  test_markers(db);
  test_strict(db);
  test_claims(db);
  test_admin(db);
  tally_close(db);
  test_outbox_and_sync();
  test_null_db();
  CHECK(clock_calls > 0); /* the C clock was the engine's */
  if (failures != 0) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("c api: all checks passed\n");
  return 0;
}
