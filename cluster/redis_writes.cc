// RedisDb's writes: Increment, IncrementOnce (and their Async forms) and
// Apply, all through one path (Execute): every op checked, placed and
// decided by core/ as the engine decides it, then committed with one
// tally_write call per hash tag, all pipelined in one Run.
//
// The marker: core::Decide needs the stored marker of a once-op. Most
// once-ops are new events, so an op is decided first as if it had none and
// sent; tally_write checks the marker atomically on its node and answers
// the stored record instead of writing when one is there, and the op is
// then decided again by that record (kDuplicate or kConflict), as the
// engine decides it after its lookup. Only an op whose no-marker decision
// is not kApplied (outside the window, or a bucket past retention) reads
// its marker first (GET): a stored marker answers it whatever the time.
// One round trip per call in the common case; two for those.
//
// Atomicity (docs/cluster.md, "Batches"): each tag's ops are one function
// call, all or nothing on their node. A batch over several tags is several
// calls; if one fails (a lost node, an overflow), the others may have
// committed: Apply returns the error, and a retry of the same batch counts
// each once-op once (its marker answers kDuplicate where it committed), while
// its plain ops count again where they committed.

#include <algorithm>
#include <array>
#include <cassert>
#include <cstdint>
#include <iterator>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cluster/records.h"
#include "cluster/redis_db.h"
#include "core/decide.h"
#include "core/validate.h"
#include "tally/limits.h"

namespace tally::cluster {
namespace {

// The error prefix the function answers for a deleted counter and for an
// increment past int64 (cluster/functions/tally.lua).
constexpr std::string_view kGone = "TALLYGONE";
constexpr std::string_view kOverflow = "TALLYOVERFLOW";

// Fields per op of tally_write (cluster/functions/tally.lua).
constexpr size_t kWriteFields = 9;

bool StartsWith(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

Status BatchOpError(bool batch, size_t index, const Status& s) {
  return batch ? s.WithContext("batch op " + std::to_string(index)) : s;
}

// A once-op's marker shares its increment's hash tag (one function call
// writes both). With an affinity key the shard, and so the tag, comes from
// the key, and a copy delivered without it (or with another) would look
// for the marker in another tag and count again: refused until markers
// are found by event id alone (docs/cluster.md, "Not built yet").
Status PinnedOnce() {
  return Status::NotSupported(
      "a once-increment with an affinity key on a Redis Cluster target: its "
      "marker must share a slot with its shard, and a copy without the key "
      "could not find it (docs/cluster.md)");
}

}  // namespace

// One op of a call, as planned and decided.
struct RedisDb::PlannedOp {
  core::WriteOp op;
  size_t counter = 0;  // index into WriteCall::counters
  core::Decision d;
  Status status;             // what Decide answered
  size_t marker = SIZE_MAX;  // once-ops: index into WriteCall::markers
};

// One call's ops, the counters they name and their distinct markers.
struct RedisDb::WriteCall {
  bool batch = false;
  std::vector<CounterInfo> counters;
  std::vector<PlannedOp> ops;
  struct Marker {
    std::string tag;
    std::string name;  // in its tag (KeySpace::MarkerName)
    bool looked_up = false;
    bool stored = false;
    MarkerInfo info;
  };
  std::vector<Marker> markers;
  bool gone = false;  // a tag answered TALLYGONE: a cached counter is stale
};

Status RedisDb::Plan(const std::vector<core::WriteOp>& ops, WriteCall* call) {
  const size_t n = ops.size();
  call->ops.resize(n);
  std::unordered_map<std::string, size_t> counter_of;
  std::unordered_map<std::string, size_t> marker_of;
  std::unordered_map<size_t, uint32_t> batch_shard;  // counter -> shard
  for (size_t i = 0; i < n; ++i) {
    PlannedOp& p = call->ops[i];
    p.op = ops[i];
    Status s = core::CheckArguments(p.op);
    if (s.ok()) {
      auto [at, added] =
          counter_of.try_emplace(std::string(p.op.counter), SIZE_MAX);
      if (added) {
        CounterInfo c;
        s = FindCounter(p.op.counter, &c);
        if (s.ok()) s = CheckSpecBuilt(core::SpecOf(c));
        if (s.ok()) {
          at->second = call->counters.size();
          call->counters.push_back(std::move(c));
        } else {
          counter_of.erase(at);
        }
      }
      if (s.ok()) p.counter = at->second;
    }
    if (s.ok()) s = core::PlaceOp(call->counters[p.counter], p.op, &p.d);
    if (s.ok() && p.op.once && !p.op.affinity_key.empty()) s = PinnedOnce();
    if (!s.ok()) return BatchOpError(call->batch, i, s);
    const CounterInfo& c = call->counters[p.counter];
    if (!p.op.once) {
      if (call->batch && p.op.affinity_key.empty()) {
        p.d.shard = batch_shard.try_emplace(p.counter, p.d.shard).first->second;
      }
      continue;
    }
    WriteCall::Marker m;
    m.tag = keys_.Tag(c, p.d.shard, p.op.key);
    m.name = KeySpace::MarkerName(p.op.key, p.op.event_id);
    // The marker's key names its event in its counter and key.
    auto [at, added] = marker_of.try_emplace(KeySpace::Marker(m.tag, m.name),
                                             call->markers.size());
    if (added) call->markers.push_back(std::move(m));
    p.marker = at->second;
  }
  return Status::OK();
}

// Decides every op in op order by `now`: a looked-up stored marker answers
// its copies; else the first copy the rules apply writes the marker and
// the later copies compare with it (core::MarkerOf), as in the engine.
Status RedisDb::DecideAll(int64_t now, WriteCall* call, bool* need_lookup) {
  *need_lookup = false;
  std::vector<core::FoundMarker> answer(call->markers.size());
  for (size_t m = 0; m < call->markers.size(); ++m) {
    if (call->markers[m].stored) answer[m] = FoundOf(call->markers[m].info);
  }
  for (size_t i = 0; i < call->ops.size(); ++i) {
    PlannedOp& p = call->ops[i];
    const CounterInfo& c = call->counters[p.counter];
    const uint32_t placed = p.d.shard;
    const uint64_t hash = p.d.event_hash;
    p.d = core::Decision();
    p.d.shard = placed;
    p.d.event_hash = hash;
    const core::FoundMarker found =
        p.op.once ? answer[p.marker] : core::FoundMarker();
    p.status = core::Decide(c, p.op, found, now, &p.d);
    if (p.op.once && !found.found &&
        (!p.status.ok() || p.d.outcome != Outcome::kApplied) &&
        !call->markers[p.marker].looked_up) {
      // Its answer depends on whether the event was counted before.
      *need_lookup = true;
      continue;
    }
    if (!p.status.ok()) return BatchOpError(call->batch, i, p.status);
    if (p.op.once && p.d.outcome == Outcome::kApplied) {
      answer[p.marker] = core::MarkerOf(c, p.op, p.d);
    }
  }
  return Status::OK();
}

// GETs the markers of the ops whose answer depends on them.
Status RedisDb::LookUpMarkers(WriteCall* call) {
  std::vector<size_t> which;
  std::vector<Command> cmds;
  for (PlannedOp& p : call->ops) {
    if (!p.op.once) continue;
    WriteCall::Marker& m = call->markers[p.marker];
    if (m.looked_up) continue;
    const bool depends = !p.status.ok() || p.d.outcome != Outcome::kApplied;
    if (!depends) continue;
    m.looked_up = true;
    which.push_back(p.marker);
    Command c;
    c.args = {"GET", KeySpace::Marker(m.tag, m.name)};
    c.slot = ClusterClient::SlotOf(m.tag);
    c.read_only = false;  // the marker must be the master's
    c.idempotent = true;
    cmds.push_back(std::move(c));
  }
  std::vector<Reply> replies;
  Status s = Run(cmds, &replies, false);
  if (!s.ok()) return s;
  for (size_t j = 0; j < which.size(); ++j) {
    WriteCall::Marker& m = call->markers[which[j]];
    const Reply& r = replies[j];
    if (r.kind == Reply::Kind::kNil) continue;
    if (r.kind != Reply::Kind::kString) {
      return Status::IOError("read marker " + core::Quote(m.name) + ": " +
                             r.str);
    }
    s = DecodeMarker(KeySpace::Marker(m.tag, m.name), r.str, &m.info);
    if (!s.ok()) return s;
    m.stored = true;
  }
  return Status::OK();
}

// One tally_write call under construction: a tag's ops.
struct RedisDb::TagCall {
  std::string tag;
  std::vector<std::string> keys;  // KEYS[4..]
  std::vector<std::string> args;  // kWriteFields per function op
  std::vector<size_t> ops;        // the call's op per function op (SIZE_MAX:
                                  // a fold of plain ops)
  std::map<std::string, size_t> value_key;  // key -> its index in KEYS
  // Plain ops fold into one function op per value key: value key -> fold.
  std::map<std::string, size_t> fold_of;
  struct Fold {
    size_t function_op;
    __int128 sum = 0;
    size_t last_op;  // the call's last op in it, for messages
  };
  std::vector<Fold> folds;

  // KEYS index (1-based, after the live, marker-index and key-index keys).
  size_t KeyIndex(const std::string& key) {
    auto [at, added] = value_key.try_emplace(key, keys.size() + 4);
    if (added) keys.push_back(key);
    return at->second;
  }
  // Takes the fields by value and moves them in (an initializer_list's
  // strings could only be copied).
  void AddOp(size_t op, std::array<std::string, kWriteFields> fields) {
    ops.push_back(op);
    args.insert(args.end(), std::make_move_iterator(fields.begin()),
                std::make_move_iterator(fields.end()));
  }
};

Status RedisDb::Commit(int64_t now, WriteCall* call) {
  std::map<std::string, TagCall> tags;
  for (size_t i = 0; i < call->ops.size(); ++i) {
    const PlannedOp& p = call->ops[i];
    // Copies of an event applied earlier in the call were decided as its
    // duplicates or conflicts: only the first applied copy is written.
    if (p.d.outcome != Outcome::kApplied) continue;
    const CounterInfo& c = call->counters[p.counter];
    const std::string tag = keys_.Tag(c, p.d.shard, p.op.key);
    TagCall& t = tags[tag];
    if (t.tag.empty()) t.tag = tag;
    const std::string value = KeySpace::Value(tag, p.op.key);
    const std::string vi = std::to_string(t.KeyIndex(value));
    const std::string key_member(p.op.key);
    if (!p.op.once) {
      auto [at, added] = t.fold_of.try_emplace(value, t.folds.size());
      if (added) {
        t.folds.push_back({t.ops.size(), 0, i});
        t.AddOp(SIZE_MAX, {"p", vi, "0", "", "", "0", "", "0", key_member});
      }
      t.folds[at->second].sum += p.d.applied;
      t.folds[at->second].last_op = i;
      continue;
    }
    const WriteCall::Marker& m = call->markers[p.marker];
    const std::string mi = std::to_string(t.keys.size() + 4);
    t.keys.push_back(KeySpace::Marker(tag, m.name));
    MarkerInfo info;
    info.shard = p.d.shard;
    info.delta = p.d.applied;
    info.created_at_ms = now;
    info.expires_at_ms = p.d.expires_at;
    info.pinned = !p.op.affinity_key.empty();
    // Redis drops the marker when its window has passed by the node's
    // clock; the rules judge by the engine's (docs/cluster.md, "Time").
    const int64_t ttl =
        p.d.expires_at == 0 ? 0 : std::max<int64_t>(1, p.d.expires_at - now);
    t.AddOp(i, {"o", vi, mi, std::to_string(p.d.applied), EncodeMarker(info),
                std::to_string(ttl), m.name, std::to_string(p.d.expires_at),
                key_member});
  }
  std::vector<Command> cmds;
  std::vector<const TagCall*> order;
  for (auto& [tag, t] : tags) {
    // The folded plain deltas, checked against int64 as the engine checks
    // its folds.
    for (const TagCall::Fold& f : t.folds) {
      if (f.sum < kMinDelta || f.sum > kMaxDelta) {
        const PlannedOp& last = call->ops[f.last_op];
        return Status::OutOfRange(
            "batch op " + std::to_string(f.last_op) +
            ": the batch's deltas for counter " +
            core::Quote(call->counters[last.counter].name) +
            (last.op.key.empty() ? std::string()
                                 : " key " + core::Quote(last.op.key)) +
            " shard " + std::to_string(last.d.shard) +
            " sum beyond int64; nothing was written");
      }
      t.args[f.function_op * kWriteFields + 3] =
          std::to_string(static_cast<int64_t>(f.sum));
    }
    Command c;
    c.args.reserve(8 + t.keys.size() + t.args.size());
    c.args.emplace_back("FCALL");
    c.args.emplace_back("tally_write");
    c.args.push_back(std::to_string(t.keys.size() + 3));
    c.args.push_back(KeySpace::Live(tag));
    c.args.push_back(KeySpace::MarkerIndex(tag));
    c.args.push_back(KeySpace::KeyIndex(tag));
    // Moved, not copied: TakeReply reads the tag's ops and folds only.
    c.args.insert(c.args.end(), std::make_move_iterator(t.keys.begin()),
                  std::make_move_iterator(t.keys.end()));
    c.args.push_back(std::to_string(now));
    c.args.push_back(std::to_string(t.ops.size()));
    c.args.insert(c.args.end(), std::make_move_iterator(t.args.begin()),
                  std::make_move_iterator(t.args.end()));
    c.slot = ClusterClient::SlotOf(tag);
    // A call of once-ops only may run twice: its markers make the second
    // run answer what the first counted. One with a plain op may not.
    c.idempotent = t.folds.empty();
    cmds.push_back(std::move(c));
    order.push_back(&t);
  }
  if (cmds.empty()) return Status::OK();
  std::vector<Reply> replies;
  Status s = Run(cmds, &replies, true);
  if (!s.ok()) return s;
  Status first_error;
  for (size_t j = 0; j < replies.size(); ++j) {
    s = TakeReply(*order[j], replies[j], call);
    if (!s.ok() && first_error.ok()) first_error = s;
  }
  return first_error;
}

// One tag's answer: per function op 1 (applied) or the stored marker of
// an event counted before.
Status RedisDb::TakeReply(const TagCall& t, const Reply& r,
                          WriteCall* call) {
  if (r.kind == Reply::Kind::kUnknown) {
    return Status::IOError(
        "outcome unknown: the write to " + core::Quote(t.tag) +
        " was sent but its answer was lost (" + r.str +
        "); it may or may not have been counted, and a plain increment is "
        "not retried (a once-increment is safe to retry under its event id)");
  }
  // The call's op the tag's first function op stands for.
  const size_t first = t.ops[0] != SIZE_MAX ? t.ops[0] : t.folds[0].last_op;
  if (r.kind == Reply::Kind::kError) {
    if (StartsWith(r.str, kGone)) {
      const CounterInfo& c = call->counters[call->ops[first].counter];
      Forget(c.name, c.id);
      call->gone = true;
      return core::CounterNotFound(c.name);
    }
    if (StartsWith(r.str, kOverflow)) {
      const size_t i = first;
      return Status::OutOfRange(
          "increment of " +
          core::CounterKeyNaming(call->counters[call->ops[i].counter].name,
                                 call->ops[i].op.key) +
          " would take a shard's value beyond int64 (a Redis Cluster "
          "shard holds an int64); nothing of " + core::Quote(t.tag) +
          " was written");
    }
    return Status::IOError("write to " + core::Quote(t.tag) + ": " + r.str);
  }
  if (r.kind != Reply::Kind::kArray || r.elements.size() != t.ops.size()) {
    return Status::IOError("write to " + core::Quote(t.tag) +
                           ": unexpected answer from tally_write");
  }
  // With replicas=N an acknowledgement means N replicas hold the write
  // (WAIT on the same connection); fewer in wait_ms and the call is not
  // acknowledged, though the master holds it (docs/cluster.md,
  // "Durability").
  if (target_.wait_replicas > 0 && r.replicas_acked < target_.wait_replicas) {
    return Status::IOError(
        "the write to " + core::Quote(t.tag) + " is on its master but " +
        std::to_string(std::max(r.replicas_acked, 0)) + " of the " +
        std::to_string(target_.wait_replicas) +
        " replicas the target asks for (replicas=) confirmed it within " +
        std::to_string(target_.wait_ms) +
        " ms: not acknowledged; a failover now could lose it (a "
        "once-increment is safe to retry under its event id)");
  }
  for (size_t k = 0; k < t.ops.size(); ++k) {
    const Reply& e = r.elements[k];
    if (e.kind == Reply::Kind::kInteger) continue;  // applied
    const size_t i = t.ops[k];
    assert(i != SIZE_MAX);
    WriteCall::Marker& m = call->markers[call->ops[i].marker];
    Status s = DecodeMarker(KeySpace::Marker(m.tag, m.name), e.str, &m.info);
    if (!s.ok()) return s;
    m.stored = true;
    m.looked_up = true;
  }
  return Status::OK();
}

Status RedisDb::Execute(const std::vector<core::WriteOp>& ops, bool batch,
                        std::vector<IncrementResult>* results, bool* gone) {
  WriteCall call;
  call.batch = batch;
  Status s = Plan(ops, &call);
  if (!s.ok()) return s;
  const int64_t now = clock_->NowMillis();
  bool need_lookup = false;
  s = DecideAll(now, &call, &need_lookup);
  if (s.ok() && need_lookup) {
    s = LookUpMarkers(&call);
    if (s.ok()) s = DecideAll(now, &call, &need_lookup);
  }
  if (s.ok()) s = Commit(now, &call);
  *gone = call.gone;
  if (!s.ok()) return s;
  // The counters this call gave their first plain increment.
  std::vector<bool> plain(call.counters.size(), false);
  for (const PlannedOp& p : call.ops) {
    if (!p.op.once && p.d.outcome == Outcome::kApplied) plain[p.counter] = true;
  }
  for (size_t k = 0; k < call.counters.size(); ++k) {
    const CounterInfo& c = call.counters[k];
    if (plain[k] && (c.flags & kCounterFlagPlainIncrements) == 0) {
      s = RecordPlain(c);
      if (!s.ok()) return s;
    }
  }
  // Events the function found counted before: decided again by their
  // stored markers (with their later copies), nothing written for them.
  bool raced = false;
  for (const WriteCall::Marker& m : call.markers) raced |= m.stored;
  if (raced) {
    s = DecideAll(now, &call, &need_lookup);
    if (!s.ok()) return s;
  }
  results->clear();
  results->reserve(call.ops.size());
  core::OutcomeCounts counted;
  for (const PlannedOp& p : call.ops) {
    results->push_back(p.d.Result());
    counted.Add(p.d.outcome);
  }
  applied_.fetch_add(counted.applied, std::memory_order_relaxed);
  duplicates_.fetch_add(counted.duplicates, std::memory_order_relaxed);
  conflicts_.fetch_add(counted.conflicts, std::memory_order_relaxed);
  outside_window_.fetch_add(counted.outside_window, std::memory_order_relaxed);
  return Status::OK();
}

Result<IncrementResult> RedisDb::WriteOne(const core::WriteOp& op) {
  std::vector<IncrementResult> results;
  bool gone = false;
  Status s = Execute({op}, false, &results, &gone);
  // Its counter was deleted (and maybe created again) by another client
  // since this one cached it: the call wrote nothing, and runs once more
  // by the catalog as it is now (NotFound when the name is gone).
  if (gone) s = Execute({op}, false, &results, &gone);
  if (!s.ok()) {
    if (core::IsRefusal(s)) rejected_.fetch_add(1, std::memory_order_relaxed);
    return s;
  }
  return results[0];
}

Result<IncrementResult> RedisDb::Increment(CounterRef counter, int64_t delta,
                                           const IncrementOptions& options) {
  return WriteOne(core::WriteOp::Plain(counter, delta, options));
}

Result<IncrementResult> RedisDb::IncrementOnce(CounterRef counter,
                                               std::string_view event_id,
                                               int64_t delta,
                                               const OnceOptions& options) {
  return WriteOne(core::WriteOp::Once(counter, event_id, delta, options));
}

// The asynchronous forms run the call and then `done`, inline: a cluster
// write is acknowledged when its node answers (and, with the target's
// replicas=N, its replicas), so there is no local commit to wait for.
void RedisDb::IncrementAsync(CounterRef counter, int64_t delta,
                             IncrementCallback done,
                             const IncrementOptions& options) {
  done(Increment(counter, delta, options));
}

void RedisDb::IncrementOnceAsync(CounterRef counter, std::string_view event_id,
                                 int64_t delta, IncrementCallback done,
                                 const OnceOptions& options) {
  done(IncrementOnce(counter, event_id, delta, options));
}

Status RedisDb::Apply(const Batch& batch,
                      std::vector<IncrementResult>* results) {
  assert(results != nullptr);
  Status s = core::ValidateBatchSize(batch.size());
  if (!s.ok()) {
    rejected_.fetch_add(1, std::memory_order_relaxed);
    return s;
  }
  std::vector<core::WriteOp> ops;
  ops.reserve(batch.size());
  for (const Batch::Op& op : batch.ops()) ops.push_back(core::WriteOp::Of(op));
  std::vector<IncrementResult> planned;
  bool gone = false;  // NotFound: a batch is not run again (docs/cluster.md)
  s = Execute(ops, true, &planned, &gone);
  if (!s.ok()) {
    if (core::IsRefusal(s)) rejected_.fetch_add(1, std::memory_order_relaxed);
    return s;
  }
  results->swap(planned);
  return Status::OK();
}

Result<IncrementResult> RedisDb::Reset(CounterRef counter, std::string_view,
                                       int64_t, const ResetOptions&) {
  return NotBuiltFor(counter.counter, false, "Reset");
}

}  // namespace tally::cluster
