// The write path: plain increments (blind merges), once-increments (marker
// check and write under one event-lock stripe) and batches.
//
// Cost of one plain increment: a shared catalog lock, one hash lookup, one
// RocksDB Write of a 12-byte key and an 8-byte operand from a reused
// thread-local WriteBatch (no allocation once warm). A once-increment adds a
// stripe mutex, one marker Get (bloom filters answer most misses) and, for a
// new event, a clock read (after the Get) and the marker Put in the same
// WriteBatch. Bucketed counters use a 20-byte key and read the clock; outbox
// counters add one entry Put and two short sequencer mutex sections; with
// Options::sync the commit goes through the group commit
// (commit/group_commit.h). A clock read is the engine clock's
// (engine/engine_clock.h): Options::clock plus one atomic load, and a
// compare-and-swap when the time moved. IncrementAsync with Options::sync
// adds a room reservation and the AsyncCommits count (three short mutex
// sections), its own WriteBatch and the queued commit with its two
// callbacks (the `written` hook is one small allocation: it keeps the
// settle accounting off the user callback's thread, see async_commits.h);
// without sync it is Increment plus the callback.

#include <rocksdb/write_batch.h>

#include <algorithm>
#include <unordered_map>

#include "engine/buckets.h"
#include "engine/coding.h"
#include "engine/db_impl.h"
#include "engine/outbox_run.h"
#include "engine/shard_picker.h"
#include "engine/validate.h"
#include "schema/records.h"
#include "tally/limits.h"
#include "util/rocks_status.h"

namespace tally::engine {
namespace {

rocksdb::Slice AsSlice(std::string_view s) { return {s.data(), s.size()}; }

// Per-thread scratch reused by every write, so the hot path does not
// allocate once warm.
struct Scratch {
  rocksdb::WriteBatch batch;
  std::string marker_key;
  std::string marker_value;
};

Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  scratch.batch.Clear();
  return scratch;
}

// Adds the counter's record with kCounterFlagPlainIncrements to the batch:
// done once per counter, by its first plain increment, so Verify knows the
// counter's shards may hold more than its markers.
rocksdb::Status AddPlainFlag(const Catalog::Entry& c, rocksdb::WriteBatch* wb,
                             std::string* value,
                             rocksdb::ColumnFamilyHandle* meta) {
  std::string key;
  Catalog::FlaggedRecord(c, &key, value);
  return wb->Put(meta, key, *value);
}

Status BatchOpError(size_t index, const Status& s) {
  return s.WithContext("batch op " + std::to_string(index));
}

Outcome CompareDelta(int64_t stored, int64_t delta) {
  return stored == delta ? Outcome::kDuplicate : Outcome::kConflict;
}

// The dedupe-window rule (docs/design.md, "Dedupe windows"), in two parts.
// RequireEventTime checks the call itself, before the marker lookup: on a
// counter with a window a once-increment must carry its event time, since
// only the time an event happened, the same in every copy, lets the engine
// tell a late redelivery (whose marker may be gone) from a new event.
Status RequireEventTime(const CounterInfo& c, int64_t event_time_ms) {
  if (c.dedupe_window_ms == 0 || event_time_ms != kEventTimeNow) {
    return Status::OK();
  }
  return Status::InvalidArgument("counter " + Quote(c.name) +
                                 " has a dedupe window of " +
                                 std::to_string(c.dedupe_window_ms) +
                                 " ms: a once-increment needs its event time");
}

// CheckWindow judges an event whose marker was not found, by `now` read
// after that lookup (a found marker answers whatever time the call claims).
// An event older than now - window is outside it. Otherwise *expires_at
// gets its marker's expiry: the later of the event time and now, plus the
// window (0 for counters that keep markers forever). A marker has expired
// once the engine's time passes expires_at; an accepted event time t has
// t + window >= now, so the marker of any event the rule still accepts has
// not expired.
void CheckWindow(const CounterInfo& c, int64_t event_time_ms, int64_t now,
                 bool* outside, int64_t* expires_at) {
  *outside = false;
  *expires_at = 0;
  if (c.dedupe_window_ms == 0) return;
  *outside = event_time_ms < now - c.dedupe_window_ms;
  if (!*outside) {
    *expires_at = std::max(event_time_ms, now) + c.dedupe_window_ms;
  }
}

// An increment's event time: the one given, else `now`.
int64_t EventTimeOr(int64_t event_time_ms, int64_t now) {
  return event_time_ms == kEventTimeNow ? now : event_time_ms;
}

// Where an increment of a counter lands in the shards family: its shard key,
// or for a bucketed counter the shard key of the bucket holding the event
// time (now when not given). Built on the stack: no allocation.
class ShardTarget {
 public:
  // The bucket of an increment of `c` (kNoBucket when not bucketed); an
  // event time in a bucket past the counter's retention is refused, since
  // the count would vanish at the next read.
  static Status BucketOf(const CounterInfo& c, int64_t event_time_ms,
                         int64_t now, int64_t* bucket) {
    *bucket = kNoBucket;
    const int64_t width = BucketWidthMs(c.bucket);
    if (width == 0) return Status::OK();
    const int64_t t = EventTimeOr(event_time_ms, now);
    *bucket = BucketStart(t, width);
    if (BucketExpired(*bucket, width, c.retention_ms, now)) {
      return Status::InvalidArgument(
          "event time " + std::to_string(t) + " ms falls in counter " +
          Quote(c.name) + "'s bucket starting " + std::to_string(*bucket) +
          " ms, past its retention of " + std::to_string(c.retention_ms) +
          " ms");
    }
    return Status::OK();
  }

  ShardTarget(uint64_t counter_id, int64_t bucket, uint32_t shard) {
    if (bucket == kNoBucket) {
      EncodeShardKey(counter_id, shard, key_);
      size_ = kShardKeyBytes;
    } else {
      EncodeBucketShardKey(counter_id, bucket, shard, key_);
      size_ = kBucketShardKeyBytes;
    }
  }
  rocksdb::Slice key() const { return {key_, size_}; }

 private:
  char key_[kBucketShardKeyBytes];
  size_t size_;
};

// Reads the clock only for plain increments that need it (buckets, outbox).
int64_t NowIfNeeded(const CounterInfo& c, const Clock* clock) {
  return c.bucket == BucketWidth::kNone && !c.outbox ? 0 : clock->NowMillis();
}

// A once-increment's shard: the hash of its event id, or, pinned, the hash
// of its affinity key (checked first).
Status OnceShard(const CounterInfo& c, uint64_t event_hash,
                 std::string_view affinity_key, uint32_t* shard) {
  if (affinity_key.empty()) {
    *shard = ShardOfHash(event_hash, c.shards);
    return Status::OK();
  }
  Status s = ValidateAffinityKey(affinity_key);
  if (s.ok()) *shard = ShardOfKey(affinity_key, c.shards);
  return s;
}

}  // namespace

Status DbImpl::PickPlainShard(const CounterInfo& c,
                              std::string_view affinity_key,
                              uint32_t* shard) const {
  if (!affinity_key.empty()) {
    Status s = ValidateAffinityKey(affinity_key);
    if (!s.ok()) return s;
    *shard = ShardOfKey(affinity_key, c.shards);
    return Status::OK();
  }
  if (c.policy == ShardPolicy::kAffinity) {
    return Status::InvalidArgument("counter " + Quote(c.name) +
                                   " uses affinity sharding: the increment "
                                   "needs an affinity key");
  }
  *shard = RandomShard(c.shards);
  return Status::OK();
}

Status DbImpl::PreparePlain(const Catalog::Reader& catalog,
                            std::string_view counter, int64_t delta,
                            const IncrementOptions& options,
                            const Catalog::Entry** c, PlainPlan* plan) {
  Status s = CheckWritable();
  if (s.ok()) s = ValidateDelta(delta);
  if (s.ok()) s = ValidateEventTime(options.event_time_ms);
  if (!s.ok()) return Reject(std::move(s));
  *c = catalog.Find(counter);
  if (*c == nullptr) return Reject(CounterNotFound(counter));
  s = PlanPlain(**c, options, plan);
  return s.ok() ? s : Reject(std::move(s));
}

Status DbImpl::PlanPlain(const Catalog::Entry& c,
                         const IncrementOptions& options, PlainPlan* plan) {
  Status s = PickPlainShard(c, options.affinity_key, &plan->shard);
  plan->now = NowIfNeeded(c, clock_);
  if (s.ok()) {
    s = ShardTarget::BucketOf(c, options.event_time_ms, plan->now,
                              &plan->bucket);
  }
  return s;
}

Status DbImpl::AddPlainMerge(const Catalog::Entry& c, const PlainPlan& plan,
                             int64_t delta, rocksdb::WriteBatch* wb,
                             std::string* scratch, bool* first_plain) {
  const ShardTarget target(c.id, plan.bucket, plan.shard);
  char value[kValueBytes];
  EncodeInt64(delta, value);
  rocksdb::Status rs =
      wb->Merge(shards_, target.key(), rocksdb::Slice(value, sizeof value));
  *first_plain = !c.plain_recorded.load(std::memory_order_acquire);
  if (rs.ok() && *first_plain) rs = AddPlainFlag(c, wb, scratch, meta_);
  return FromRocks(rs, "increment");
}

void DbImpl::Applied(const Catalog::Entry& c, bool first_plain, uint64_t n) {
  if (first_plain) c.plain_recorded.store(true, std::memory_order_release);
  c.applied.fetch_add(n, std::memory_order_relaxed);
  stats_.applied.fetch_add(n, std::memory_order_relaxed);
}

Result<IncrementResult> DbImpl::Increment(std::string_view counter,
                                          int64_t delta,
                                          const IncrementOptions& options) {
  Catalog::Reader catalog(catalog_.get());
  const Catalog::Entry* c = nullptr;
  PlainPlan plan;
  Status s = PreparePlain(catalog, counter, delta, options, &c, &plan);
  if (!s.ok()) return s;
  OutboxRun outbox(this);
  if (c->outbox) {
    s = outbox.Reserve(1, options_.outbox_max_entries);
    if (!s.ok()) return s;
  }

  Scratch& scratch = ThreadScratch();
  bool first_plain;
  s = AddPlainMerge(*c, plan, delta, &scratch.batch, &scratch.marker_value,
                    &first_plain);
  if (s.ok() && c->outbox) {
    s = AddOutboxEntry(&scratch.batch, outbox.first(), outbox.settled(), *c, {},
                       delta, EventTimeOr(options.event_time_ms, plan.now),
                       &scratch.marker_value);
  }
  if (s.ok()) s = commit_->Commit(&scratch.batch);
  if (!s.ok()) return s;
  outbox.Committed();
  Applied(*c, first_plain, 1);
  return IncrementResult{Outcome::kApplied, plan.shard};
}

Result<IncrementResult> DbImpl::StartAsync(std::string_view counter,
                                           int64_t delta,
                                           const IncrementOptions& options,
                                           AsyncStart* start) {
  Catalog::Reader catalog(catalog_.get());
  const Catalog::Entry* c = nullptr;
  PlainPlan plan;
  Status s = PreparePlain(catalog, counter, delta, options, &c, &plan);
  if (!s.ok()) return s;
  if (c->outbox) {
    return Reject(Status::NotSupported(
        "counter " + Quote(c->name) +
        " has an outbox; IncrementAsync does not write outboxes yet, use "
        "Increment"));
  }
  std::string scratch;
  s = AddPlainMerge(*c, plan, delta, &start->batch, &scratch,
                    &start->first_plain);
  if (!s.ok()) return s;
  const IncrementResult applied{Outcome::kApplied, plan.shard};
  if (!commit_->durable()) {
    // Written at once, as Increment writes, inside the shared hold.
    s = commit_->Commit(&start->batch);
    if (!s.ok()) return s;
    Applied(*c, start->first_plain, 1);
    return applied;
  }
  // Counted before the hold ends: a DeleteCounter that takes the catalog
  // next waits until this commit is written (AsyncCommits).
  async_.Begin();
  start->counter = c;
  return applied;
}

void DbImpl::IncrementAsync(std::string_view counter, int64_t delta,
                            IncrementCallback done,
                            const IncrementOptions& options) {
  // Room first, holding nothing: room comes back as callbacks return, and
  // a callback may need the catalog.
  commit::CommitPipeline::AsyncSlot slot = commit_->ReserveAsync();
  AsyncStart start;
  Result<IncrementResult> result = StartAsync(counter, delta, options, &start);
  // The catalog is released: `done` may call into the Db, and neither the
  // queueing nor the inline answers below take a lock of tally's.
  const Catalog::Entry* c = start.counter;
  if (c == nullptr) return done(result);  // refused, or written at once
  const IncrementResult applied = *result;
  commit_->CommitAsync(
      std::move(start.batch), std::move(slot),
      // On the thread that wrote the group, before any callback: `c` stays
      // valid until async_.End(), since DeleteCounter waits for it before
      // it removes an entry; nothing after End() may touch `c`.
      [this, c, first_plain = start.first_plain](const Status& st) {
        if (st.ok()) Applied(*c, first_plain, 1);
        async_.End();
      },
      // On the notifier thread, holding no lock of tally's; only values.
      [applied, done = std::move(done)](const Status& st) {
        if (st.ok()) {
          done(applied);
        } else {
          done(st);
        }
      });
}

Result<IncrementResult> DbImpl::IncrementOnce(std::string_view counter,
                                              std::string_view event_id,
                                              int64_t delta,
                                              const OnceOptions& options) {
  Status s = CheckWritable();
  if (s.ok()) s = ValidateDelta(delta);
  if (s.ok()) s = ValidateEventId(event_id);
  if (s.ok()) s = ValidateEventTime(options.event_time_ms);
  if (!s.ok()) return Reject(std::move(s));

  Catalog::Reader catalog(catalog_.get());
  const Catalog::Entry* c = catalog.Find(counter);
  if (c == nullptr) return Reject(CounterNotFound(counter));

  // The call's own arguments are checked whatever the marker says.
  const uint64_t hash = StableHash(event_id);
  const bool pinned = !options.affinity_key.empty();
  uint32_t shard = 0;
  s = OnceShard(*c, hash, options.affinity_key, &shard);
  if (s.ok()) s = RequireEventTime(*c, options.event_time_ms);
  if (!s.ok()) return Reject(std::move(s));
  Scratch& scratch = ThreadScratch();
  EncodeMarkerKey(c->id, event_id, &scratch.marker_key);

  // Check and write under one stripe: a concurrent copy of this event waits
  // here and then finds the marker. The marker is looked up first: found,
  // it answers (with the shard it holds) whatever time the call claims; not
  // found, the clock is read only now, after the lookup, so a marker
  // compaction dropped before it was judged expired at a time no later than
  // this one (docs/design.md, "Dedupe windows").
  EventLocks::Guard guard(&event_locks_, event_locks_.StripeOf(c->id, hash));
  rocksdb::ReadOptions ro;
  rocksdb::PinnableSlice found;
  rocksdb::Status rs =
      db_->Get(ro, events_, AsSlice(scratch.marker_key), &found);
  if (rs.ok()) {
    int64_t stored;
    uint32_t stored_shard;
    s = schema::DecodeMarkerDelta(found.ToStringView(), &stored, &stored_shard);
    if (!s.ok()) {
      return Status::Corruption("marker " + HexKey(scratch.marker_key) +
                                " of counter " + Quote(c->name) + ": " +
                                s.message());
    }
    const Outcome outcome = CompareDelta(stored, delta);
    (outcome == Outcome::kDuplicate ? stats_.duplicates : stats_.conflicts)
        .fetch_add(1, std::memory_order_relaxed);
    return IncrementResult{outcome, stored_shard};
  }
  if (!rs.IsNotFound()) return FromRocks(rs, "read marker");
  const int64_t now = clock_->NowMillis();
  bool outside = false;
  int64_t expires_at = 0;
  int64_t bucket = kNoBucket;
  CheckWindow(*c, options.event_time_ms, now, &outside, &expires_at);
  s = ShardTarget::BucketOf(*c, options.event_time_ms, now, &bucket);
  if (!s.ok()) return Reject(std::move(s));
  if (outside) {
    stats_.outside_window.fetch_add(1, std::memory_order_relaxed);
    return IncrementResult{Outcome::kOutsideWindow, shard};
  }
  OutboxRun outbox(this);
  if (c->outbox) {
    s = outbox.Reserve(1, options_.outbox_max_entries);
    if (s.ok()) {
      s = AddOutboxEntry(
          &scratch.batch, outbox.first(), outbox.settled(), *c, event_id, delta,
          EventTimeOr(options.event_time_ms, now), &scratch.marker_value);
    }
    if (!s.ok()) return s;
  }

  schema::EncodeMarker(event_id, c->id, shard, delta, now,
                       &scratch.marker_value, expires_at, pinned);
  const ShardTarget target(c->id, bucket, shard);
  char value[kValueBytes];
  EncodeInt64(delta, value);
  rs = scratch.batch.Put(events_, AsSlice(scratch.marker_key),
                         AsSlice(scratch.marker_value));
  if (rs.ok()) {
    rs = scratch.batch.Merge(shards_, target.key(),
                             rocksdb::Slice(value, sizeof value));
  }
  if (!rs.ok()) return FromRocks(rs, "increment once");
  s = commit_->Commit(&scratch.batch);
  if (!s.ok()) return s;
  outbox.Committed();
  Applied(*c, /*first_plain=*/false, 1);
  return IncrementResult{Outcome::kApplied, shard};
}

namespace {

// One resolved operation of a batch.
struct Planned {
  uint64_t counter_id = 0;
  const Catalog::Entry* counter = nullptr;
  uint32_t shard = 0;
  int64_t bucket = kNoBucket;
  int64_t delta = 0;
  // Once-ops only: index into the unique marker list.
  size_t marker = SIZE_MAX;
};

// One distinct (counter, event id) of a batch. A stored marker answers
// every copy; else the first copy the window and retention accept writes
// it (the winner), and later copies compare their delta with the winner's,
// as if the copies had come one after another.
struct Marker {
  std::string key;
  uint32_t stripe = 0;
  bool stored = false;
  int64_t delta = 0;   // stored: the marker's; else the winner's
  uint32_t shard = 0;  // likewise
  size_t winner = SIZE_MAX;
  int64_t expires_at = 0;  // the winner's (CheckWindow)
};

// A (counter, bucket, shard) group of applied deltas, folded into one merge
// operand.
struct Fold {
  uint64_t counter_id;
  int64_t bucket;
  uint32_t shard;
  int64_t delta;
  size_t op;  // for error messages
};

}  // namespace

Status DbImpl::Apply(const Batch& batch,
                     std::vector<IncrementResult>* results) {
  results->clear();
  Status writable = CheckWritable();
  if (!writable.ok()) return writable;
  const auto& ops = batch.ops();
  if (ops.empty()) return Status::OK();
  if (ops.size() > kMaxBatchOps) {
    return Reject(Status::InvalidArgument(
        "batch of " + std::to_string(ops.size()) +
        " operations exceeds the limit of " + std::to_string(kMaxBatchOps)));
  }

  Catalog::Reader catalog(catalog_.get());

  // 1. Validate and resolve every op; one bad op refuses the whole batch.
  std::vector<Planned> plan(ops.size());
  std::vector<Marker> markers;
  std::unordered_map<std::string_view, size_t> marker_index;
  size_t once_ops = 0;
  for (const Batch::Op& op : ops) once_ops += op.once ? 1 : 0;
  markers.reserve(once_ops);
  marker_index.reserve(once_ops);
  std::vector<uint32_t> stripes;
  stripes.reserve(once_ops);
  // Counter id -> the random shard this batch's unkeyed plain ops use.
  std::unordered_map<uint64_t, uint32_t> batch_shard;

  for (size_t i = 0; i < ops.size(); ++i) {
    const Batch::Op& op = ops[i];
    Planned& p = plan[i];
    Status s = ValidateDelta(op.delta);
    if (s.ok() && op.once) s = ValidateEventId(op.event_id);
    if (s.ok()) s = ValidateEventTime(op.event_time_ms);
    if (!s.ok()) return Reject(BatchOpError(i, s));
    p.counter = catalog.Find(op.counter);
    if (p.counter == nullptr) {
      return Reject(BatchOpError(i, CounterNotFound(op.counter)));
    }
    p.counter_id = p.counter->id;
    p.delta = op.delta;
    if (!op.once) {
      // Unkeyed plain increments of one counter share one random shard per
      // batch: still a random spread across batches, but the batch folds
      // into one merge per counter instead of one per touched shard.
      auto chosen = op.affinity_key.empty() ? batch_shard.find(p.counter_id)
                                            : batch_shard.end();
      if (chosen != batch_shard.end()) {
        p.shard = chosen->second;
        continue;
      }
      s = PickPlainShard(*p.counter, op.affinity_key, &p.shard);
      if (!s.ok()) return Reject(BatchOpError(i, s));
      if (op.affinity_key.empty()) batch_shard.emplace(p.counter_id, p.shard);
      continue;
    }
    // The op's own arguments; what time decides waits for the lookup.
    const uint64_t hash = StableHash(op.event_id);
    s = OnceShard(*p.counter, hash, op.affinity_key, &p.shard);
    if (s.ok()) s = RequireEventTime(*p.counter, op.event_time_ms);
    if (!s.ok()) return Reject(BatchOpError(i, s));
    std::string key;
    EncodeMarkerKey(p.counter_id, op.event_id, &key);
    auto found = marker_index.find(key);
    if (found != marker_index.end()) {
      p.marker = found->second;
      continue;
    }
    p.marker = markers.size();
    Marker m;
    m.key = std::move(key);
    m.stripe = event_locks_.StripeOf(p.counter_id, hash);
    markers.push_back(std::move(m));
    // The map views keys owned by `markers`; reserve() above keeps those
    // strings from moving.
    marker_index.emplace(markers.back().key, p.marker);
    stripes.push_back(markers.back().stripe);
  }

  // 2. Look up every distinct marker under its stripe, in one MultiGet, in
  // key order: MultiGet needs that order anyway, and the new markers go
  // into the memtable in it (step 4), where each skiplist insert then
  // starts from the previous one's position instead of from the top.
  EventLocks::MultiGuard guard(&event_locks_, &stripes);
  const size_t n = markers.size();
  std::vector<size_t> order(n);
  for (size_t m = 0; m < n; ++m) order[m] = m;
  std::sort(order.begin(), order.end(), [&markers](size_t a, size_t b) {
    return markers[a].key < markers[b].key;
  });
  std::vector<rocksdb::Slice> keys(n);
  std::vector<rocksdb::PinnableSlice> values(n);
  std::vector<rocksdb::Status> statuses(n);
  for (size_t j = 0; j < n; ++j) keys[j] = AsSlice(markers[order[j]].key);
  if (n > 0) {
    db_->MultiGet(rocksdb::ReadOptions(), events_, n, keys.data(),
                  values.data(), statuses.data(), /*sorted_input=*/true);
  }
  for (size_t j = 0; j < n; ++j) {
    Marker& m = markers[order[j]];
    if (statuses[j].ok()) {
      Status s = schema::DecodeMarkerDelta(values[j].ToStringView(), &m.delta,
                                           &m.shard);
      if (!s.ok()) {
        return Status::Corruption("marker " + HexKey(m.key) + ": " +
                                  s.message());
      }
      m.stored = true;
    } else if (!statuses[j].IsNotFound()) {
      return FromRocks(statuses[j], "read marker");
    }
  }

  // 3. Read the clock, after the lookup (as IncrementOnce does), and decide
  // each op's outcome in op order; fold applied deltas per (counter,
  // bucket, shard). Time judges only plain ops and events with no marker.
  const int64_t now = clock_->NowMillis();
  results->resize(ops.size());
  std::vector<Fold> folds;
  folds.reserve(ops.size());
  uint64_t applied = 0, duplicates = 0, conflicts = 0, outside = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    Planned& p = plan[i];
    IncrementResult& r = (*results)[i];
    r.shard = p.shard;
    Marker* m = ops[i].once ? &markers[p.marker] : nullptr;
    if (m != nullptr && (m->stored || m->winner != SIZE_MAX)) {
      r.shard = m->shard;
      r.outcome = CompareDelta(m->delta, p.delta);
      ++(r.outcome == Outcome::kDuplicate ? duplicates : conflicts);
      continue;
    }
    Status s =
        ShardTarget::BucketOf(*p.counter, ops[i].event_time_ms, now, &p.bucket);
    if (!s.ok()) {
      results->clear();
      return Reject(BatchOpError(i, s));
    }
    if (m != nullptr) {
      bool out = false;
      CheckWindow(*p.counter, ops[i].event_time_ms, now, &out, &m->expires_at);
      if (out) {
        r.outcome = Outcome::kOutsideWindow;
        ++outside;
        continue;
      }
      m->winner = i;
      m->delta = p.delta;
      m->shard = p.shard;
    }
    r.outcome = Outcome::kApplied;
    folds.push_back(Fold{p.counter_id, p.bucket, p.shard, p.delta, i});
    ++applied;
  }
  stats_.outside_window.fetch_add(outside, std::memory_order_relaxed);
  if (folds.empty()) {
    stats_.duplicates.fetch_add(duplicates, std::memory_order_relaxed);
    stats_.conflicts.fetch_add(conflicts, std::memory_order_relaxed);
    return Status::OK();
  }
  std::sort(folds.begin(), folds.end(), [](const Fold& a, const Fold& b) {
    if (a.counter_id != b.counter_id) return a.counter_id < b.counter_id;
    return a.bucket != b.bucket ? a.bucket < b.bucket : a.shard < b.shard;
  });

  // 4. One WriteBatch: new markers, then one merge per (counter, shard),
  // the plain-increment flag of counters getting their first, and, once
  // nothing can refuse the batch any more, one outbox entry per applied op
  // of an outbox counter, in op order.
  Scratch& scratch = ThreadScratch();
  rocksdb::WriteBatch& wb = scratch.batch;
  rocksdb::Status rs;
  std::vector<const Catalog::Entry*> first_plain;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Catalog::Entry* c = plan[i].counter;
    if (ops[i].once || c->plain_recorded.load(std::memory_order_acquire) ||
        std::find(first_plain.begin(), first_plain.end(), c) !=
            first_plain.end()) {
      continue;
    }
    first_plain.push_back(c);
    if (rs.ok()) rs = AddPlainFlag(*c, &wb, &scratch.marker_value, meta_);
  }
  for (size_t j = 0; j < n && rs.ok(); ++j) {
    const Marker& m = markers[order[j]];
    if (m.stored || m.winner == SIZE_MAX) continue;  // found, or all outside
    const size_t i = m.winner;
    schema::EncodeMarker(ops[i].event_id, plan[i].counter_id, plan[i].shard,
                         ops[i].delta, now, &scratch.marker_value, m.expires_at,
                         !ops[i].affinity_key.empty());
    rs = wb.Put(events_, keys[j], AsSlice(scratch.marker_value));
  }
  for (size_t f = 0; f < folds.size() && rs.ok();) {
    __int128 sum = 0;
    size_t g = f;
    for (; g < folds.size() && folds[g].counter_id == folds[f].counter_id &&
           folds[g].bucket == folds[f].bucket &&
           folds[g].shard == folds[f].shard;
         ++g) {
      sum += folds[g].delta;
    }
    if (sum < kMinDelta || sum > kMaxDelta) {
      results->clear();
      return Reject(Status::OutOfRange(
          "batch op " + std::to_string(folds[g - 1].op) + ": the batch's "
          "deltas for counter " + Quote(plan[folds[f].op].counter->name) +
          " shard " + std::to_string(folds[f].shard) +
          " sum beyond int64; nothing was written"));
    }
    const ShardTarget target(folds[f].counter_id, folds[f].bucket,
                             folds[f].shard);
    char value[kValueBytes];
    EncodeInt64(static_cast<int64_t>(sum), value);
    rs = wb.Merge(shards_, target.key(), rocksdb::Slice(value, sizeof value));
    f = g;
  }
  if (!rs.ok()) return FromRocks(rs, "build batch");
  OutboxRun outbox(this);
  {
    uint64_t entries = 0;
    for (const Fold& f : folds) entries += plan[f.op].counter->outbox ? 1 : 0;
    Status s = outbox.Reserve(entries, options_.outbox_max_entries);
    if (!s.ok()) {
      results->clear();
      return s;
    }
    uint64_t seq = outbox.first();
    for (size_t i = 0; i < ops.size() && entries > 0; ++i) {
      const Planned& p = plan[i];
      if (!p.counter->outbox || (*results)[i].outcome != Outcome::kApplied) {
        continue;
      }
      s = AddOutboxEntry(
          &wb, seq++, outbox.settled(), *p.counter,
          ops[i].once ? std::string_view(ops[i].event_id) : std::string_view(),
          p.delta, EventTimeOr(ops[i].event_time_ms, now),
          &scratch.marker_value);
      if (!s.ok()) {
        results->clear();
        return s;
      }
    }
  }
  Status s = commit_->Commit(&wb);
  if (!s.ok()) {
    results->clear();
    return s;
  }
  outbox.Committed();
  for (const Catalog::Entry* c : first_plain) {
    c->plain_recorded.store(true, std::memory_order_release);
  }
  // Folds are sorted by counter: one atomic add per counter.
  for (size_t f = 0; f < folds.size();) {
    size_t g = f;
    while (g < folds.size() && folds[g].counter_id == folds[f].counter_id) ++g;
    plan[folds[f].op].counter->applied.fetch_add(g - f,
                                                 std::memory_order_relaxed);
    f = g;
  }
  stats_.applied.fetch_add(applied, std::memory_order_relaxed);
  stats_.duplicates.fetch_add(duplicates, std::memory_order_relaxed);
  stats_.conflicts.fetch_add(conflicts, std::memory_order_relaxed);
  return Status::OK();
}

}  // namespace tally::engine
