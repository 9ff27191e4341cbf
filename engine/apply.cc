// Db::Apply: a batch of plain and once operations in one atomic write.
// Each operation is planned as a single call's is (engine/write_plan.h);
// what a batch adds is one MultiGet for every distinct marker, copies of
// one event decided as if they came one after another, and the applied
// deltas folded into one merge per (counter, key, bucket, shard).
//
// Apply hands out its results only on success: they are built in a local
// vector and swapped into the caller's at the end; on any error the
// caller's vector is left as it was.

#include <rocksdb/write_batch.h>

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/coding.h"
#include "engine/db_impl.h"
#include "engine/outbox_run.h"
#include "engine/rules.h"
#include "engine/write_plan.h"
#include "engine/write_sequence.h"
#include "tally/limits.h"
#include "util/key_head.h"
#include "util/rocks_status.h"

namespace tally::engine {

// One distinct (counter, key, event id) of a batch. A stored marker answers
// every copy; else the first copy the window and retention accept writes
// it (the winner), and later copies compare their delta with the winner's,
// as if the copies had come one after another.
struct BatchMarker {
  std::string_view key;  // views BatchPlan::marker_keys
  const Catalog::Entry* counter = nullptr;
  uint32_t stripe = 0;
  bool stored = false;
  FoundMarker answer;  // stored: the marker's; else the winner's once chosen
  size_t winner = SIZE_MAX;
};

// A (counter, key, bucket, shard) group of applied deltas, folded into one
// merge operand.
struct Fold {
  const Catalog::Entry* counter;
  std::string_view key;  // views the op's
  uint64_t key_head;     // KeyHead(key): sorts compare it before the key
  int64_t bucket;
  uint32_t shard;
  int64_t delta;
  size_t op;  // for error messages
};

// One distinct (strict counter, key, bucket) of a batch: the value its
// ops are checked against, moved by each op applied. A quota's ops of one
// key may fall in different windows (their event times), each its own value.
struct StrictKey {
  const Catalog::Entry* counter = nullptr;
  std::string_view key;  // views the op's
  int64_t bucket = kNoBucket;
  int64_t value = 0;
  int64_t held = 0;  // units its open reservations hold (DbImpl::HeldUnits)
};

// Everything Apply decided, step by step.
struct BatchPlan {
  std::vector<WriteOp> ops;
  std::vector<OpPlan> plans;      // one per op
  std::vector<size_t> marker_of;  // per op: its BatchMarker (SIZE_MAX: plain)
  std::string marker_keys;        // every once op's marker key, end to end
  std::vector<BatchMarker> markers;  // distinct, in key order
  std::vector<uint32_t> stripes;  // of `markers`, for the MultiGuard
  std::vector<size_t> strict_of;  // per op: its StrictKey (SIZE_MAX: none)
  // Per op of a sliding quota: its previous window's StrictKey (SIZE_MAX:
  // none, also before 1970's second bucket).
  std::vector<size_t> previous_of;
  std::vector<StrictKey> strict;
  std::vector<Fold> folds;  // sorted by (counter id, key, bucket, shard)
  std::vector<const Catalog::Entry*> first_plain;  // flags this batch adds
  OutcomeCounts counted;
};

namespace {

Status BatchOpError(size_t index, const Status& s) {
  return s.WithContext("batch op " + std::to_string(index));
}

// 1. Checks and resolves every op, in op order; one bad op refuses the
// whole batch. Unkeyed plain ops of one counter share one random shard per
// batch (still a random spread across batches, but the batch folds into
// one merge per counter instead of one per touched shard).
//
// 1a. Then the distinct markers: every once op's marker key goes into one
// buffer (no allocation per key), the keys are sorted (integer heads
// first, util/key_head.h), and each run of equal keys, the copies of one
// event, becomes one BatchMarker. So `markers` is in key order, the order
// MultiGet needs and the one the new markers go into the memtable in
// (BuildWrites), where each skip-list insert starts from the previous
// one's position instead of from the top.
Status PlanOps(const Catalog::Reader& catalog, const Batch& batch,
               const EventLocks& locks, BatchPlan* bp) {
  const size_t n = batch.ops().size();
  bp->ops.reserve(n);
  for (const Batch::Op& op : batch.ops()) bp->ops.push_back(WriteOp::Of(op));
  bp->plans.resize(n);
  bp->marker_of.assign(n, SIZE_MAX);
  bp->strict_of.assign(n, SIZE_MAX);
  std::unordered_set<std::string> strict_keys;  // id + key: one stripe each
  std::unordered_map<uint64_t, uint32_t> batch_shard;  // counter id -> shard
  struct OnceKey {
    KeyHeads heads;
    size_t begin;  // in marker_keys
    size_t size;
    size_t op;
  };
  std::vector<OnceKey> once;
  for (size_t i = 0; i < n; ++i) {
    const WriteOp& op = bp->ops[i];
    OpPlan& p = bp->plans[i];
    Status s = CheckArguments(op);
    if (s.ok()) s = Resolve(catalog, op, &p);
    if (!s.ok()) return BatchOpError(i, s);
    if (p.counter->bounds.any()) {
      std::string id_key(reinterpret_cast<const char*>(&p.counter->id),
                         sizeof p.counter->id);
      id_key.append(op.key);
      if (strict_keys.insert(std::move(id_key)).second) {
        bp->stripes.push_back(locks.StripeOf(p.counter->id, p.lock_hash));
      }
    }
    if (!op.once) {
      if (op.affinity_key.empty()) {
        p.shard = batch_shard.try_emplace(p.counter->id, p.shard).first->second;
      }
      continue;
    }
    if (once.empty()) once.reserve(n - i);
    const size_t begin = bp->marker_keys.size();
    AppendMarkerKeyOf(*p.counter, op, &bp->marker_keys);
    const size_t size = bp->marker_keys.size() - begin;
    once.push_back(OnceKey{
        KeyHeads::Of(std::string_view(bp->marker_keys).substr(begin, size)),
        begin, size, i});
  }
  const std::string_view keys(bp->marker_keys);
  auto key_of = [keys](const OnceKey& k) {
    return keys.substr(k.begin, k.size);
  };
  std::sort(once.begin(), once.end(),
            [&key_of](const OnceKey& a, const OnceKey& b) {
              if (!(a.heads == b.heads)) return a.heads < b.heads;
              if (const int c = key_of(a).compare(key_of(b)); c != 0) {
                return c < 0;
              }
              return a.op < b.op;  // deterministic; order within a run is free
            });
  bp->markers.reserve(once.size());
  for (size_t j = 0; j < once.size(); ++j) {
    const size_t op = once[j].op;
    const std::string_view key = key_of(once[j]);
    if (j == 0 || key != key_of(once[j - 1])) {
      BatchMarker m;
      m.key = key;
      m.counter = bp->plans[op].counter;
      m.stripe = locks.StripeOf(m.counter->id, bp->plans[op].lock_hash);
      bp->markers.push_back(m);
      bp->stripes.push_back(m.stripe);
    }
    bp->marker_of[op] = bp->markers.size() - 1;
  }
  return Status::OK();
}

// 2b. The batch's distinct strict (counter, key, bucket)s, the bucket by
// each op's event time or `now` (as Decide will find it), and a sliding
// quota's previous windows (an earlier op of the batch may have moved one).
void IndexStrict(int64_t now, BatchPlan* bp) {
  std::unordered_map<std::string, size_t> index;  // id + bucket + key
  auto slot = [&](const Catalog::Entry* c, std::string_view key,
                  int64_t bucket) {
    std::string id_key(reinterpret_cast<const char*>(&c->id), sizeof c->id);
    id_key.append(reinterpret_cast<const char*>(&bucket), sizeof bucket);
    id_key.append(key);
    auto [at, added] = index.try_emplace(std::move(id_key), bp->strict.size());
    if (added) bp->strict.push_back(StrictKey{c, key, bucket, 0});
    return at->second;
  };
  bp->previous_of.assign(bp->ops.size(), SIZE_MAX);
  for (size_t i = 0; i < bp->ops.size(); ++i) {
    const Catalog::Entry* c = bp->plans[i].counter;
    if (!c->bounds.any()) continue;
    const WriteOp& op = bp->ops[i];
    const int64_t width = BucketWidthMs(c->bucket);
    const int64_t bucket =
        width == 0 ? kNoBucket
                   : BucketStart(EventTimeOr(op.event_time_ms, now), width);
    bp->strict_of[i] = slot(c, op.key, bucket);
    if (c->sliding && bucket >= width) {
      bp->previous_of[i] = slot(c, op.key, bucket - width);
    }
  }
}

// 2c. The values of the batch's strict keys (the caller holds their
// stripes): one MultiGet per strict counter.
template <typename Read>
Status LookUpStrict(BatchPlan* bp, const Read& read) {
  std::vector<bool> done(bp->strict.size(), false);
  std::vector<size_t> of;
  std::vector<StrictSlot> keys;
  std::vector<int64_t> values;
  for (size_t k = 0; k < bp->strict.size(); ++k) {
    if (done[k]) continue;
    const Catalog::Entry* c = bp->strict[k].counter;
    of.clear();
    keys.clear();
    for (size_t j = k; j < bp->strict.size(); ++j) {
      if (bp->strict[j].counter != c) continue;
      of.push_back(j);
      keys.push_back({bp->strict[j].key, bp->strict[j].bucket});
      done[j] = true;
    }
    Status s = read(*c, keys, &values);
    if (!s.ok()) return s;
    for (size_t j = 0; j < of.size(); ++j) bp->strict[of[j]].value = values[j];
  }
  return Status::OK();
}

// 2. Looks up every distinct marker (the caller holds their stripes) in one
// MultiGet, in key order (PlanOps sorted them).
Status LookUpMarkers(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* events,
                     BatchPlan* bp) {
  const size_t n = bp->markers.size();
  if (n == 0) return Status::OK();
  std::vector<rocksdb::Slice> keys(n);
  std::vector<rocksdb::PinnableSlice> values(n);
  std::vector<rocksdb::Status> statuses(n);
  for (size_t j = 0; j < n; ++j) {
    const std::string_view key = bp->markers[j].key;
    keys[j] = rocksdb::Slice(key.data(), key.size());
  }
  db->MultiGet(rocksdb::ReadOptions(), events, n, keys.data(), values.data(),
               statuses.data(), /*sorted_input=*/true);
  for (size_t j = 0; j < n; ++j) {
    BatchMarker& m = bp->markers[j];
    if (statuses[j].IsNotFound()) continue;
    if (!statuses[j].ok()) return FromRocks(statuses[j], "read marker");
    Status s =
        ReadMarker(*m.counter, m.key, values[j].ToStringView(), &m.answer);
    if (!s.ok()) return s;
    m.stored = true;
  }
  return Status::OK();
}

// 3. Decides each op's outcome in op order by `now` (read after the
// lookup, as IncrementOnce reads it) and folds the applied deltas.
Status DecideOps(int64_t now, BatchPlan* bp,
                 std::vector<IncrementResult>* results) {
  const size_t n = bp->ops.size();
  results->resize(n);
  bp->folds.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const WriteOp& op = bp->ops[i];
    OpPlan& p = bp->plans[i];
    BatchMarker* m = op.once ? &bp->markers[bp->marker_of[i]] : nullptr;
    Status s = Decide(*p.counter, op, m != nullptr ? m->answer : FoundMarker{}, now,
                      &p);
    if (!s.ok()) return BatchOpError(i, s);
    StrictKey* strict =
        bp->strict_of[i] != SIZE_MAX ? &bp->strict[bp->strict_of[i]] : nullptr;
    if (strict != nullptr && p.outcome == Outcome::kApplied) {
      assert(p.bucket == strict->bucket);
      PreviousWindow previous;
      if (p.counter->sliding) {
        previous.elapsed = EventTimeOr(op.event_time_ms, now) - p.bucket;
        const size_t at = bp->previous_of[i];
        previous.used = at == SIZE_MAX ? 0 : bp->strict[at].value;
      }
      const PreviousWindow* prev = p.counter->sliding ? &previous : nullptr;
      CheckBounds(*p.counter, op, strict->value, prev, &p, strict->held);
      if (p.outcome == Outcome::kRefused) {
        return Status::OutOfRange(
            "batch op " + std::to_string(i) + ": " +
            RefusalReason(*p.counter, op, strict->value, prev, strict->held) +
            "; nothing was written");
      }
      strict->value = p.value;
    }
    (*results)[i] = p.Result();
    bp->counted.Add(p.outcome);
    if (p.outcome != Outcome::kApplied) continue;
    if (m != nullptr) {
      assert(!m->stored && m->winner == SIZE_MAX);
      m->winner = i;
      // Its later copies in this batch get the answer its marker keeps.
      m->answer = MarkerOf(*p.counter, op, p);
    }
    bp->folds.push_back(Fold{p.counter, op.key, KeyHead(op.key), p.bucket,
                             p.shard, p.applied, i});
  }
  std::sort(
      bp->folds.begin(), bp->folds.end(), [](const Fold& a, const Fold& b) {
        if (a.counter->id != b.counter->id) {
          return a.counter->id < b.counter->id;
        }
        if (a.key_head != b.key_head) return a.key_head < b.key_head;
        if (const int c = a.key.compare(b.key); c != 0) return c < 0;
        return a.bucket != b.bucket ? a.bucket < b.bucket : a.shard < b.shard;
      });
  assert(bp->folds.size() == bp->counted.applied);
  return Status::OK();
}

// 4. The WriteBatch: the plain-increment flag of counters getting their
// first, the new markers in key order, then one merge per (counter,
// bucket, shard); OutOfRange when a group's deltas sum beyond int64.
Status BuildWrites(rocksdb::WriteBatch* wb, rocksdb::ColumnFamilyHandle* meta,
                   rocksdb::ColumnFamilyHandle* events,
                   rocksdb::ColumnFamilyHandle* shards, int64_t now,
                   BatchPlan* bp, std::string* scratch) {
  rocksdb::Status rs;
  for (const Fold& f : bp->folds) {
    const Catalog::Entry* c = f.counter;
    if (bp->ops[f.op].once ||
        c->plain_recorded.load(std::memory_order_acquire) ||
        std::find(bp->first_plain.begin(), bp->first_plain.end(), c) !=
            bp->first_plain.end()) {
      continue;
    }
    bp->first_plain.push_back(c);
    if (rs.ok()) rs = AddPlainFlag(wb, meta, *c, scratch);
  }
  for (size_t j = 0; j < bp->markers.size() && rs.ok(); ++j) {
    const BatchMarker& m = bp->markers[j];
    if (m.stored || m.winner == SIZE_MAX) continue;  // found, or all outside
    rs = AddMarker(wb, events, m.key, bp->ops[m.winner], bp->plans[m.winner],
                   now, scratch);
  }
  for (size_t f = 0; f < bp->folds.size() && rs.ok();) {
    const Fold& first = bp->folds[f];
    __int128 sum = 0;
    size_t g = f;
    for (; g < bp->folds.size() && bp->folds[g].counter == first.counter &&
           bp->folds[g].key == first.key &&
           bp->folds[g].bucket == first.bucket &&
           bp->folds[g].shard == first.shard;
         ++g) {
      sum += bp->folds[g].delta;
    }
    assert(g > f);
    if (sum < kMinDelta || sum > kMaxDelta) {
      return Status::OutOfRange(
          "batch op " + std::to_string(bp->folds[g - 1].op) +
          ": the batch's deltas for counter " + Quote(first.counter->name) +
          (first.key.empty() ? std::string() : " key " + Quote(first.key)) +
          " shard " + std::to_string(first.shard) +
          " sum beyond int64; nothing was written");
    }
    rs = AddShardMerge(wb, shards, *first.counter, first.key, first.bucket,
                       first.shard, static_cast<int64_t>(sum));
    f = g;
  }
  return FromRocks(rs, "build batch");
}

}  // namespace

Status DbImpl::Apply(const Batch& batch,
                     std::vector<IncrementResult>* results) {
  assert(results != nullptr);
  std::vector<IncrementResult> planned;
  Status s = ApplyInto(batch, &planned);
  CountRefusal(s);
  if (!s.ok()) return s;
  assert(planned.size() == batch.size());
  results->swap(planned);
  return s;
}

// Apply's writer of the write sequence (engine/write_sequence.h): every
// op checked and planned (PlanOps), every stripe of the batch, one
// MultiGet for its markers, one decision in op order, one commit.
class DbImpl::BatchWrite : public WriteSteps {
 public:
  BatchWrite(DbImpl* db, const Batch& batch,
             std::vector<IncrementResult>* results, const AlsoWrite& also)
      : db_(db), batch_(batch), results_(results), also_(also) {}

  Status Check(const Catalog::Reader& catalog) {
    Status s = db_->CheckWritable();
    if (s.ok()) s = ValidateBatchSize(batch_.size());
    if (!s.ok()) return s;
    finished = batch_.empty();
    return finished ? s : PlanOps(catalog, batch_, db_->event_locks_, &bp_);
  }
  EventLocks::MultiGuard Lock() {
    return EventLocks::MultiGuard(&db_->event_locks_, &bp_.stripes);
  }
  Status LookUp() {
    // Copies IncrementOnceAsync has queued are waited for, then found
    // stored (engine/once_in_flight.h).
    for (const BatchMarker& m : bp_.markers) db_->AwaitOnceWritten(m.key);
    return LookUpMarkers(db_->db_.get(), db_->events_, &bp_);
  }
  bool ReadsClock() const { return true; }
  Status Decide(int64_t now) {
    IndexStrict(now, &bp_);
    Status s = LookUpStrict(&bp_, [this](const CounterInfo& c,
                                         const std::vector<StrictSlot>& slots,
                                         std::vector<int64_t>* values) {
      return db_->ReadStrictValues(c, slots, values);
    });
    for (size_t k = 0; s.ok() && k < bp_.strict.size(); ++k) {
      StrictKey& key = bp_.strict[k];
      s = db_->HeldUnits(*key.counter, key.key, now, &key.held);
    }
    return s.ok() ? DecideOps(now, &bp_, results_) : s;
  }
  Status Commit(int64_t now) {
    if (bp_.folds.empty() && also_ == nullptr) {  // nothing to write
      db_->CountOutcomes(bp_.counted);
      return Status::OK();
    }
    WriteScratch& scratch = ThreadWriteScratch();
    Status s = BuildWrites(&scratch.batch, db_->meta_, db_->events_,
                           db_->shards_, now, &bp_, &scratch.value);
    OutboxRun outbox(db_);
    if (s.ok()) s = db_->AddBatchOutbox(bp_, now, &outbox, &scratch);
    if (s.ok() && also_ != nullptr) s = also_(&scratch.batch);
    if (s.ok()) s = db_->commit_->Commit(&scratch.batch);
    if (!s.ok()) return s;
    outbox.Committed();
    db_->BookBatch(bp_);
    return s;
  }

 private:
  DbImpl* const db_;
  const Batch& batch_;
  std::vector<IncrementResult>* const results_;
  const AlsoWrite& also_;
  BatchPlan bp_;
};

Status DbImpl::ApplyInto(const Batch& batch,
                         std::vector<IncrementResult>* results,
                         const AlsoWrite& also) {
  BatchWrite w(this, batch, results, also);
  return RunWrite(&w);
}

Status DbImpl::AddBatchOutbox(const BatchPlan& bp, int64_t now,
                              OutboxRun* outbox, WriteScratch* scratch) {
  // Once nothing can refuse the batch any more: one outbox entry per
  // applied op of an outbox counter, in op order.
  uint64_t entries = 0;
  for (const Fold& f : bp.folds) entries += f.counter->outbox ? 1 : 0;
  Status s = outbox->Reserve(entries, options_.outbox_max_entries);
  uint64_t seq = outbox->first();
  for (size_t i = 0; i < bp.ops.size() && entries > 0 && s.ok(); ++i) {
    const WriteOp& op = bp.ops[i];
    const OpPlan& p = bp.plans[i];
    if (!p.counter->outbox || p.outcome != Outcome::kApplied) continue;
    s = AddOutboxEntry(&scratch->batch, seq++, outbox->settled(), *p.counter,
                       op.key, op.event_id, op.delta,
                       EventTimeOr(op.event_time_ms, now), &scratch->value);
  }
  assert(!s.ok() || seq - outbox->first() == entries);
  return s;
}

void DbImpl::BookBatch(const BatchPlan& bp) {
  for (const Catalog::Entry* c : bp.first_plain) {
    c->plain_recorded.store(true, std::memory_order_release);
  }
  // Folds are sorted by counter: one atomic add per counter.
  for (size_t f = 0; f < bp.folds.size();) {
    size_t g = f;
    while (g < bp.folds.size() && bp.folds[g].counter == bp.folds[f].counter) {
      ++g;
    }
    Applied(*bp.folds[f].counter, /*first_plain=*/false, g - f);
    f = g;
  }
  CountOutcomes(bp.counted);
}

}  // namespace tally::engine
