/* tally's C API: the C++ API of include/tally/ for C and for the languages
 * that reach a library through C (Python's ctypes, Swift, Rust, Go).
 * docs/embedding.md has a complete program.
 *
 * Conventions (LevelDB's and RocksDB's c.h, with SQLite's result codes):
 * - Opaque handles (tally_db, tally_options, tally_batch, and the lists a
 *   call returns). The caller owns every handle it gets and gives it back
 *   with its _destroy (a tally_db: tally_close). Destroying NULL is a no-op.
 * - Every byte string is a pointer and a length: names, keys, event ids,
 *   holders and results may hold any byte the C++ API accepts, and are
 *   copied before the call returns. A NULL pointer with length 0 is the
 *   empty string. File system paths and targets are NUL-terminated.
 * - Every call that can fail returns a tally_code and takes `char**
 *   errmsg` last. On TALLY_OK, *errmsg is set to NULL; on an error, to a
 *   NUL-terminated message ("InvalidArgument: shards 0 is outside
 *   1..4096") the caller frees with tally_free. errmsg may be NULL when the
 *   caller wants the code only. Why both: the code lets a program (and a
 *   binding mapping codes to exceptions) branch without parsing text; the
 *   message belongs to the call, not to the handle, so there is no "last
 *   error" for another thread to overwrite (a tally_db is shared by
 *   threads).
 * - Strings a list hands out (tally_key_value.key, ...) are borrowed: valid
 *   until the list is destroyed. A `_get` beyond the list's count returns
 *   0 and leaves *out zeroed.
 * - A required handle or out pointer that is NULL is TALLY_INVALID_ARGUMENT
 *   naming the parameter, never a crash. Nothing else is checked here: the
 *   C++ API checks every value and its message names it.
 * - Booleans are ints (0 false, anything else true). Times are ms since the
 *   Unix epoch, UTC, unless named _s.
 *
 * Thread safety: as the C++ API. A tally_db may be used from many threads
 * at once; every other handle (options, batch, list, result) is a value,
 * used by one thread at a time. No call keeps a pointer the caller passed
 * after it returns, except tally_options_set_clock's function and context.
 *
 * Not in the C API (the C++ API has them): the async increments, progress
 * callbacks, import, dump and the database statistics beyond EngineStats.
 */

#ifndef TALLY_C_H_
#define TALLY_C_H_

#include <stddef.h>
#include <stdint.h>

#include "tally/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- codes, names, version, memory ---- */

/* The Status codes of tally/status.h, with the same values. */
typedef enum tally_code {
  TALLY_OK = 0,
  TALLY_NOT_FOUND = 1,
  TALLY_INVALID_ARGUMENT = 2,
  TALLY_CORRUPTION = 3,
  TALLY_IO_ERROR = 4,
  TALLY_OUT_OF_RANGE = 5,
  TALLY_BUSY = 6,
  TALLY_ALREADY_EXISTS = 7,
  TALLY_NOT_SUPPORTED = 8
} tally_code;

/* "OK", "NotFound", ...; "unknown" for a value outside the enum. */
TALLY_EXPORT const char* tally_code_name(int code);

/* The library's version, "MAJOR.MINOR.PATCH" and MAJOR*1000000 +
 * MINOR*1000 + PATCH (compare with TALLY_VERSION_* of tally/version.h, the
 * headers' version, as sqlite3_libversion_number), and the storage
 * engine's ("RocksDB 7.8.3"). */
TALLY_EXPORT const char* tally_version(void);
TALLY_EXPORT int tally_version_number(void);
TALLY_EXPORT const char* tally_storage_engine_version(void);

/* Frees what tally allocated for the caller: error messages,
 * tally_database_id's id, tally_verify's problems. */
TALLY_EXPORT void tally_free(void* ptr);

/* ---- enums (the C++ enums' values) ---- */

enum { TALLY_POLICY_RANDOM = 0, TALLY_POLICY_AFFINITY = 1 };
enum {
  TALLY_BUCKET_NONE = 0,
  TALLY_BUCKET_MINUTE = 1,
  TALLY_BUCKET_HOUR = 2,
  TALLY_BUCKET_DAY = 3
};
enum {
  TALLY_APPLIED = 0,
  TALLY_DUPLICATE = 1,
  TALLY_CONFLICT = 2,
  TALLY_OUTSIDE_WINDOW = 3,
  TALLY_REFUSED = 4
};
enum {
  TALLY_HOLD_HELD = 0,
  TALLY_HOLD_COMMITTED = 1,
  TALLY_HOLD_RELEASED = 2,
  TALLY_HOLD_EXPIRED = 3,
  TALLY_HOLD_REFUSED = 4
};
enum {
  TALLY_CLAIM_HELD = 0,
  TALLY_CLAIM_EXPIRED = 1,
  TALLY_CLAIM_RELEASED = 2,
  TALLY_CLAIM_DONE = 3
};
enum {
  TALLY_ANSWER_ACQUIRED = 0,
  TALLY_ANSWER_BUSY = 1,
  TALLY_ANSWER_DONE = 2,
  TALLY_ANSWER_COMPLETED = 3,
  TALLY_ANSWER_RELEASED = 4,
  TALLY_ANSWER_STALE_TOKEN = 5
};
enum { TALLY_CLAIMS_ALL = 0, TALLY_CLAIMS_HELD = 1, TALLY_CLAIMS_DONE = 2 };
/* What a read-only database reads (Options::reads). */
enum {
  TALLY_READ_VALUES = 1,
  TALLY_READ_MARKERS = 2,
  TALLY_READ_ROLLUPS = 4,
  TALLY_READ_OUTBOX = 8,
  TALLY_READ_ALL = 15
};
/* An event time not given (kEventTimeNow): the clock's now. */
#define TALLY_EVENT_TIME_NOW INT64_MIN

/* "applied", "duplicate", ...; "unknown" outside the enum. */
TALLY_EXPORT const char* tally_outcome_name(int outcome);
TALLY_EXPORT const char* tally_hold_state_name(int state);
TALLY_EXPORT const char* tally_claim_state_name(int state);
TALLY_EXPORT const char* tally_claim_answer_name(int answer);

/* ---- options and opening ---- */

typedef struct tally_options tally_options;

/* tally::Options' defaults (tally/options.h says what each means). Values
 * are checked by tally_open. */
TALLY_EXPORT tally_options* tally_options_create(void);
TALLY_EXPORT void tally_options_destroy(tally_options* options);
TALLY_EXPORT void tally_options_set_create_if_missing(tally_options* options,
                                                      int value);
TALLY_EXPORT void tally_options_set_read_only(tally_options* options,
                                              int value);
TALLY_EXPORT void tally_options_set_reads(tally_options* options,
                                          uint32_t reads);
TALLY_EXPORT void tally_options_set_sync(tally_options* options, int value);
TALLY_EXPORT void tally_options_set_block_cache_bytes(tally_options* options,
                                                      size_t bytes);
TALLY_EXPORT void tally_options_set_write_buffer_bytes(tally_options* options,
                                                       size_t bytes);
TALLY_EXPORT void tally_options_set_max_wal_bytes(tally_options* options,
                                                  uint64_t bytes);
TALLY_EXPORT void tally_options_set_rollup_interval_ms(tally_options* options,
                                                       uint32_t ms);
TALLY_EXPORT void tally_options_set_group_commit_max_delay_us(
    tally_options* options, uint32_t us);
TALLY_EXPORT void tally_options_set_max_pending_operands(tally_options* options,
                                                         size_t value);
TALLY_EXPORT void tally_options_set_event_lock_stripes(tally_options* options,
                                                       uint32_t value);
TALLY_EXPORT void tally_options_set_stats_publish_interval_ms(
    tally_options* options, uint32_t value);
TALLY_EXPORT void tally_options_set_expiry_sweep_seconds(tally_options* options,
                                                         uint64_t value);
TALLY_EXPORT void tally_options_set_outbox_max_entries(tally_options* options,
                                                       uint64_t value);
TALLY_EXPORT void tally_options_set_group_commit_max_bytes(
    tally_options* options, size_t value);
TALLY_EXPORT void tally_options_set_group_commit_max_ops(tally_options* options,
                                                         size_t value);
TALLY_EXPORT void tally_options_set_salvage_wal(tally_options* options,
                                                int value);
/* The engine's clock (Options::clock): now_ms(ctx) is called from any
 * thread, concurrently, and must outlive every database opened with these
 * options. NULL now_ms: the system clock. */
TALLY_EXPORT void tally_options_set_clock(tally_options* options,
                                          int64_t (*now_ms)(void* ctx),
                                          void* ctx);

typedef struct tally_db tally_db;

/* Db::Open: `options` NULL means the defaults. */
TALLY_EXPORT tally_code tally_open(const tally_options* options,
                                   const char* target, tally_db** db,
                                   char** errmsg);
/* Closes the database (Db's destructor). */
TALLY_EXPORT void tally_close(tally_db* db);

/* ---- counters ---- */

typedef struct tally_counter_spec {
  uint32_t shards;
  int policy; /* TALLY_POLICY_* */
  int64_t dedupe_window_ms;
  int bucket; /* TALLY_BUCKET_* */
  int64_t retention_ms;
  int outbox;
  int keyed;
  int has_min;
  int64_t min;
  int has_max;
  int64_t max;
  int sliding;
} tally_counter_spec;

/* CounterSpec's defaults: 1 shard, random policy, nothing else. */
TALLY_EXPORT void tally_counter_spec_init(tally_counter_spec* spec);

typedef struct tally_counter_info {
  const char* name; /* borrowed from the list; NULL from describe */
  size_t name_len;
  uint64_t id;
  uint32_t schema_version;
  int64_t created_at_ms;
  uint32_t flags;
  tally_counter_spec spec;
} tally_counter_info;

typedef struct tally_counter_list tally_counter_list;

TALLY_EXPORT tally_code tally_create_counter(tally_db* db, const char* name,
                                             size_t name_len,
                                             const tally_counter_spec* spec,
                                             char** errmsg);
TALLY_EXPORT tally_code tally_describe_counter(tally_db* db, const char* name,
                                               size_t name_len,
                                               tally_counter_info* info,
                                               char** errmsg);
TALLY_EXPORT tally_code tally_list_counters(tally_db* db,
                                            tally_counter_list** list,
                                            char** errmsg);
TALLY_EXPORT size_t tally_counter_list_count(const tally_counter_list* list);
TALLY_EXPORT int tally_counter_list_get(const tally_counter_list* list,
                                        size_t i, tally_counter_info* out);
TALLY_EXPORT void tally_counter_list_destroy(tally_counter_list* list);
TALLY_EXPORT tally_code tally_delete_counter(tally_db* db, const char* name,
                                             size_t name_len, char** errmsg);

/* ---- writes ----
 * Every write and read names a counter and, for a keyed counter, a key
 * (CounterRef): key_len 0 for a named counter. */

/* IncrementOptions, OnceOptions and ResetOptions in one (a reset takes the
 * event time only: an affinity key or saturate is InvalidArgument). */
typedef struct tally_write_options {
  const char* affinity_key;
  size_t affinity_key_len;
  int64_t event_time_ms; /* TALLY_EVENT_TIME_NOW: now */
  int saturate;
} tally_write_options;

TALLY_EXPORT void tally_write_options_init(tally_write_options* options);

typedef struct tally_increment_result {
  int outcome; /* TALLY_APPLIED ... */
  uint32_t shard;
  int64_t value;
  int64_t applied;
  int64_t remaining;
  int64_t window_ends_ms;
} tally_increment_result;

/* Db::Increment, IncrementOnce, Reset; `options` NULL: the defaults. */
TALLY_EXPORT tally_code tally_increment(tally_db* db, const char* counter,
                                        size_t counter_len, const char* key,
                                        size_t key_len, int64_t delta,
                                        const tally_write_options* options,
                                        tally_increment_result* result,
                                        char** errmsg);
TALLY_EXPORT tally_code tally_increment_once(
    tally_db* db, const char* counter, size_t counter_len, const char* key,
    size_t key_len, const char* event_id, size_t event_id_len, int64_t delta,
    const tally_write_options* options, tally_increment_result* result,
    char** errmsg);
TALLY_EXPORT tally_code tally_reset(tally_db* db, const char* counter,
                                    size_t counter_len, const char* key,
                                    size_t key_len, const char* reset_id,
                                    size_t reset_id_len, int64_t value,
                                    const tally_write_options* options,
                                    tally_increment_result* result,
                                    char** errmsg);

/* A Batch: operations committed by tally_apply in one atomic write. */
typedef struct tally_batch tally_batch;

TALLY_EXPORT tally_batch* tally_batch_create(void);
TALLY_EXPORT void tally_batch_destroy(tally_batch* batch);
TALLY_EXPORT void tally_batch_clear(tally_batch* batch);
TALLY_EXPORT size_t tally_batch_count(const tally_batch* batch);
/* Batch::Add and AddOnce. Checked by tally_apply, as the C++ API does;
 * here only a NULL pointer with a length fails. */
TALLY_EXPORT tally_code tally_batch_add(tally_batch* batch, const char* counter,
                                        size_t counter_len, const char* key,
                                        size_t key_len, int64_t delta,
                                        const tally_write_options* options,
                                        char** errmsg);
TALLY_EXPORT tally_code tally_batch_add_once(
    tally_batch* batch, const char* counter, size_t counter_len,
    const char* key, size_t key_len, const char* event_id, size_t event_id_len,
    int64_t delta, const tally_write_options* options, char** errmsg);
/* Db::Apply. `results`: room for `results_len` answers, one per operation,
 * written only on TALLY_OK; results_len must be at least the batch's count,
 * or 0 with results NULL (no answers wanted). */
TALLY_EXPORT tally_code tally_apply(tally_db* db, const tally_batch* batch,
                                    tally_increment_result* results,
                                    size_t results_len, char** errmsg);

/* ---- reads ---- */

TALLY_EXPORT tally_code tally_read_exact(tally_db* db, const char* counter,
                                         size_t counter_len, const char* key,
                                         size_t key_len, int64_t* value,
                                         char** errmsg);
TALLY_EXPORT tally_code tally_read_range(tally_db* db, const char* counter,
                                         size_t counter_len, const char* key,
                                         size_t key_len, int64_t from_ms,
                                         int64_t to_ms, int64_t* value,
                                         char** errmsg);
/* Db::ShardCounts into values[0..capacity); *count gets the number of
 * shards. TALLY_INVALID_ARGUMENT (with *count set) when capacity is less. */
TALLY_EXPORT tally_code tally_shard_counts(tally_db* db, const char* counter,
                                           size_t counter_len, const char* key,
                                           size_t key_len, int64_t* values,
                                           size_t capacity, size_t* count,
                                           char** errmsg);
/* Db::ReadKeys: values[i] is keys[i]'s (keys[i] has key_lens[i] bytes). */
TALLY_EXPORT tally_code tally_read_keys(tally_db* db, const char* counter,
                                        size_t counter_len,
                                        const char* const* keys,
                                        const size_t* key_lens, size_t n,
                                        int64_t* values, char** errmsg);

typedef struct tally_cached_value {
  int64_t value;
  int64_t as_of_ms;
  int64_t lag_ms;
  uint64_t lag_increments;
  int lag_increments_known;
} tally_cached_value;

TALLY_EXPORT tally_code tally_read_cached(tally_db* db, const char* counter,
                                          size_t counter_len,
                                          tally_cached_value* value,
                                          char** errmsg);
/* Db::RollupNow: counter_len 0 rolls up every counter. */
TALLY_EXPORT tally_code tally_rollup_now(tally_db* db, const char* counter,
                                         size_t counter_len, char** errmsg);
TALLY_EXPORT tally_code tally_refresh(tally_db* db, char** errmsg);

typedef struct tally_quota_state {
  int64_t used;
  int64_t remaining;
  int64_t window_start_ms;
  int64_t window_ends_ms;
  int64_t previous_used;
} tally_quota_state;

TALLY_EXPORT tally_code tally_read_quota(tally_db* db, const char* counter,
                                         size_t counter_len, const char* key,
                                         size_t key_len,
                                         tally_quota_state* state,
                                         char** errmsg);

/* ---- keyed counters ---- */

typedef struct tally_key_value {
  const char* key; /* borrowed from the list */
  size_t key_len;
  int64_t value;
  int out_of_range;
} tally_key_value;

typedef struct tally_key_list tally_key_list;

TALLY_EXPORT size_t tally_key_list_count(const tally_key_list* list);
TALLY_EXPORT int tally_key_list_get(const tally_key_list* list, size_t i,
                                    tally_key_value* out);
TALLY_EXPORT void tally_key_list_destroy(tally_key_list* list);

/* Db::ListKeys: keys starting with `prefix`, after `start_after`, at most
 * `limit`. */
TALLY_EXPORT tally_code tally_list_keys(tally_db* db, const char* counter,
                                        size_t counter_len, const char* prefix,
                                        size_t prefix_len,
                                        const char* start_after,
                                        size_t start_after_len, size_t limit,
                                        tally_key_list** list, char** errmsg);

typedef struct tally_top_keys_info {
  uint64_t key_count;
  int64_t total;
  uint64_t out_of_range_keys;
  const char* first_out_of_range_key; /* borrowed from the key list */
  size_t first_out_of_range_key_len;
  int64_t as_of_ms;
  int64_t lag_ms;
  int exact;
} tally_top_keys_info;

/* Db::TopKeys: the keys into *list, the rest into *info. */
TALLY_EXPORT tally_code tally_top_keys(tally_db* db, const char* counter,
                                       size_t counter_len, size_t n, int exact,
                                       tally_key_list** list,
                                       tally_top_keys_info* info,
                                       char** errmsg);
TALLY_EXPORT tally_code tally_delete_key(tally_db* db, const char* counter,
                                         size_t counter_len, const char* key,
                                         size_t key_len, char** errmsg);

/* ---- markers ---- */

typedef struct tally_marker_info {
  const char* event_id; /* borrowed from the list */
  size_t event_id_len;
  const char* key; /* borrowed; keyed counters only */
  size_t key_len;
  uint32_t shard;
  int64_t delta;
  int64_t created_at_ms;
  int64_t expires_at_ms;
  int pinned;
  int strict;
  int refused;
  int64_t asked;
  int64_t value;
  int64_t window_ends_ms;
  int64_t remaining;
  int reset;
  int remaining_kept;
} tally_marker_info;

typedef struct tally_marker_list tally_marker_list;

TALLY_EXPORT size_t tally_marker_list_count(const tally_marker_list* list);
TALLY_EXPORT int tally_marker_list_get(const tally_marker_list* list, size_t i,
                                       tally_marker_info* out);
TALLY_EXPORT void tally_marker_list_destroy(tally_marker_list* list);

TALLY_EXPORT tally_code tally_count_markers(tally_db* db, const char* counter,
                                            size_t counter_len, const char* key,
                                            size_t key_len, uint64_t* count,
                                            char** errmsg);
/* Db::ListMarkers: after `start_after`, created at or after `since_ms`
 * (INT64_MIN: any), at most `limit`. */
TALLY_EXPORT tally_code tally_list_markers(
    tally_db* db, const char* counter, size_t counter_len, const char* key,
    size_t key_len, size_t limit, int64_t since_ms, const char* start_after,
    size_t start_after_len, tally_marker_list** list, char** errmsg);
/* Db::GetMarker: a list of one. */
TALLY_EXPORT tally_code tally_get_marker(tally_db* db, const char* counter,
                                         size_t counter_len, const char* key,
                                         size_t key_len, const char* event_id,
                                         size_t event_id_len,
                                         tally_marker_list** list,
                                         char** errmsg);

/* ---- reservations (strict counters with a minimum) ---- */

typedef struct tally_reservation_result {
  int outcome; /* TALLY_APPLIED ... */
  int state;   /* TALLY_HOLD_* */
  int64_t units;
  int64_t expires_at_ms;
  int64_t value;
  int64_t available;
} tally_reservation_result;

typedef struct tally_reservation_info {
  int state; /* TALLY_HOLD_* */
  int64_t units;
  int64_t created_at_ms;
  int64_t expires_at_ms;
  int64_t closed_at_ms;
} tally_reservation_info;

typedef struct tally_held_value {
  int64_t value;
  int64_t held;
  int64_t available;
  uint64_t open;
  int64_t next_expiry_ms;
} tally_held_value;

TALLY_EXPORT tally_code
tally_reserve(tally_db* db, const char* counter, size_t counter_len,
              const char* key, size_t key_len, const char* reservation_id,
              size_t reservation_id_len, int64_t units, int64_t hold_for_ms,
              tally_reservation_result* result, char** errmsg);
TALLY_EXPORT tally_code tally_commit_reservation(
    tally_db* db, const char* counter, size_t counter_len, const char* key,
    size_t key_len, const char* reservation_id, size_t reservation_id_len,
    tally_reservation_result* result, char** errmsg);
TALLY_EXPORT tally_code tally_release_reservation(
    tally_db* db, const char* counter, size_t counter_len, const char* key,
    size_t key_len, const char* reservation_id, size_t reservation_id_len,
    tally_reservation_result* result, char** errmsg);
TALLY_EXPORT tally_code tally_get_reservation(
    tally_db* db, const char* counter, size_t counter_len, const char* key,
    size_t key_len, const char* reservation_id, size_t reservation_id_len,
    tally_reservation_info* info, char** errmsg);
TALLY_EXPORT tally_code tally_read_held(tally_db* db, const char* counter,
                                        size_t counter_len, const char* key,
                                        size_t key_len, tally_held_value* value,
                                        char** errmsg);

/* ---- claims: a side effect done once (docs/claims.md) ---- */

typedef struct tally_claim_info {
  const char* key; /* borrowed from the list or result */
  size_t key_len;
  int state; /* TALLY_CLAIM_* */
  uint64_t token;
  const char* holder; /* borrowed */
  size_t holder_len;
  int64_t granted_at_ms;
  int64_t lease_until_ms;
  int64_t ended_at_ms;
  const char* result; /* borrowed */
  size_t result_len;
} tally_claim_info;

/* What Claim, CompleteClaim and ReleaseClaim answer (ClaimResult). */
typedef struct tally_claim_result tally_claim_result;

TALLY_EXPORT int tally_claim_result_answer(const tally_claim_result* result);
TALLY_EXPORT int tally_claim_result_repeated(const tally_claim_result* result);
TALLY_EXPORT void tally_claim_result_claim(const tally_claim_result* result,
                                           tally_claim_info* out);
/* CompleteClaim's counts: one answer per operation of its batch. */
TALLY_EXPORT size_t
tally_claim_result_counted_count(const tally_claim_result* result);
TALLY_EXPORT int tally_claim_result_counted(const tally_claim_result* result,
                                            size_t i,
                                            tally_increment_result* out);
TALLY_EXPORT void tally_claim_result_destroy(tally_claim_result* result);

TALLY_EXPORT tally_code tally_claim(tally_db* db, const char* key,
                                    size_t key_len, const char* holder,
                                    size_t holder_len, int64_t lease_ms,
                                    tally_claim_result** result, char** errmsg);
/* `counts` may be NULL (no counts). */
TALLY_EXPORT tally_code tally_complete_claim(
    tally_db* db, const char* key, size_t key_len, uint64_t token,
    const char* result_text, size_t result_text_len, const tally_batch* counts,
    tally_claim_result** result, char** errmsg);
TALLY_EXPORT tally_code tally_release_claim(tally_db* db, const char* key,
                                            size_t key_len, uint64_t token,
                                            tally_claim_result** result,
                                            char** errmsg);

typedef struct tally_claim_list tally_claim_list;

TALLY_EXPORT size_t tally_claim_list_count(const tally_claim_list* list);
TALLY_EXPORT int tally_claim_list_get(const tally_claim_list* list, size_t i,
                                      tally_claim_info* out);
TALLY_EXPORT void tally_claim_list_destroy(tally_claim_list* list);
/* Db::GetClaim: a list of one. */
TALLY_EXPORT tally_code tally_get_claim(tally_db* db, const char* key,
                                        size_t key_len, tally_claim_list** list,
                                        char** errmsg);
/* Db::ListClaims: `filter` TALLY_CLAIMS_*, after `start_after`, at most
 * `limit`. */
TALLY_EXPORT tally_code tally_list_claims(tally_db* db, int filter,
                                          size_t limit, const char* start_after,
                                          size_t start_after_len,
                                          tally_claim_list** list,
                                          char** errmsg);

/* ---- the outbox and sync (tally/outbox.h, tally/sync.h) ---- */

typedef struct tally_outbox_entry {
  uint64_t seq;
  const char* counter; /* borrowed from the list */
  size_t counter_len;
  const char* key; /* borrowed; keyed counters only */
  size_t key_len;
  const char* event_id; /* borrowed; empty for a plain increment */
  size_t event_id_len;
  int64_t delta;
  int64_t time_ms;
  const char* origin; /* borrowed */
  size_t origin_len;
  uint64_t origin_seq;
} tally_outbox_entry;

typedef struct tally_outbox_list tally_outbox_list;

TALLY_EXPORT size_t tally_outbox_list_count(const tally_outbox_list* list);
TALLY_EXPORT int tally_outbox_list_get(const tally_outbox_list* list, size_t i,
                                       tally_outbox_entry* out);
TALLY_EXPORT void tally_outbox_list_destroy(tally_outbox_list* list);

TALLY_EXPORT tally_code tally_read_outbox(tally_db* db, uint64_t after_seq,
                                          size_t limit,
                                          tally_outbox_list** list,
                                          char** errmsg);
TALLY_EXPORT tally_code tally_ack_outbox(tally_db* db, uint64_t through_seq,
                                         char** errmsg);

typedef struct tally_outbox_status {
  uint64_t entries;
  uint64_t acked_through;
  uint64_t last_seq;
  int64_t oldest_time_ms;
  int64_t age_ms;
} tally_outbox_status;

TALLY_EXPORT tally_code tally_get_outbox_status(tally_db* db,
                                                tally_outbox_status* status,
                                                char** errmsg);
/* The database's id, NUL-terminated, freed with tally_free. */
TALLY_EXPORT tally_code tally_database_id(tally_db* db, char** id,
                                          char** errmsg);

typedef struct tally_sync_report {
  uint64_t entries;
  uint64_t applied;
  uint64_t duplicates;
  uint64_t batches;
  uint64_t acked_through;
} tally_sync_report;

/* SyncOutbox: edge's outbox into hub, `batch_entries` per hub write
 * (SyncOptions). */
TALLY_EXPORT tally_code tally_sync_outbox(tally_db* edge, tally_db* hub,
                                          size_t batch_entries,
                                          int shard_by_edge,
                                          tally_sync_report* report,
                                          char** errmsg);

/* ---- administration, checkpoints, backups ---- */

typedef struct tally_verify_report {
  uint64_t counters;
  uint64_t shard_keys;
  uint64_t markers;
  uint64_t sums_compared;
  uint64_t keys_compared;
  uint64_t reservations;
  uint64_t problems; /* kept problems: lines of *problems */
  uint64_t problems_dropped;
} tally_verify_report;

/* tally::Verify: TALLY_OK when the check ran; what it found is in
 * *report and, one per line, in *problems (NULL when none; freed with
 * tally_free). problems may be NULL. */
TALLY_EXPORT tally_code tally_verify(tally_db* db, tally_verify_report* report,
                                     char** problems, char** errmsg);
TALLY_EXPORT tally_code tally_compact(tally_db* db, char** errmsg);

typedef struct tally_engine_stats {
  uint64_t applied;
  uint64_t duplicates;
  uint64_t conflicts;
  uint64_t outside_window;
  uint64_t refused;
  uint64_t rejected;
  uint64_t group_commits;
  uint64_t group_members;
} tally_engine_stats;

/* tally::GetStats (EngineStats' counts). */
TALLY_EXPORT tally_code tally_get_stats(tally_db* db, tally_engine_stats* stats,
                                        char** errmsg);

TALLY_EXPORT tally_code tally_checkpoint(tally_db* db, const char* dir,
                                         char** errmsg);

typedef struct tally_backup_info {
  uint32_t id;
  int64_t created_at_s;
  uint64_t bytes;
  uint32_t files;
} tally_backup_info;

TALLY_EXPORT tally_code tally_create_backup(tally_db* db,
                                            const char* backup_dir,
                                            tally_backup_info* info,
                                            char** errmsg);
/* ListBackups into infos[0..capacity); *count gets how many there are.
 * TALLY_INVALID_ARGUMENT (with *count set) when capacity is less. */
TALLY_EXPORT tally_code tally_list_backups(const char* backup_dir,
                                           tally_backup_info* infos,
                                           size_t capacity, size_t* count,
                                           char** errmsg);
TALLY_EXPORT tally_code tally_verify_backup(const char* backup_dir, uint32_t id,
                                            char** errmsg);
TALLY_EXPORT tally_code tally_restore_backup(const char* backup_dir,
                                             uint32_t id, const char* db_path,
                                             char** errmsg);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TALLY_C_H_ */
