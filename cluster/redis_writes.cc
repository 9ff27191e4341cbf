// RedisDb's writes: Increment, IncrementOnce (and their Async forms) and
// Apply, all through one path (Execute): every op checked, placed and
// decided by core/ as the engine decides it (here), then committed with
// one tally_write call per hash tag, all pipelined in one Run
// (cluster/redis_commit.cc).
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
// A once-op with an affinity key (a pinned op) goes to the shard its key
// picks, but every copy of its event looks for the marker in the tag of
// the event id's own shard (its home), as an unpinned copy would place it.
// So a pinned op placed away from its home takes two steps: tally_forward
// leaves a forward at the marker's key in its home tag, naming the shard
// it goes to (or answers the marker or forward already there), then
// tally_write counts it in that shard's tag with its marker. A copy that
// finds a forward (at home, from either function) is sent where it
// points, so all copies meet at one marker. A crash between the steps
// leaves a forward without its count: a retry under the event id follows
// the forward and counts it there (docs/cluster.md, "Pinned
// once-increments").
//
// Atomicity (docs/cluster.md, "Batches"): each tag's ops are one function
// call, all or nothing on their node. A batch over several tags is several
// calls; if one fails (a lost node, an overflow), the others may have
// committed: Apply returns the error, and a retry of the same batch counts
// each once-op once (its marker answers kDuplicate where it committed), while
// its plain ops count again where they committed.

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cluster/records.h"
#include "cluster/redis_db.h"
#include "cluster/write_call.h"
#include "core/bounds.h"
#include "core/decide.h"
#include "core/holds.h"
#include "core/shard_picker.h"
#include "core/validate.h"
#include "tally/limits.h"

namespace tally::cluster {
namespace {

Status BatchOpError(bool batch, size_t index, const Status& s) {
  return batch ? s.WithContext("batch op " + std::to_string(index)) : s;
}

// A GET of integer key `key` (a value, a reset sequence): its text as
// stored ("0" for none, as INCRBY would start) and its value.
Status IntegerOf(const std::string& key, const Reply& r, std::string* text,
                 int64_t* value) {
  if (r.kind == Reply::Kind::kNil) {
    *text = "0";
  } else if (r.kind == Reply::Kind::kString) {
    *text = r.str;
  } else {
    return Status::IOError("read " + core::Quote(key) + ": " + r.str);
  }
  const char* last = text->data() + text->size();
  auto [ptr, ec] = std::from_chars(text->data(), last, *value);
  if (text->empty() || ec != std::errc() || ptr != last) {
    return Status::Corruption(core::Quote(key) + " is not an integer: " +
                              core::Quote(*text));
  }
  return Status::OK();
}

// A strict key's open holds as GET answers them (`read`: the bytes, "0"
// for none, as tally_write's guard reads a missing key; a holds record
// never reads "0").
Status OpenHoldsOf(const std::string& key, const Reply& r, uint64_t counter_id,
                   std::string* read, std::vector<core::HoldRecord>* open) {
  if (r.kind == Reply::Kind::kNil) return Status::OK();
  if (r.kind != Reply::Kind::kString) {
    return Status::IOError("read " + core::Quote(key) + ": " + r.str);
  }
  *read = r.str;
  return DecodeOpenHolds(key, r.str, counter_id, open);
}

// An event of a counter and key (the caller's names): its marker, by
// what names it (KeySpace::MarkerName: a keyed counter's key is never
// empty, a named counter's always is, so the name is one per event).
struct EventOf {
  size_t counter = 0;
  std::string_view key;
  std::string_view event_id;
  bool operator==(const EventOf& o) const {
    return counter == o.counter && key == o.key && event_id == o.event_id;
  }
};

struct EventOfHash {
  size_t operator()(const EventOf& e) const {
    const std::hash<std::string_view> h;
    return (h(e.event_id) * 31 + h(e.key)) * 31 + e.counter;
  }
};

}  // namespace

// The strict key an op of strict counter `c` is decided on (never
// sharded: its one shard's value; a quota's: in the window of the op's
// event time, with the previous window of a sliding one), added to the
// call once.
size_t RedisDb::StrictKeyOf(const CounterInfo& c, const core::WriteOp& op,
                            uint32_t shard, int64_t now, WriteCall* call,
                            std::unordered_map<std::string, size_t>* of) {
  const std::string tag = keys_.Tag(c, shard, op.key);
  const int64_t width = BucketWidthMs(c.bucket);
  const int64_t bucket =
      width == 0 ? core::kNoBucket
                 : core::BucketStart(core::EventTimeOr(op.event_time_ms, now),
                                     width);
  std::string value = KeySpace::ValueIn(tag, op.key, bucket);
  auto [at, added] = of->try_emplace(value, call->strict.size());
  if (added) {
    WriteCall::StrictKey k;
    k.value_key = std::move(value);
    if (c.sliding && bucket >= width) {
      k.previous_bucket = bucket - width;
      k.previous_key = KeySpace::BucketValue(tag, op.key, k.previous_bucket);
    }
    if (core::CheckTakesHolds(c).ok()) {
      k.holds_key = KeySpace::Holds(tag, op.key);
      k.counter_id = c.id;
    }
    call->strict.push_back(std::move(k));
  }
  return at->second;
}

Status RedisDb::Plan(const std::vector<core::WriteOp>& ops, int64_t now,
                     WriteCall* call) {
  const size_t n = ops.size();
  call->ops.resize(n);
  // Keyed by the caller's names (ops outlives the call): no string built
  // to find a counter or an event again.
  std::unordered_map<std::string_view, size_t> counter_of;
  std::unordered_map<EventOf, size_t, EventOfHash> marker_of;
  call->markers.reserve(n);
  std::unordered_map<size_t, uint32_t> batch_shard;  // counter -> shard
  std::unordered_map<std::string, size_t> strict_of;  // value key -> index
  for (size_t i = 0; i < n; ++i) {
    PlannedOp& p = call->ops[i];
    p.op = ops[i];
    Status s = core::CheckArguments(p.op);
    if (s.ok()) {
      auto [at, added] = counter_of.try_emplace(p.op.counter, SIZE_MAX);
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
    if (s.ok() && p.op.reset) {
      s = core::CheckResetBounds(call->counters[p.counter], p.op.delta);
    }
    if (!s.ok()) return BatchOpError(call->batch, i, s);
    const CounterInfo& c = call->counters[p.counter];
    if (p.op.reset) {
      // Counted in shard 0, beside the key's reset sequence (a pinned
      // once-op when its id's own shard is another).
      p.d.shard = 0;
      if (!c.bounds.any()) {
        WriteCall::ResetKey r;
        r.counter = p.counter;
        r.key = std::string(p.op.key);
        r.seq_key = KeySpace::ResetSequence(keys_.Tag(c, 0, p.op.key),
                                            p.op.key);
        p.reset = call->resets.size();
        call->resets.push_back(std::move(r));
      }
    }
    if (c.bounds.any()) {
      p.strict = StrictKeyOf(c, p.op, p.d.shard, now, call, &strict_of);
    }
    if (!p.op.once) {
      if (call->batch && p.op.affinity_key.empty()) {
        p.d.shard = batch_shard.try_emplace(p.counter, p.d.shard).first->second;
      }
      continue;
    }
    // The marker's key at home names its event in its counter and key.
    auto [at, added] = marker_of.try_emplace(
        EventOf{p.counter, p.op.key, p.op.event_id}, call->markers.size());
    if (added) {
      call->markers.emplace_back();
      WriteCall::Marker& m = call->markers.back();
      m.counter = p.counter;
      m.key = p.op.key;
      m.name = KeySpace::MarkerName(p.op.key, p.op.event_id);
      m.home = core::ShardOfHash(p.d.event_hash, c.shards);
    }
    p.marker = at->second;
  }
  return Status::OK();
}

// A sliding quota's previous window for op `p` (decided: its bucket set),
// as read with its strict key.
core::PreviousWindow RedisDb::PreviousOf(const WriteCall& call,
                                         const PlannedOp& p, int64_t now) {
  core::PreviousWindow prev;
  if (p.strict == SIZE_MAX || p.d.bucket == core::kNoBucket) return prev;
  prev.used = call.strict[p.strict].previous;
  prev.elapsed = core::EventTimeOr(p.op.event_time_ms, now) - p.d.bucket;
  return prev;
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
  // Each strict key's value as the ops before this one leave it, and the
  // units its open reservations hold now.
  std::vector<int64_t> running(call->strict.size());
  std::vector<int64_t> held(call->strict.size());
  for (size_t k = 0; k < call->strict.size(); ++k) {
    running[k] = call->strict[k].value;
    core::HeldNow h;
    Status s = core::HeldAt(call->strict[k].holds, now, &h);
    if (!s.ok()) return s.WithContext(call->strict[k].holds_key);
    held[k] = h.held;
  }
  for (size_t i = 0; i < call->ops.size(); ++i) {
    PlannedOp& p = call->ops[i];
    const CounterInfo& c = call->counters[p.counter];
    if (p.committed) {
      // Written: its decision stands, and answers its later copies.
      if (p.op.once) answer[p.marker] = core::MarkerOf(c, p.op, p.d);
      continue;
    }
    // A forward moves every copy of its event to the shard it names.
    const uint32_t placed = p.op.once && call->markers[p.marker].forwarded
                                ? call->markers[p.marker].at
                                : p.d.shard;
    const uint64_t hash = p.d.event_hash;
    p.d = core::Decision();
    p.d.shard = placed;
    p.d.event_hash = hash;
    const core::FoundMarker found =
        p.op.once ? answer[p.marker] : core::FoundMarker();
    p.status = core::Decide(c, p.op, found, now, &p.d);
    if (p.op.once && !found.found &&
        (!p.status.ok() || p.d.outcome != Outcome::kApplied ||
         p.op.reset) &&
        !call->markers[p.marker].looked_up) {
      // Its answer depends on whether the event was counted before.
      *need_lookup = true;
      continue;
    }
    if (!p.status.ok()) return BatchOpError(call->batch, i, p.status);
    if (p.op.reset && p.d.outcome == Outcome::kApplied) {
      // Set to its value: it adds the value less what the key holds.
      const int64_t current = p.strict != SIZE_MAX
                                  ? running[p.strict]
                                  : call->resets[p.reset].value;
      const core::PreviousWindow prev = PreviousOf(*call, p, now);
      Status s = core::AnswerReset(c, p.op, current,
                                   c.sliding ? &prev : nullptr, &p.d,
                                   p.strict != SIZE_MAX ? held[p.strict] : 0);
      if (!s.ok()) return s;
      if (p.strict != SIZE_MAX) running[p.strict] = p.d.value;
    } else if (p.strict != SIZE_MAX && p.d.outcome == Outcome::kApplied) {
      // The bounds, against the value its key holds before it (the earlier
      // ops of the call included), as the engine checks them.
      const int64_t current = running[p.strict];
      const core::PreviousWindow prev = PreviousOf(*call, p, now);
      const core::PreviousWindow* previous = c.sliding ? &prev : nullptr;
      core::CheckBounds(c, p.op, current, previous, &p.d, held[p.strict]);
      if (p.d.outcome == Outcome::kRefused && p.op.once &&
          !call->markers[p.marker].looked_up) {
        // A copy of an event counted (or refused) before is answered by
        // its marker, not refused anew.
        *need_lookup = true;
        continue;
      }
      if (p.d.outcome == Outcome::kRefused && call->batch) {
        return Status::OutOfRange(
            "batch op " + std::to_string(i) + ": " +
            core::RefusalReason(c, p.op, current, previous, held[p.strict]) +
            (call->AnyCommitted() ? "; the batch's ops in other hash tags "
                                    "were written (docs/cluster.md, "
                                    "\"Batches\")"
                                  : "; nothing was written"));
      }
      running[p.strict] = p.d.value;
    }
    if (p.op.once && Writes(c, p.op, p.d)) {
      answer[p.marker] = core::MarkerOf(c, p.op, p.d);
    }
  }
  return Status::OK();
}

// Decides every op; the ops whose answer depends on their marker read it
// (LookUpMarkers) and are decided again.
Status RedisDb::Decide(int64_t now, WriteCall* call) {
  bool need_lookup = false;
  Status s = DecideAll(now, call, &need_lookup);
  if (s.ok() && need_lookup) {
    s = LookUpMarkers(call);
    if (s.ok()) s = DecideAll(now, call, &need_lookup);
  }
  return s;
}

// GETs the markers of the ops whose answer depends on them: at home, then,
// for an event found forwarded, in the shard the forward names.
Status RedisDb::LookUpMarkers(WriteCall* call) {
  std::vector<size_t> which;
  for (PlannedOp& p : call->ops) {
    if (!p.op.once) continue;
    WriteCall::Marker& m = call->markers[p.marker];
    if (m.looked_up) continue;
    const bool depends = !p.status.ok() ||
                         p.d.outcome != Outcome::kApplied || p.op.reset;
    if (!depends) continue;
    m.looked_up = true;
    which.push_back(p.marker);
  }
  // Two rounds at most: a forward is only ever found at home.
  while (!which.empty()) {
    std::vector<Command> cmds;
    std::vector<std::string> keys;
    for (const size_t at : which) {
      const WriteCall::Marker& m = call->markers[at];
      keys.push_back(KeySpace::Marker(
          call->TagOf(keys_, m, m.forwarded ? m.at : m.home), m.name));
      Command c;
      c.args = {"GET", keys.back()};
      c.slot = ClusterClient::SlotOf(keys.back());
      c.read_only = false;  // the marker must be the master's
      c.idempotent = true;
      cmds.push_back(std::move(c));
    }
    std::vector<Reply> replies;
    Status s = Run(cmds, &replies, false);
    if (!s.ok()) return s;
    std::vector<size_t> next;
    for (size_t j = 0; j < which.size(); ++j) {
      const Reply& r = replies[j];
      if (r.kind == Reply::Kind::kNil) continue;
      if (r.kind != Reply::Kind::kString) {
        return Status::IOError("read marker " + core::Quote(keys[j]) + ": " +
                               r.str);
      }
      bool follow = false;
      s = TakeStored(call, which[j], keys[j], r.str, &follow);
      if (!s.ok()) return s;
      if (follow) next.push_back(which[j]);
    }
    which.swap(next);
  }
  return Status::OK();
}

// What a marker key held (`key` names it): a marker (stored), or at home a
// forward, which moves the event to its shard (`follow`).
Status RedisDb::TakeStored(WriteCall* call, size_t marker,
                           const std::string& key, const std::string& record,
                           bool* follow) {
  *follow = false;
  WriteCall::Marker* m = &call->markers[marker];
  if (IsForward(record)) {
    if (m->forwarded) {
      return Status::Corruption("forward " + core::Quote(key) +
                                " found away from its event's own shard");
    }
    Status s = DecodeForward(key, record, call->counters[m->counter].shards,
                             &m->at);
    if (!s.ok()) return s;
    m->forwarded = true;
    *follow = true;
    return Status::OK();
  }
  Status s = DecodeMarker(key, record, &m->info);
  if (!s.ok()) return s;
  m->stored = true;
  m->looked_up = true;
  return Status::OK();
}

// What the call's ops are decided on, read for this round: strict values
// and the keys resets set.
Status RedisDb::ReadState(WriteCall* call) {
  if (call->strict.empty() && call->resets.empty()) return Status::OK();
  Status s = ReadStrict(call);
  return s.ok() ? ReadResets(call) : s;
}

// Each reset key not read for this round: its sequence, then its value in
// every shard (pipelined; the sequence first, so a reset committed between
// the two reads fails this call's guard), summed.
Status RedisDb::ReadResets(WriteCall* call) {
  std::vector<size_t> which;
  std::vector<Command> cmds;
  const auto get = [&](std::string key) {
    Command c;
    c.args = {"GET", std::move(key)};
    c.slot = ClusterClient::SlotOf(c.args[1]);
    c.idempotent = true;
    cmds.push_back(std::move(c));
  };
  for (size_t k = 0; k < call->resets.size(); ++k) {
    const WriteCall::ResetKey& r = call->resets[k];
    if (r.fresh) continue;
    which.push_back(k);
    get(r.seq_key);
    const CounterInfo& c = call->counters[r.counter];
    for (uint32_t shard = 0; shard < c.shards; ++shard) {
      get(KeySpace::Value(keys_.Tag(c, shard, r.key), r.key));
    }
  }
  std::vector<Reply> replies;
  Status s = Run(cmds, &replies, false);
  if (!s.ok()) return s;
  size_t at = 0;
  for (const size_t k : which) {
    WriteCall::ResetKey& r = call->resets[k];
    const CounterInfo& c = call->counters[r.counter];
    __int128 sum = 0;
    for (uint32_t i = 0; i <= c.shards; ++i, ++at) {
      std::string text;
      int64_t v = 0;
      s = IntegerOf(cmds[at].args[1], replies[at], &text, &v);
      if (!s.ok()) return s;
      if (i == 0) {
        r.seq = text;
      } else {
        sum += v;
      }
    }
    if (sum < INT64_MIN || sum > INT64_MAX) {
      return Status::OutOfRange(
          "counter " + core::CounterKeyNaming(c.name, r.key) +
          " sums beyond int64 over its shards: a reset cannot read it");
    }
    r.value = static_cast<int64_t>(sum);
    r.fresh = true;
  }
  return Status::OK();
}

// Reads the strict keys not read for this round: one MGET each on its
// master, pipelined, of its value, its open holds (a counter that takes
// reservations) and a sliding quota's previous window.
Status RedisDb::ReadStrict(WriteCall* call) {
  std::vector<size_t> which;
  std::vector<Command> cmds;
  for (size_t k = 0; k < call->strict.size(); ++k) {
    const WriteCall::StrictKey& key = call->strict[k];
    if (key.fresh) continue;
    which.push_back(k);
    Command c;
    c.args = {"MGET", key.value_key};
    if (!key.holds_key.empty()) c.args.push_back(key.holds_key);
    if (!key.previous_key.empty()) c.args.push_back(key.previous_key);
    c.slot = ClusterClient::SlotOf(c.args[1]);
    c.idempotent = true;
    cmds.push_back(std::move(c));
  }
  std::vector<Reply> replies;
  Status s = Run(cmds, &replies, false);
  if (!s.ok()) return s;
  for (size_t j = 0; j < which.size(); ++j) {
    WriteCall::StrictKey& k = call->strict[which[j]];
    const Reply& r = replies[j];
    if (r.kind != Reply::Kind::kArray ||
        r.elements.size() != cmds[j].args.size() - 1) {
      return Status::IOError("read " + core::Quote(k.value_key) + ": " + r.str);
    }
    s = IntegerOf(k.value_key, r.elements[0], &k.read, &k.value);
    k.holds_read = "0";
    k.holds.clear();
    size_t at = 1;
    if (s.ok() && !k.holds_key.empty()) {
      s = OpenHoldsOf(k.holds_key, r.elements[at++], k.counter_id,
                      &k.holds_read, &k.holds);
    }
    if (s.ok() && !k.previous_key.empty()) {
      s = IntegerOf(k.previous_key, r.elements[at], &k.previous_read,
                    &k.previous);
    }
    if (!s.ok()) return s;
    k.fresh = true;
  }
  return Status::OK();
}

Status RedisDb::CheckBatch(const std::vector<core::WriteOp>& ops) {
  WriteCall call;
  call.batch = true;
  const int64_t now = clock_->NowMillis();
  Status s = Plan(ops, now, &call);
  if (s.ok()) s = ReadState(&call);
  return s.ok() ? Decide(now, &call) : s;
}

Status RedisDb::Execute(const std::vector<core::WriteOp>& ops, bool batch,
                        std::vector<IncrementResult>* results, bool* gone,
                        bool* sent) {
  if (sent != nullptr) *sent = false;
  Status s = CheckWritable();
  if (!s.ok()) return s;
  WriteCall call;
  call.batch = batch;
  // One clock reading decides the call: a quota's window is the same for
  // its read, its decision and its write.
  const int64_t now = clock_->NowMillis();
  s = Plan(ops, now, &call);
  if (!s.ok()) return s;
  s = ReadState(&call);
  if (!s.ok()) return s;
  s = Decide(now, &call);
  if (s.ok()) s = Commit(now, &call);
  *gone = call.gone;
  for (const PlannedOp& p : call.ops) {
    if (sent != nullptr) *sent = *sent || p.sent || p.committed;
  }
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
    s = Decide(now, &call);
    if (!s.ok()) return s;
  }
  results->clear();
  results->reserve(call.ops.size());
  core::OutcomeCounts counted;
  for (const PlannedOp& p : call.ops) {
    results->push_back(p.d.Result());
    counted.Add(p.d.outcome);
    if (p.d.outcome == Outcome::kApplied) {
      NoteApplied(call.counters[p.counter].id, 1);
    }
  }
  applied_.fetch_add(counted.applied, std::memory_order_relaxed);
  duplicates_.fetch_add(counted.duplicates, std::memory_order_relaxed);
  conflicts_.fetch_add(counted.conflicts, std::memory_order_relaxed);
  outside_window_.fetch_add(counted.outside_window, std::memory_order_relaxed);
  refused_.fetch_add(counted.refused, std::memory_order_relaxed);
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
  Status s = CheckAsync(core::WriteOp::Plain(counter, delta, options));
  done(s.ok() ? Increment(counter, delta, options) : s);
}

void RedisDb::IncrementOnceAsync(CounterRef counter, std::string_view event_id,
                                 int64_t delta, IncrementCallback done,
                                 const OnceOptions& options) {
  Status s =
      CheckAsync(core::WriteOp::Once(counter, event_id, delta, options));
  done(s.ok() ? IncrementOnce(counter, event_id, delta, options) : s);
}

// What the engine refuses of the asynchronous forms (core::CheckAsync),
// refused alike; a missing counter is answered by the call itself.
Status RedisDb::CheckAsync(const core::WriteOp& op) {
  CounterInfo c;
  if (!FindCounter(op.counter, &c).ok()) return Status::OK();
  return core::CheckAsync(c, op);
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

Result<IncrementResult> RedisDb::Reset(CounterRef counter,
                                       std::string_view reset_id,
                                       int64_t value,
                                       const ResetOptions& options) {
  Status s = core::ValidateReset(reset_id, value);
  if (!s.ok()) {
    rejected_.fetch_add(1, std::memory_order_relaxed);
    return s;
  }
  return WriteOne(core::WriteOp::Reset(counter, reset_id, value, options));
}

}  // namespace tally::cluster
