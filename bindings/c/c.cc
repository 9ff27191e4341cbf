// The C API (include/tally/c.h) over the public C++ API. Uses only
// include/tally/ (scripts/check_layout): everything a C caller can do, a
// C++ caller can do with the same calls, on any backend Db::Open chooses.
//
// Each function converts its arguments (a NULL pointer with a length, a
// NULL required handle or out pointer, an enum value outside its range:
// InvalidArgument naming it), calls the C++ API, and converts the answer.
// The C++ API checks every value itself; nothing is checked twice here.

#include "tally/c.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tally/admin.h"
#include "tally/backup.h"
#include "tally/batch.h"
#include "tally/checkpoint.h"
#include "tally/db.h"
#include "tally/options.h"
#include "tally/outbox.h"
#include "tally/status.h"
#include "tally/sync.h"
#include "tally/types.h"
#include "tally/version.h"

using tally::Status;

// ---- handles ----

namespace {

// Options::clock from a C function and its context.
class CClock final : public tally::Clock {
 public:
  int64_t (*now_ms)(void*) = nullptr;
  void* ctx = nullptr;
  int64_t NowMillis() const override { return now_ms(ctx); }
};

}  // namespace

struct tally_options {
  tally::Options options;
  CClock clock;  // used when clock.now_ms is set
};

struct tally_db {
  CClock clock;  // the Db's own copy: tally_options may go first
  std::unique_ptr<tally::Db> db;  // last: closed before the clock goes
};

struct tally_batch {
  tally::Batch batch;
};
struct tally_counter_list {
  std::vector<tally::CounterInfo> items;
};
struct tally_key_list {
  std::vector<tally::KeyValue> items;
  std::string first_out_of_range_key;  // tally_top_keys_info borrows it
};
struct tally_marker_list {
  std::vector<tally::MarkerInfo> items;
};
struct tally_claim_list {
  std::vector<tally::ClaimInfo> items;
};
struct tally_claim_result {
  tally::ClaimResult result;
};
struct tally_outbox_list {
  std::vector<tally::OutboxEntry> items;
};

// ---- conversions ----

namespace {

char* CopyString(std::string_view s) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (p == nullptr) std::abort();  // as operator new would: out of memory
  if (!s.empty()) std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  return p;
}

// The code, with the message into *errmsg (NULL on OK).
tally_code Answer(const Status& s, char** errmsg) {
  if (errmsg != nullptr) {
    *errmsg = s.ok() ? nullptr : CopyString(s.ToString());
  }
  return static_cast<tally_code>(s.code());
}

Status IsNull(const char* what) {
  return Status::InvalidArgument(std::string(what) + " is NULL");
}

// A byte string argument: NULL with length 0 is empty.
Status Bytes(const char* p, size_t n, const char* what, std::string_view* out) {
  if (p == nullptr && n != 0) {
    return Status::InvalidArgument(std::string(what) + " is NULL with length " +
                                   std::to_string(n));
  }
  *out = n == 0 ? std::string_view() : std::string_view(p, n);
  return Status::OK();
}

// A counter and its key (CounterRef).
struct Ref {
  std::string_view counter, key;
  tally::CounterRef ref() const { return tally::CounterRef(counter, key); }
};
Status MakeRef(const char* c, size_t cl, const char* k, size_t kl, Ref* r) {
  Status s = Bytes(c, cl, "counter", &r->counter);
  if (s.ok()) s = Bytes(k, kl, "key", &r->key);
  return s;
}

Status CheckDb(const tally_db* db) {
  return db == nullptr || db->db == nullptr ? IsNull("db") : Status::OK();
}

Status CheckPath(const char* path, const char* what) {
  return path == nullptr ? IsNull(what) : Status::OK();
}

// Runs `body` (returning Status) unless an earlier check failed.
template <typename Body>
tally_code Run(Status checks, char** errmsg, Body&& body) {
  if (!checks.ok()) return Answer(checks, errmsg);
  return Answer(body(), errmsg);
}

// Requires every pointer in `ptrs` (name, pointer) to be non-NULL.
Status Need(std::initializer_list<std::pair<const char*, const void*>> ptrs) {
  for (const auto& [name, p] : ptrs) {
    if (p == nullptr) return IsNull(name);
  }
  return Status::OK();
}

Status All(std::initializer_list<Status> list) {
  for (const Status& s : list) {
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status ToSpec(const tally_counter_spec& c, tally::CounterSpec* spec) {
  if (c.policy != TALLY_POLICY_RANDOM && c.policy != TALLY_POLICY_AFFINITY) {
    return Status::InvalidArgument("policy " + std::to_string(c.policy) +
                                   " is not a TALLY_POLICY_* value");
  }
  if (c.bucket < TALLY_BUCKET_NONE || c.bucket > TALLY_BUCKET_DAY) {
    return Status::InvalidArgument("bucket " + std::to_string(c.bucket) +
                                   " is not a TALLY_BUCKET_* value");
  }
  spec->shards = c.shards;
  spec->policy = static_cast<tally::ShardPolicy>(c.policy);
  spec->dedupe_window_ms = c.dedupe_window_ms;
  spec->bucket = static_cast<tally::BucketWidth>(c.bucket);
  spec->retention_ms = c.retention_ms;
  spec->outbox = c.outbox != 0;
  spec->keyed = c.keyed != 0;
  spec->bounds =
      tally::CounterBounds{c.has_min != 0, c.min, c.has_max != 0, c.max};
  spec->sliding = c.sliding != 0;
  return Status::OK();
}

void FromInfo(const tally::CounterInfo& i, bool with_name,
              tally_counter_info* out) {
  *out = tally_counter_info{};
  if (with_name) {
    out->name = i.name.data();
    out->name_len = i.name.size();
  }
  out->id = i.id;
  out->schema_version = i.schema_version;
  out->created_at_ms = i.created_at_ms;
  out->flags = i.flags;
  tally_counter_spec& s = out->spec;
  s.shards = i.shards;
  s.policy = static_cast<int>(i.policy);
  s.dedupe_window_ms = i.dedupe_window_ms;
  s.bucket = static_cast<int>(i.bucket);
  s.retention_ms = i.retention_ms;
  s.outbox = i.outbox;
  s.keyed = i.keyed;
  s.has_min = i.bounds.has_min;
  s.min = i.bounds.min;
  s.has_max = i.bounds.has_max;
  s.max = i.bounds.max;
  s.sliding = i.sliding;
}

tally_increment_result FromResult(const tally::IncrementResult& r) {
  return tally_increment_result{static_cast<int>(r.outcome),
                                r.shard,
                                r.value,
                                r.applied,
                                r.remaining,
                                r.window_ends_ms};
}

tally_reservation_result FromReservation(const tally::ReservationResult& r) {
  return tally_reservation_result{static_cast<int>(r.outcome),
                                  static_cast<int>(r.state),
                                  r.units,
                                  r.expires_at_ms,
                                  r.value,
                                  r.available};
}

void FromClaim(const tally::ClaimInfo& c, tally_claim_info* out) {
  *out = tally_claim_info{
      c.key.data(),    c.key.size(),     static_cast<int>(c.state),
      c.token,         c.holder.data(),  c.holder.size(),
      c.granted_at_ms, c.lease_until_ms, c.ended_at_ms,
      c.result.data(), c.result.size()};
}

// The write options a C caller gave (NULL: defaults), as the C++ API's.
struct WriteOpts {
  std::string_view affinity;
  int64_t event_time_ms = tally::kEventTimeNow;
  bool saturate = false;
};
Status ToWriteOpts(const tally_write_options* o, WriteOpts* out) {
  if (o == nullptr) return Status::OK();
  out->event_time_ms = o->event_time_ms;
  out->saturate = o->saturate != 0;
  return Bytes(o->affinity_key, o->affinity_key_len, "affinity_key",
               &out->affinity);
}
tally::IncrementOptions PlainOpts(const WriteOpts& w) {
  return tally::IncrementOptions{w.affinity, w.event_time_ms, w.saturate};
}
tally::OnceOptions OnceOpts(const WriteOpts& w) {
  return tally::OnceOptions{w.event_time_ms, w.affinity, w.saturate};
}

// `items`, converted, into the caller's out[0..capacity), with *count the
// number there are (also when the room is short: InvalidArgument naming
// `out_name` and the `what` it holds).
template <typename T, typename Out, typename Convert>
Status CopyOut(const std::vector<T>& items, Out* out, size_t capacity,
               size_t* count, const char* out_name, const char* what,
               Convert&& convert) {
  *count = items.size();
  if (!items.empty() && (out == nullptr || capacity < items.size())) {
    return Status::InvalidArgument(
        std::string(out_name) + " has room for " + std::to_string(capacity) +
        " " + what + ", there are " + std::to_string(items.size()));
  }
  for (size_t i = 0; i < items.size(); ++i) out[i] = convert(items[i]);
  return Status::OK();
}

// A list's item i into *out (zeroed and 0 beyond the list).
template <typename List, typename Out, typename Fill>
int GetItem(const List* list, size_t i, Out* out, Fill&& fill) {
  if (out == nullptr) return 0;
  *out = Out{};
  if (list == nullptr || i >= list->items.size()) return 0;
  fill(list->items[i], out);
  return 1;
}

template <typename List>
size_t CountOf(const List* list) {
  return list == nullptr ? 0 : list->items.size();
}

}  // namespace

// Every function below was declared extern "C" by tally/c.h, and keeps that
// linkage here.

// ---- codes, names, version, memory ----

const char* tally_code_name(int code) {
  switch (code) {
    case TALLY_OK:
      return "OK";
    case TALLY_NOT_FOUND:
      return "NotFound";
    case TALLY_INVALID_ARGUMENT:
      return "InvalidArgument";
    case TALLY_CORRUPTION:
      return "Corruption";
    case TALLY_IO_ERROR:
      return "IOError";
    case TALLY_OUT_OF_RANGE:
      return "OutOfRange";
    case TALLY_BUSY:
      return "Busy";
    case TALLY_ALREADY_EXISTS:
      return "AlreadyExists";
    case TALLY_NOT_SUPPORTED:
      return "NotSupported";
  }
  return "unknown";
}

const char* tally_version(void) { return TALLY_VERSION_STRING; }
int tally_version_number(void) {
  return TALLY_VERSION_MAJOR * 1000000 + TALLY_VERSION_MINOR * 1000 +
         TALLY_VERSION_PATCH;
}
const char* tally_storage_engine_version(void) {
  return tally::StorageEngineVersion();
}
void tally_free(void* ptr) { std::free(ptr); }

const char* tally_outcome_name(int outcome) {
  if (outcome < TALLY_APPLIED || outcome > TALLY_REFUSED) return "unknown";
  return tally::OutcomeName(static_cast<tally::Outcome>(outcome));
}
const char* tally_hold_state_name(int state) {
  if (state < TALLY_HOLD_HELD || state > TALLY_HOLD_REFUSED) return "unknown";
  return tally::HoldStateName(static_cast<tally::HoldState>(state));
}
const char* tally_claim_state_name(int state) {
  if (state < TALLY_CLAIM_HELD || state > TALLY_CLAIM_DONE) return "unknown";
  return tally::ClaimStateName(static_cast<tally::ClaimState>(state));
}
const char* tally_claim_answer_name(int answer) {
  if (answer < TALLY_ANSWER_ACQUIRED || answer > TALLY_ANSWER_STALE_TOKEN) {
    return "unknown";
  }
  return tally::ClaimAnswerName(static_cast<tally::ClaimAnswer>(answer));
}

// ---- options and opening ----

tally_options* tally_options_create(void) { return new tally_options; }
void tally_options_destroy(tally_options* options) { delete options; }
void tally_options_set_create_if_missing(tally_options* o, int value) {
  if (o != nullptr) o->options.create_if_missing = value != 0;
}
void tally_options_set_read_only(tally_options* o, int value) {
  if (o != nullptr) o->options.read_only = value != 0;
}
void tally_options_set_reads(tally_options* o, uint32_t reads) {
  if (o != nullptr) o->options.reads = reads;
}
void tally_options_set_sync(tally_options* o, int value) {
  if (o != nullptr) o->options.sync = value != 0;
}
void tally_options_set_block_cache_bytes(tally_options* o, size_t bytes) {
  if (o != nullptr) o->options.block_cache_bytes = bytes;
}
void tally_options_set_write_buffer_bytes(tally_options* o, size_t bytes) {
  if (o != nullptr) o->options.write_buffer_bytes = bytes;
}
void tally_options_set_max_wal_bytes(tally_options* o, uint64_t bytes) {
  if (o != nullptr) o->options.max_wal_bytes = bytes;
}
void tally_options_set_rollup_interval_ms(tally_options* o, uint32_t ms) {
  if (o != nullptr) o->options.rollup_interval_ms = ms;
}
void tally_options_set_group_commit_max_delay_us(tally_options* o,
                                                 uint32_t us) {
  if (o != nullptr) o->options.group_commit_max_delay_us = us;
}
void tally_options_set_max_pending_operands(tally_options* o, size_t value) {
  if (o != nullptr) o->options.max_pending_operands = value;
}
void tally_options_set_event_lock_stripes(tally_options* o, uint32_t value) {
  if (o != nullptr) o->options.event_lock_stripes = value;
}
void tally_options_set_stats_publish_interval_ms(tally_options* o,
                                                 uint32_t value) {
  if (o != nullptr) o->options.stats_publish_interval_ms = value;
}
void tally_options_set_expiry_sweep_seconds(tally_options* o, uint64_t value) {
  if (o != nullptr) o->options.expiry_sweep_seconds = value;
}
void tally_options_set_outbox_max_entries(tally_options* o, uint64_t value) {
  if (o != nullptr) o->options.outbox_max_entries = value;
}
void tally_options_set_group_commit_max_bytes(tally_options* o, size_t value) {
  if (o != nullptr) o->options.group_commit_max_bytes = value;
}
void tally_options_set_group_commit_max_ops(tally_options* o, size_t value) {
  if (o != nullptr) o->options.group_commit_max_ops = value;
}
void tally_options_set_salvage_wal(tally_options* o, int value) {
  if (o != nullptr) o->options.salvage_wal = value != 0;
}
void tally_options_set_clock(tally_options* o, int64_t (*now_ms)(void* ctx),
                             void* ctx) {
  if (o == nullptr) return;
  o->clock.now_ms = now_ms;
  o->clock.ctx = ctx;
}

tally_code tally_open(const tally_options* options, const char* target,
                      tally_db** db, char** errmsg) {
  return Run(Need({{"target", target}, {"db", db}}), errmsg, [&] {
    auto handle = std::make_unique<tally_db>();
    tally::Options o = options != nullptr ? options->options : tally::Options();
    if (options != nullptr && options->clock.now_ms != nullptr) {
      handle->clock.now_ms = options->clock.now_ms;
      handle->clock.ctx = options->clock.ctx;
      o.clock = &handle->clock;
    }
    Status s = tally::Db::Open(o, target, &handle->db);
    *db = s.ok() ? handle.release() : nullptr;
    return s;
  });
}

void tally_close(tally_db* db) { delete db; }

// ---- counters ----

void tally_counter_spec_init(tally_counter_spec* spec) {
  if (spec == nullptr) return;
  *spec = tally_counter_spec{};
  spec->shards = tally::CounterSpec().shards;
}

tally_code tally_create_counter(tally_db* db, const char* name, size_t name_len,
                                const tally_counter_spec* spec, char** errmsg) {
  std::string_view n;
  return Run(All({CheckDb(db), Need({{"spec", spec}}),
                  Bytes(name, name_len, "name", &n)}),
             errmsg, [&] {
               tally::CounterSpec s;
               Status st = ToSpec(*spec, &s);
               return st.ok() ? db->db->CreateCounter(n, s) : st;
             });
}

tally_code tally_describe_counter(tally_db* db, const char* name,
                                  size_t name_len, tally_counter_info* info,
                                  char** errmsg) {
  std::string_view n;
  return Run(All({CheckDb(db), Need({{"info", info}}),
                  Bytes(name, name_len, "name", &n)}),
             errmsg, [&] {
               auto r = db->db->DescribeCounter(n);
               if (r.ok()) FromInfo(*r, /*with_name=*/false, info);
               return r.status();
             });
}

tally_code tally_list_counters(tally_db* db, tally_counter_list** list,
                               char** errmsg) {
  return Run(All({CheckDb(db), Need({{"list", list}})}), errmsg, [&] {
    auto r = db->db->ListCounters();
    if (r.ok()) *list = new tally_counter_list{std::move(r).value()};
    return r.status();
  });
}
size_t tally_counter_list_count(const tally_counter_list* list) {
  return CountOf(list);
}
int tally_counter_list_get(const tally_counter_list* list, size_t i,
                           tally_counter_info* out) {
  return GetItem(list, i, out, [](const tally::CounterInfo& c, auto* o) {
    FromInfo(c, /*with_name=*/true, o);
  });
}
void tally_counter_list_destroy(tally_counter_list* list) { delete list; }

tally_code tally_delete_counter(tally_db* db, const char* name, size_t name_len,
                                char** errmsg) {
  std::string_view n;
  return Run(All({CheckDb(db), Bytes(name, name_len, "name", &n)}), errmsg,
             [&] { return db->db->DeleteCounter(n); });
}

// ---- writes ----

void tally_write_options_init(tally_write_options* options) {
  if (options == nullptr) return;
  *options = tally_write_options{};
  options->event_time_ms = TALLY_EVENT_TIME_NOW;
}

tally_code tally_increment(tally_db* db, const char* counter,
                           size_t counter_len, const char* key, size_t key_len,
                           int64_t delta, const tally_write_options* options,
                           tally_increment_result* result, char** errmsg) {
  Ref ref;
  WriteOpts w;
  return Run(All({CheckDb(db), Need({{"result", result}}),
                  MakeRef(counter, counter_len, key, key_len, &ref),
                  ToWriteOpts(options, &w)}),
             errmsg, [&] {
               auto r = db->db->Increment(ref.ref(), delta, PlainOpts(w));
               if (r.ok()) *result = FromResult(*r);
               return r.status();
             });
}

tally_code tally_increment_once(tally_db* db, const char* counter,
                                size_t counter_len, const char* key,
                                size_t key_len, const char* event_id,
                                size_t event_id_len, int64_t delta,
                                const tally_write_options* options,
                                tally_increment_result* result, char** errmsg) {
  Ref ref;
  WriteOpts w;
  std::string_view id;
  return Run(All({CheckDb(db), Need({{"result", result}}),
                  MakeRef(counter, counter_len, key, key_len, &ref),
                  Bytes(event_id, event_id_len, "event_id", &id),
                  ToWriteOpts(options, &w)}),
             errmsg, [&] {
               auto r =
                   db->db->IncrementOnce(ref.ref(), id, delta, OnceOpts(w));
               if (r.ok()) *result = FromResult(*r);
               return r.status();
             });
}

tally_code tally_reset(tally_db* db, const char* counter, size_t counter_len,
                       const char* key, size_t key_len, const char* reset_id,
                       size_t reset_id_len, int64_t value,
                       const tally_write_options* options,
                       tally_increment_result* result, char** errmsg) {
  Ref ref;
  WriteOpts w;
  std::string_view id;
  return Run(All({CheckDb(db), Need({{"result", result}}),
                  MakeRef(counter, counter_len, key, key_len, &ref),
                  Bytes(reset_id, reset_id_len, "reset_id", &id),
                  ToWriteOpts(options, &w)}),
             errmsg, [&] {
               if (!w.affinity.empty() || w.saturate) {
                 return Status::InvalidArgument(
                     "a reset takes an event time only, not an affinity_key "
                     "or saturate");
               }
               auto r = db->db->Reset(ref.ref(), id, value,
                                      tally::ResetOptions{w.event_time_ms});
               if (r.ok()) *result = FromResult(*r);
               return r.status();
             });
}

tally_batch* tally_batch_create(void) { return new tally_batch; }
void tally_batch_destroy(tally_batch* batch) { delete batch; }
void tally_batch_clear(tally_batch* batch) {
  if (batch != nullptr) batch->batch.Clear();
}
size_t tally_batch_count(const tally_batch* batch) {
  return batch == nullptr ? 0 : batch->batch.size();
}

tally_code tally_batch_add(tally_batch* batch, const char* counter,
                           size_t counter_len, const char* key, size_t key_len,
                           int64_t delta, const tally_write_options* options,
                           char** errmsg) {
  Ref ref;
  WriteOpts w;
  return Run(All({Need({{"batch", batch}}),
                  MakeRef(counter, counter_len, key, key_len, &ref),
                  ToWriteOpts(options, &w)}),
             errmsg, [&] {
               batch->batch.Add(ref.ref(), delta, PlainOpts(w));
               return Status::OK();
             });
}

tally_code tally_batch_add_once(tally_batch* batch, const char* counter,
                                size_t counter_len, const char* key,
                                size_t key_len, const char* event_id,
                                size_t event_id_len, int64_t delta,
                                const tally_write_options* options,
                                char** errmsg) {
  Ref ref;
  WriteOpts w;
  std::string_view id;
  return Run(All({Need({{"batch", batch}}),
                  MakeRef(counter, counter_len, key, key_len, &ref),
                  Bytes(event_id, event_id_len, "event_id", &id),
                  ToWriteOpts(options, &w)}),
             errmsg, [&] {
               batch->batch.AddOnce(ref.ref(), id, delta, OnceOpts(w));
               return Status::OK();
             });
}

tally_code tally_apply(tally_db* db, const tally_batch* batch,
                       tally_increment_result* results, size_t results_len,
                       char** errmsg) {
  return Run(All({CheckDb(db), Need({{"batch", batch}})}), errmsg, [&] {
    const size_t n = batch->batch.size();
    if (results == nullptr ? results_len != 0 : results_len < n) {
      return Status::InvalidArgument(
          "results has room for " + std::to_string(results_len) +
          " answers (results " + (results ? "set" : "NULL") +
          "), the batch has " + std::to_string(n) +
          " operations: give room for all or NULL and 0");
    }
    std::vector<tally::IncrementResult> answers;
    Status s = db->db->Apply(batch->batch, &answers);
    if (s.ok() && results != nullptr) {
      for (size_t i = 0; i < answers.size(); ++i) {
        results[i] = FromResult(answers[i]);
      }
    }
    return s;
  });
}

// ---- reads ----

tally_code tally_read_exact(tally_db* db, const char* counter,
                            size_t counter_len, const char* key, size_t key_len,
                            int64_t* value, char** errmsg) {
  Ref ref;
  return Run(All({CheckDb(db), Need({{"value", value}}),
                  MakeRef(counter, counter_len, key, key_len, &ref)}),
             errmsg, [&] {
               auto r = db->db->ReadExact(ref.ref());
               if (r.ok()) *value = *r;
               return r.status();
             });
}

tally_code tally_read_range(tally_db* db, const char* counter,
                            size_t counter_len, const char* key, size_t key_len,
                            int64_t from_ms, int64_t to_ms, int64_t* value,
                            char** errmsg) {
  Ref ref;
  return Run(All({CheckDb(db), Need({{"value", value}}),
                  MakeRef(counter, counter_len, key, key_len, &ref)}),
             errmsg, [&] {
               auto r = db->db->ReadRange(ref.ref(), from_ms, to_ms);
               if (r.ok()) *value = *r;
               return r.status();
             });
}

tally_code tally_shard_counts(tally_db* db, const char* counter,
                              size_t counter_len, const char* key,
                              size_t key_len, int64_t* values, size_t capacity,
                              size_t* count, char** errmsg) {
  Ref ref;
  return Run(All({CheckDb(db), Need({{"count", count}}),
                  MakeRef(counter, counter_len, key, key_len, &ref)}),
             errmsg, [&] {
               auto r = db->db->ShardCounts(ref.ref());
               if (!r.ok()) return r.status();
               return CopyOut(*r, values, capacity, count, "values", "shards",
                              [](int64_t v) { return v; });
             });
}

tally_code tally_read_keys(tally_db* db, const char* counter,
                           size_t counter_len, const char* const* keys,
                           const size_t* key_lens, size_t n, int64_t* values,
                           char** errmsg) {
  std::string_view c;
  return Run(All({CheckDb(db), Bytes(counter, counter_len, "counter", &c),
                  n == 0 ? Status::OK()
                         : Need({{"keys", keys},
                                 {"key_lens", key_lens},
                                 {"values", values}})}),
             errmsg, [&] {
               std::vector<std::string_view> views(n);
               for (size_t i = 0; i < n; ++i) {
                 const std::string what = "keys[" + std::to_string(i) + "]";
                 Status s =
                     Bytes(keys[i], key_lens[i], what.c_str(), &views[i]);
                 if (!s.ok()) return s;
               }
               auto r = db->db->ReadKeys(c, views);
               if (r.ok()) std::memcpy(values, r->data(), n * sizeof(int64_t));
               return r.status();
             });
}

tally_code tally_read_cached(tally_db* db, const char* counter,
                             size_t counter_len, tally_cached_value* value,
                             char** errmsg) {
  std::string_view c;
  return Run(All({CheckDb(db), Need({{"value", value}}),
                  Bytes(counter, counter_len, "counter", &c)}),
             errmsg, [&] {
               auto r = db->db->ReadCached(c);
               if (r.ok()) {
                 *value = tally_cached_value{r->value, r->as_of_ms, r->lag_ms,
                                             r->lag_increments,
                                             r->lag_increments_known};
               }
               return r.status();
             });
}

tally_code tally_rollup_now(tally_db* db, const char* counter,
                            size_t counter_len, char** errmsg) {
  std::string_view c;
  return Run(All({CheckDb(db), Bytes(counter, counter_len, "counter", &c)}),
             errmsg, [&] { return db->db->RollupNow(c); });
}

tally_code tally_refresh(tally_db* db, char** errmsg) {
  return Run(CheckDb(db), errmsg, [&] { return db->db->Refresh(); });
}

tally_code tally_read_quota(tally_db* db, const char* counter,
                            size_t counter_len, const char* key, size_t key_len,
                            tally_quota_state* state, char** errmsg) {
  Ref ref;
  return Run(All({CheckDb(db), Need({{"state", state}}),
                  MakeRef(counter, counter_len, key, key_len, &ref)}),
             errmsg, [&] {
               auto r = db->db->ReadQuota(ref.ref());
               if (r.ok()) {
                 *state = tally_quota_state{
                     r->used, r->remaining, r->window_start_ms,
                     r->window_ends_ms, r->previous_used};
               }
               return r.status();
             });
}

// ---- keyed counters ----

size_t tally_key_list_count(const tally_key_list* list) {
  return CountOf(list);
}
int tally_key_list_get(const tally_key_list* list, size_t i,
                       tally_key_value* out) {
  return GetItem(list, i, out, [](const tally::KeyValue& k, auto* o) {
    *o = tally_key_value{k.key.data(), k.key.size(), k.value, k.out_of_range};
  });
}
void tally_key_list_destroy(tally_key_list* list) { delete list; }

tally_code tally_list_keys(tally_db* db, const char* counter,
                           size_t counter_len, const char* prefix,
                           size_t prefix_len, const char* start_after,
                           size_t start_after_len, size_t limit,
                           tally_key_list** list, char** errmsg) {
  std::string_view c, p, after;
  return Run(All({CheckDb(db), Need({{"list", list}}),
                  Bytes(counter, counter_len, "counter", &c),
                  Bytes(prefix, prefix_len, "prefix", &p),
                  Bytes(start_after, start_after_len, "start_after", &after)}),
             errmsg, [&] {
               tally::ListKeysOptions o;
               o.prefix = std::string(p);
               o.start_after = std::string(after);
               o.limit = limit;
               auto r = db->db->ListKeys(c, o);
               if (r.ok()) *list = new tally_key_list{std::move(r).value(), {}};
               return r.status();
             });
}

tally_code tally_top_keys(tally_db* db, const char* counter, size_t counter_len,
                          size_t n, int exact, tally_key_list** list,
                          tally_top_keys_info* info, char** errmsg) {
  std::string_view c;
  return Run(All({CheckDb(db), Need({{"list", list}, {"info", info}}),
                  Bytes(counter, counter_len, "counter", &c)}),
             errmsg, [&] {
               tally::TopKeysOptions o;
               o.exact = exact != 0;
               auto r = db->db->TopKeys(c, n, o);
               if (!r.ok()) return r.status();
               tally::TopKeysResult top = std::move(r).value();
               auto* l = new tally_key_list{
                   std::move(top.keys), std::move(top.first_out_of_range_key)};
               *info = tally_top_keys_info{top.key_count,
                                           top.total,
                                           top.out_of_range_keys,
                                           l->first_out_of_range_key.data(),
                                           l->first_out_of_range_key.size(),
                                           top.as_of_ms,
                                           top.lag_ms,
                                           top.exact};
               *list = l;
               return Status::OK();
             });
}

tally_code tally_delete_key(tally_db* db, const char* counter,
                            size_t counter_len, const char* key, size_t key_len,
                            char** errmsg) {
  Ref ref;
  return Run(
      All({CheckDb(db), MakeRef(counter, counter_len, key, key_len, &ref)}),
      errmsg, [&] { return db->db->DeleteKey(ref.counter, ref.key); });
}

// ---- markers ----

size_t tally_marker_list_count(const tally_marker_list* list) {
  return CountOf(list);
}
int tally_marker_list_get(const tally_marker_list* list, size_t i,
                          tally_marker_info* out) {
  return GetItem(list, i, out, [](const tally::MarkerInfo& m, auto* o) {
    o->event_id = m.event_id.data();
    o->event_id_len = m.event_id.size();
    o->key = m.key.data();
    o->key_len = m.key.size();
    o->shard = m.shard;
    o->delta = m.delta;
    o->created_at_ms = m.created_at_ms;
    o->expires_at_ms = m.expires_at_ms;
    o->pinned = m.pinned;
    o->strict = m.strict;
    o->refused = m.refused;
    o->asked = m.asked;
    o->value = m.value;
    o->window_ends_ms = m.window_ends_ms;
    o->remaining = m.remaining;
    o->reset = m.reset;
    o->remaining_kept = m.remaining_kept;
  });
}
void tally_marker_list_destroy(tally_marker_list* list) { delete list; }

tally_code tally_count_markers(tally_db* db, const char* counter,
                               size_t counter_len, const char* key,
                               size_t key_len, uint64_t* count, char** errmsg) {
  Ref ref;
  return Run(All({CheckDb(db), Need({{"count", count}}),
                  MakeRef(counter, counter_len, key, key_len, &ref)}),
             errmsg, [&] {
               auto r = db->db->CountMarkers(ref.ref());
               if (r.ok()) *count = *r;
               return r.status();
             });
}

tally_code tally_list_markers(tally_db* db, const char* counter,
                              size_t counter_len, const char* key,
                              size_t key_len, size_t limit, int64_t since_ms,
                              const char* start_after, size_t start_after_len,
                              tally_marker_list** list, char** errmsg) {
  Ref ref;
  std::string_view after;
  return Run(All({CheckDb(db), Need({{"list", list}}),
                  MakeRef(counter, counter_len, key, key_len, &ref),
                  Bytes(start_after, start_after_len, "start_after", &after)}),
             errmsg, [&] {
               tally::ListMarkersOptions o;
               o.limit = limit;
               o.since_ms = since_ms;
               o.start_after = std::string(after);
               auto r = db->db->ListMarkers(ref.ref(), o);
               if (r.ok()) *list = new tally_marker_list{std::move(r).value()};
               return r.status();
             });
}

tally_code tally_get_marker(tally_db* db, const char* counter,
                            size_t counter_len, const char* key, size_t key_len,
                            const char* event_id, size_t event_id_len,
                            tally_marker_list** list, char** errmsg) {
  Ref ref;
  std::string_view id;
  return Run(All({CheckDb(db), Need({{"list", list}}),
                  MakeRef(counter, counter_len, key, key_len, &ref),
                  Bytes(event_id, event_id_len, "event_id", &id)}),
             errmsg, [&] {
               auto r = db->db->GetMarker(ref.ref(), id);
               if (r.ok())
                 *list = new tally_marker_list{{std::move(r).value()}};
               return r.status();
             });
}

// ---- reservations ----

namespace {

// The three reservation calls that answer a ReservationResult.
template <typename Call>
tally_code Reservation(tally_db* db, const char* counter, size_t counter_len,
                       const char* key, size_t key_len, const char* rid,
                       size_t rid_len, tally_reservation_result* result,
                       char** errmsg, Call&& call) {
  Ref ref;
  std::string_view id;
  return Run(All({CheckDb(db), Need({{"result", result}}),
                  MakeRef(counter, counter_len, key, key_len, &ref),
                  Bytes(rid, rid_len, "reservation_id", &id)}),
             errmsg, [&] {
               tally::Result<tally::ReservationResult> r = call(ref.ref(), id);
               if (r.ok()) *result = FromReservation(*r);
               return r.status();
             });
}

}  // namespace

tally_code tally_reserve(tally_db* db, const char* counter, size_t counter_len,
                         const char* key, size_t key_len,
                         const char* reservation_id, size_t reservation_id_len,
                         int64_t units, int64_t hold_for_ms,
                         tally_reservation_result* result, char** errmsg) {
  return Reservation(db, counter, counter_len, key, key_len, reservation_id,
                     reservation_id_len, result, errmsg,
                     [&](tally::CounterRef ref, std::string_view id) {
                       return db->db->Reserve(ref, id, units, hold_for_ms);
                     });
}

tally_code tally_commit_reservation(tally_db* db, const char* counter,
                                    size_t counter_len, const char* key,
                                    size_t key_len, const char* reservation_id,
                                    size_t reservation_id_len,
                                    tally_reservation_result* result,
                                    char** errmsg) {
  return Reservation(db, counter, counter_len, key, key_len, reservation_id,
                     reservation_id_len, result, errmsg,
                     [&](tally::CounterRef ref, std::string_view id) {
                       return db->db->CommitReservation(ref, id);
                     });
}

tally_code tally_release_reservation(tally_db* db, const char* counter,
                                     size_t counter_len, const char* key,
                                     size_t key_len, const char* reservation_id,
                                     size_t reservation_id_len,
                                     tally_reservation_result* result,
                                     char** errmsg) {
  return Reservation(db, counter, counter_len, key, key_len, reservation_id,
                     reservation_id_len, result, errmsg,
                     [&](tally::CounterRef ref, std::string_view id) {
                       return db->db->ReleaseReservation(ref, id);
                     });
}

tally_code tally_get_reservation(tally_db* db, const char* counter,
                                 size_t counter_len, const char* key,
                                 size_t key_len, const char* reservation_id,
                                 size_t reservation_id_len,
                                 tally_reservation_info* info, char** errmsg) {
  Ref ref;
  std::string_view id;
  return Run(
      All({CheckDb(db), Need({{"info", info}}),
           MakeRef(counter, counter_len, key, key_len, &ref),
           Bytes(reservation_id, reservation_id_len, "reservation_id", &id)}),
      errmsg, [&] {
        auto r = db->db->GetReservation(ref.ref(), id);
        if (r.ok()) {
          *info = tally_reservation_info{static_cast<int>(r->state), r->units,
                                         r->created_at_ms, r->expires_at_ms,
                                         r->closed_at_ms};
        }
        return r.status();
      });
}

tally_code tally_read_held(tally_db* db, const char* counter,
                           size_t counter_len, const char* key, size_t key_len,
                           tally_held_value* value, char** errmsg) {
  Ref ref;
  return Run(All({CheckDb(db), Need({{"value", value}}),
                  MakeRef(counter, counter_len, key, key_len, &ref)}),
             errmsg, [&] {
               auto r = db->db->ReadHeld(ref.ref());
               if (r.ok()) {
                 *value = tally_held_value{r->value, r->held, r->available,
                                           r->open, r->next_expiry_ms};
               }
               return r.status();
             });
}

// ---- claims ----

int tally_claim_result_answer(const tally_claim_result* result) {
  return result == nullptr ? -1 : static_cast<int>(result->result.answer);
}
int tally_claim_result_repeated(const tally_claim_result* result) {
  return result != nullptr && result->result.repeated;
}
void tally_claim_result_claim(const tally_claim_result* result,
                              tally_claim_info* out) {
  if (out == nullptr) return;
  *out = tally_claim_info{};
  if (result != nullptr) FromClaim(result->result.claim, out);
}
size_t tally_claim_result_counted_count(const tally_claim_result* result) {
  return result == nullptr ? 0 : result->result.counted.size();
}
int tally_claim_result_counted(const tally_claim_result* result, size_t i,
                               tally_increment_result* out) {
  if (out == nullptr) return 0;
  *out = tally_increment_result{};
  if (result == nullptr || i >= result->result.counted.size()) return 0;
  *out = FromResult(result->result.counted[i]);
  return 1;
}
void tally_claim_result_destroy(tally_claim_result* result) { delete result; }

namespace {

Status KeepClaim(tally::Result<tally::ClaimResult> r,
                 tally_claim_result** out) {
  if (r.ok()) *out = new tally_claim_result{std::move(r).value()};
  return r.status();
}

}  // namespace

tally_code tally_claim(tally_db* db, const char* key, size_t key_len,
                       const char* holder, size_t holder_len, int64_t lease_ms,
                       tally_claim_result** result, char** errmsg) {
  std::string_view k, h;
  return Run(All({CheckDb(db), Need({{"result", result}}),
                  Bytes(key, key_len, "key", &k),
                  Bytes(holder, holder_len, "holder", &h)}),
             errmsg,
             [&] { return KeepClaim(db->db->Claim(k, h, lease_ms), result); });
}

tally_code tally_complete_claim(tally_db* db, const char* key, size_t key_len,
                                uint64_t token, const char* result_text,
                                size_t result_text_len,
                                const tally_batch* counts,
                                tally_claim_result** result, char** errmsg) {
  std::string_view k, text;
  return Run(All({CheckDb(db), Need({{"result", result}}),
                  Bytes(key, key_len, "key", &k),
                  Bytes(result_text, result_text_len, "result_text", &text)}),
             errmsg, [&] {
               const tally::Batch none;
               return KeepClaim(
                   db->db->CompleteClaim(k, token, text,
                                         counts ? counts->batch : none),
                   result);
             });
}

tally_code tally_release_claim(tally_db* db, const char* key, size_t key_len,
                               uint64_t token, tally_claim_result** result,
                               char** errmsg) {
  std::string_view k;
  return Run(All({CheckDb(db), Need({{"result", result}}),
                  Bytes(key, key_len, "key", &k)}),
             errmsg,
             [&] { return KeepClaim(db->db->ReleaseClaim(k, token), result); });
}

size_t tally_claim_list_count(const tally_claim_list* list) {
  return CountOf(list);
}
int tally_claim_list_get(const tally_claim_list* list, size_t i,
                         tally_claim_info* out) {
  return GetItem(list, i, out,
                 [](const tally::ClaimInfo& c, auto* o) { FromClaim(c, o); });
}
void tally_claim_list_destroy(tally_claim_list* list) { delete list; }

tally_code tally_get_claim(tally_db* db, const char* key, size_t key_len,
                           tally_claim_list** list, char** errmsg) {
  std::string_view k;
  return Run(All({CheckDb(db), Need({{"list", list}}),
                  Bytes(key, key_len, "key", &k)}),
             errmsg, [&] {
               auto r = db->db->GetClaim(k);
               if (r.ok()) *list = new tally_claim_list{{std::move(r).value()}};
               return r.status();
             });
}

tally_code tally_list_claims(tally_db* db, int filter, size_t limit,
                             const char* start_after, size_t start_after_len,
                             tally_claim_list** list, char** errmsg) {
  std::string_view after;
  return Run(
      All({CheckDb(db), Need({{"list", list}}),
           Bytes(start_after, start_after_len, "start_after", &after)}),
      errmsg, [&] {
        if (filter < TALLY_CLAIMS_ALL || filter > TALLY_CLAIMS_DONE) {
          return Status::InvalidArgument("filter " + std::to_string(filter) +
                                         " is not a TALLY_CLAIMS_* value");
        }
        tally::ListClaimsOptions o;
        o.filter = static_cast<tally::ClaimFilter>(filter);
        o.limit = limit;
        o.start_after = std::string(after);
        auto r = db->db->ListClaims(o);
        if (r.ok()) *list = new tally_claim_list{std::move(r).value()};
        return r.status();
      });
}

// ---- the outbox and sync ----

size_t tally_outbox_list_count(const tally_outbox_list* list) {
  return CountOf(list);
}
int tally_outbox_list_get(const tally_outbox_list* list, size_t i,
                          tally_outbox_entry* out) {
  return GetItem(list, i, out, [](const tally::OutboxEntry& e, auto* o) {
    *o = tally_outbox_entry{
        e.seq,        e.counter.data(),  e.counter.size(),  e.key.data(),
        e.key.size(), e.event_id.data(), e.event_id.size(), e.delta,
        e.time_ms,    e.origin.data(),   e.origin.size(),   e.origin_seq};
  });
}
void tally_outbox_list_destroy(tally_outbox_list* list) { delete list; }

tally_code tally_read_outbox(tally_db* db, uint64_t after_seq, size_t limit,
                             tally_outbox_list** list, char** errmsg) {
  return Run(All({CheckDb(db), Need({{"list", list}})}), errmsg, [&] {
    auto r = tally::ReadOutbox(*db->db, after_seq, limit);
    if (r.ok()) *list = new tally_outbox_list{std::move(r).value()};
    return r.status();
  });
}

tally_code tally_ack_outbox(tally_db* db, uint64_t through_seq, char** errmsg) {
  return Run(CheckDb(db), errmsg,
             [&] { return tally::AckOutbox(*db->db, through_seq); });
}

tally_code tally_get_outbox_status(tally_db* db, tally_outbox_status* status,
                                   char** errmsg) {
  return Run(All({CheckDb(db), Need({{"status", status}})}), errmsg, [&] {
    auto r = tally::GetOutboxStatus(*db->db);
    if (r.ok()) {
      *status = tally_outbox_status{r->entries, r->acked_through, r->last_seq,
                                    r->oldest_time_ms, r->age_ms};
    }
    return r.status();
  });
}

tally_code tally_database_id(tally_db* db, char** id, char** errmsg) {
  return Run(All({CheckDb(db), Need({{"id", id}})}), errmsg, [&] {
    auto r = tally::DatabaseId(*db->db);
    if (r.ok()) *id = CopyString(*r);
    return r.status();
  });
}

tally_code tally_sync_outbox(tally_db* edge, tally_db* hub,
                             size_t batch_entries, int shard_by_edge,
                             tally_sync_report* report, char** errmsg) {
  return Run(
      All({edge == nullptr || edge->db == nullptr ? IsNull("edge")
                                                  : Status::OK(),
           hub == nullptr || hub->db == nullptr ? IsNull("hub") : Status::OK(),
           Need({{"report", report}})}),
      errmsg, [&] {
        tally::SyncOptions o;
        o.batch_entries = batch_entries;
        o.shard_by_edge = shard_by_edge != 0;
        tally::SyncReport r;
        Status s = tally::SyncOutbox(edge->db.get(), hub->db.get(), o, &r);
        *report = tally_sync_report{r.entries, r.applied, r.duplicates,
                                    r.batches, r.acked_through};
        return s;
      });
}

// ---- administration, checkpoints, backups ----

tally_code tally_verify(tally_db* db, tally_verify_report* report,
                        char** problems, char** errmsg) {
  if (problems != nullptr) *problems = nullptr;
  return Run(All({CheckDb(db), Need({{"report", report}})}), errmsg, [&] {
    tally::VerifyReport r;
    Status s = tally::Verify(*db->db, &r);
    *report = tally_verify_report{
        r.counters,      r.shard_keys,   r.markers,         r.sums_compared,
        r.keys_compared, r.reservations, r.problems.size(), r.problems_dropped};
    if (problems != nullptr && !r.problems.empty()) {
      std::string all;
      for (const std::string& p : r.problems) all += p + "\n";
      *problems = CopyString(all);
    }
    return s;
  });
}

tally_code tally_compact(tally_db* db, char** errmsg) {
  return Run(CheckDb(db), errmsg, [&] { return tally::Compact(*db->db); });
}

tally_code tally_get_stats(tally_db* db, tally_engine_stats* stats,
                           char** errmsg) {
  return Run(All({CheckDb(db), Need({{"stats", stats}})}), errmsg, [&] {
    const tally::EngineStats e = tally::GetStats(*db->db);
    *stats = tally_engine_stats{e.applied,        e.duplicates,   e.conflicts,
                                e.outside_window, e.refused,      e.rejected,
                                e.group_commits,  e.group_members};
    return Status::OK();
  });
}

tally_code tally_checkpoint(tally_db* db, const char* dir, char** errmsg) {
  return Run(All({CheckDb(db), CheckPath(dir, "dir")}), errmsg,
             [&] { return tally::Checkpoint(*db->db, dir); });
}

namespace {
tally_backup_info FromBackup(const tally::BackupInfo& b) {
  return tally_backup_info{b.id, b.created_at_s, b.bytes, b.files};
}
}  // namespace

tally_code tally_create_backup(tally_db* db, const char* backup_dir,
                               tally_backup_info* info, char** errmsg) {
  return Run(All({CheckDb(db), CheckPath(backup_dir, "backup_dir"),
                  Need({{"info", info}})}),
             errmsg, [&] {
               auto r = tally::CreateBackup(*db->db, backup_dir);
               if (r.ok()) *info = FromBackup(*r);
               return r.status();
             });
}

tally_code tally_list_backups(const char* backup_dir, tally_backup_info* infos,
                              size_t capacity, size_t* count, char** errmsg) {
  return Run(
      All({CheckPath(backup_dir, "backup_dir"), Need({{"count", count}})}),
      errmsg, [&] {
        std::vector<tally::BackupInfo> list;
        Status s = tally::ListBackups(backup_dir, &list);
        if (!s.ok()) return s;
        return CopyOut(list, infos, capacity, count, "infos", "backups",
                       FromBackup);
      });
}

tally_code tally_verify_backup(const char* backup_dir, uint32_t id,
                               char** errmsg) {
  return Run(CheckPath(backup_dir, "backup_dir"), errmsg,
             [&] { return tally::VerifyBackup(backup_dir, id); });
}

tally_code tally_restore_backup(const char* backup_dir, uint32_t id,
                                const char* db_path, char** errmsg) {
  return Run(
      All({CheckPath(backup_dir, "backup_dir"), CheckPath(db_path, "db_path")}),
      errmsg, [&] { return tally::RestoreBackup(backup_dir, id, db_path); });
}
