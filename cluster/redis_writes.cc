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
#include <array>
#include <charconv>
#include <cassert>
#include <cstdint>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cluster/records.h"
#include "cluster/redis_db.h"
#include "cluster/stale_rounds.h"
#include "core/bounds.h"
#include "core/decide.h"
#include "core/holds.h"
#include "core/shard_picker.h"
#include "core/validate.h"
#include "tally/limits.h"

namespace tally::cluster {
namespace {

// The error prefix the function answers for a deleted counter and for an
// increment past int64 (cluster/functions/tally.lua).
constexpr std::string_view kGone = "TALLYGONE";
constexpr std::string_view kOverflow = "TALLYOVERFLOW";
// A strict value changed since the client read it: nothing was written.
constexpr std::string_view kStale = "TALLYSTALE";

// Fields per op of tally_write (cluster/functions/tally.lua).
constexpr size_t kWriteFields = 9;
// Fields per bucket entry of tally_write.
constexpr size_t kBucketFields = 5;

// A bucket value lives this long past its counter's retention before Redis
// drops it (its TTL): reads skip it by the client's clock from the end of
// retention on, so clients whose clocks run up to this much behind the
// writer's still find it while their rules keep it.
constexpr int64_t kBucketTtlMarginMs = 60 * 60 * 1000;

bool StartsWith(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

Status BatchOpError(bool batch, size_t index, const Status& s) {
  return batch ? s.WithContext("batch op " + std::to_string(index)) : s;
}

// A marker's (and its forward's) TTL: Redis drops it when its window has passed by the
// node's clock; the rules judge by the engine's (docs/cluster.md, "Time").
std::string TtlOf(const core::Decision& d, int64_t now) {
  return std::to_string(
      d.expires_at == 0 ? 0 : std::max<int64_t>(1, d.expires_at - now));
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

// Whether a decided op is written: an applied op, and a strict counter's
// refused once-op (its marker keeps the refusal for its copies).
bool Writes(const CounterInfo& c, const core::WriteOp& op,
            const core::Decision& d) {
  return d.outcome == Outcome::kApplied ||
         (op.once && c.bounds.any() && d.outcome == Outcome::kRefused);
}

}  // namespace

// One op of a call, as planned and decided.
struct RedisDb::PlannedOp {
  core::WriteOp op;
  size_t counter = 0;  // index into WriteCall::counters
  core::Decision d;
  Status status;             // what Decide answered
  size_t marker = SIZE_MAX;  // once-ops: index into WriteCall::markers
  size_t strict = SIZE_MAX;  // strict counters: index into WriteCall::strict
  size_t reset = SIZE_MAX;   // a sharded counter's reset: WriteCall::resets
  bool sent = false;         // its tally_write was sent
  bool committed = false;    // its function applied it: decided for good
};

// One call's ops, the counters they name and their distinct events.
struct RedisDb::WriteCall {
  bool batch = false;
  std::vector<CounterInfo> counters;
  std::vector<PlannedOp> ops;
  // An event of a counter (and key): where its marker is looked for.
  struct Marker {
    size_t counter = 0;
    std::string key;
    std::string name;  // in its tag (KeySpace::MarkerName)
    uint32_t home = 0;  // the event id's shard: every copy looks there first
    std::string home_tag;
    // The event goes to shard `at`, away from home: a forward at home says
    // so (found, or written by this call).
    bool forwarded = false;
    uint32_t at = 0;
    bool looked_up = false;
    bool stored = false;  // `info` is its stored marker
    MarkerInfo info;
  };
  std::vector<Marker> markers;
  // A strict counter's key (its one shard's value): the value the call's
  // ops are decided against, which tally_write checks is still the value
  // before it writes them (a guard), else answers TALLYSTALE.
  struct StrictKey {
    std::string value_key;
    std::string read;  // the value as read ("0" for none)
    int64_t value = 0;
    bool fresh = false;  // read for this round
    // A sliding quota's previous window (its use weighs in), read and
    // guarded with the value; empty: none.
    std::string previous_key;
    std::string previous_read;
    int64_t previous = 0;
    // A counter that takes reservations: the key's open holds, read with
    // the value and guarded with it (a Reserve in between makes the write
    // stale), whose units count against the minimum (docs/cluster.md,
    // "Reservations"). holds_key is empty for other counters.
    std::string holds_key;
    std::string holds_read;  // as read ("0" for none, as tally_write reads it)
    std::vector<core::HoldRecord> holds;
    uint64_t counter_id = 0;
  };
  std::vector<StrictKey> strict;
  // A sharded counter's key that a reset sets: the sum of its shards, and
  // its reset sequence (in shard 0's tag, where the cluster counts every
  // reset), which the reset's write guards and bumps, so that two resets
  // never both subtract the value they read.
  struct ResetKey {
    size_t counter = 0;
    std::string key;
    std::string seq_key;
    std::string seq;  // as read ("0" for none)
    int64_t value = 0;
    bool fresh = false;
  };
  std::vector<ResetKey> resets;
  bool gone = false;  // a tag answered TALLYGONE: a cached counter is stale

  bool AnyCommitted() const {
    for (const PlannedOp& p : ops) {
      if (p.committed) return true;
    }
    return false;
  }

  // The tag of marker `m` in `shard`.
  std::string TagOf(const KeySpace& keys, const Marker& m,
                    uint32_t shard) const {
    return keys.Tag(counters[m.counter], shard, m.key);
  }
};

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
      k.previous_key = KeySpace::BucketValue(tag, op.key, bucket - width);
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
  std::unordered_map<std::string, size_t> counter_of;
  std::unordered_map<std::string, size_t> marker_of;
  std::unordered_map<size_t, uint32_t> batch_shard;  // counter -> shard
  std::unordered_map<std::string, size_t> strict_of;  // value key -> index
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
    WriteCall::Marker m;
    m.counter = p.counter;
    m.key = std::string(p.op.key);
    m.name = KeySpace::MarkerName(p.op.key, p.op.event_id);
    m.home = core::ShardOfHash(p.d.event_hash, c.shards);
    m.home_tag = keys_.Tag(c, m.home, p.op.key);
    // The marker's key at home names its event in its counter and key.
    auto [at, added] = marker_of.try_emplace(
        KeySpace::Marker(m.home_tag, m.name), call->markers.size());
    if (added) call->markers.push_back(std::move(m));
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
          m.forwarded ? call->TagOf(keys_, m, m.at) : m.home_tag, m.name));
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
    std::vector<size_t> members;  // the call's ops in it
  };
  std::vector<Fold> folds;
  std::vector<size_t> all_ops;  // every op of the call sent in this tag
  // (KEYS index, value read) of each strict key its ops were decided on.
  std::vector<std::pair<size_t, std::string>> guards;
  std::vector<size_t> strict;  // those keys (WriteCall::strict)
  std::vector<size_t> resets;  // the reset keys guarded (WriteCall::resets)
  // A bucketed counter's values written, each once: the fields of
  // tally_write's bucket entries (index, start, TTL, retention floor).
  std::vector<std::string> buckets;
  std::set<std::string, std::less<>> bucketed;  // value keys done

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
  // Each round sends what is decided and unsent. A forward found at home
  // moves its event once (a forward is only ever at home); a tag whose
  // strict value changed since it was read (TALLYSTALE: nothing of it was
  // written) has its values read again and its ops decided again.
  for (int stale_rounds = 0;;) {
    bool moved = false;
    bool stale = false;
    Status s = CommitForwards(now, call, &moved);
    if (s.ok() && moved) s = Decide(now, call);
    if (s.ok()) s = CommitWrites(now, call, &moved, &stale);
    if (!s.ok() || (!moved && !stale)) return s;
    if (stale) {
      if (++stale_rounds > kMaxStaleRounds) {
        return Status::Busy(
            "a strict counter's value changed between its read and its "
            "write " + std::to_string(kMaxStaleRounds) +
            " times in a row (other clients writing it); nothing more of "
            "this call was written, retry it");
      }
      WaitBeforeRound(stale_rounds);  // apart from the other writers
      s = ReadState(call);
      if (!s.ok()) return s;
    }
    s = Decide(now, call);
    if (!s.ok()) return s;
  }
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

// The first step of each applied once-op placed away from its event's
// home: one tally_forward call per home tag. `moved`: an event turned out
// counted, or forwarded elsewhere.
Status RedisDb::CommitForwards(int64_t now, WriteCall* call, bool* moved) {
  *moved = false;
  struct HomeCall {
    std::vector<std::string> keys;  // KEYS[3..]
    std::vector<std::string> args;  // 5 per op
    std::vector<size_t> markers;
  };
  std::map<std::string, HomeCall> homes;
  for (PlannedOp& p : call->ops) {
    if (!p.op.once || p.sent || p.d.outcome != Outcome::kApplied) continue;
    WriteCall::Marker& m = call->markers[p.marker];
    if (m.forwarded || p.d.shard == m.home) continue;
    HomeCall& h = homes[m.home_tag];
    h.keys.push_back(KeySpace::Marker(m.home_tag, m.name));
    h.args.insert(h.args.end(),
                  {std::to_string(h.keys.size() + 2), EncodeForward(p.d.shard),
                   TtlOf(p.d, now), m.name, std::to_string(p.d.expires_at)});
    h.markers.push_back(p.marker);
    // This call's forward, unless the function answers another.
    m.forwarded = true;
    m.at = p.d.shard;
  }
  if (homes.empty()) return Status::OK();
  std::vector<Command> cmds;
  std::vector<std::pair<const std::string*, const HomeCall*>> order;
  for (const auto& [tag, h] : homes) {
    Command c;
    c.args = {"FCALL", "tally_forward", std::to_string(h.keys.size() + 2),
              KeySpace::Live(tag), KeySpace::ForwardIndex(tag)};
    c.args.insert(c.args.end(), h.keys.begin(), h.keys.end());
    c.args.push_back(std::to_string(now));
    c.args.push_back(std::to_string(h.markers.size()));
    c.args.insert(c.args.end(), h.args.begin(), h.args.end());
    c.slot = ClusterClient::SlotOf(tag);
    c.idempotent = true;  // a second run answers the forward the first wrote
    cmds.push_back(std::move(c));
    order.emplace_back(&tag, &h);
  }
  std::vector<Reply> replies;
  Status s = Run(cmds, &replies, true);
  if (!s.ok()) return s;
  for (size_t j = 0; j < replies.size(); ++j) {
    const HomeCall& h = *order[j].second;
    const Reply& r = replies[j];
    s = CheckReply(*order[j].first, r, h.markers.size(),
                   call->markers[h.markers[0]].counter, call);
    if (!s.ok()) return s;
    for (size_t k = 0; k < h.markers.size(); ++k) {
      if (r.elements[k].kind == Reply::Kind::kInteger) continue;  // written
      WriteCall::Marker& m = call->markers[h.markers[k]];
      m.forwarded = false;
      bool follow = false;
      s = TakeStored(call, h.markers[k], h.keys[k], r.elements[k].str,
                     &follow);
      if (!s.ok()) return s;
      *moved = true;
    }
  }
  return Status::OK();
}

// One tally_write per tag of the applied ops not sent yet. `moved`: an op
// found a forward at home and must be sent where it points.
// Bucket value `value` of op `p` (of bucketed counter `c`) in tag call
// `t`, once: tally_write indexes its bucket's start, gives it a TTL of the
// counter's retention (and kBucketTtlMarginMs) and prunes the index.
void RedisDb::AddBucket(const CounterInfo& c, const PlannedOp& p, int64_t now,
                        const std::string& value, TagCall* t) {
  if (!t->bucketed.insert(value).second) return;
  const int64_t width = BucketWidthMs(c.bucket);
  const size_t value_index = t->KeyIndex(value);
  const size_t index = t->KeyIndex(KeySpace::BucketIndex(t->tag, p.op.key));
  int64_t ttl = 0;
  if (c.retention_ms != 0) {
    ttl = std::max<int64_t>(
        1, p.d.bucket + width + c.retention_ms + kBucketTtlMarginMs - now);
  }
  const int64_t floor = core::FirstRetainedBucket(width, c.retention_ms, now);
  t->buckets.insert(t->buckets.end(),
                    {std::to_string(value_index), std::to_string(index),
                     std::to_string(p.d.bucket), std::to_string(ttl),
                     std::to_string(floor)});
}

Status RedisDb::CommitWrites(int64_t now, WriteCall* call, bool* moved,
                             bool* stale) {
  *moved = false;
  *stale = false;
  std::map<std::string, TagCall> tags;
  for (size_t i = 0; i < call->ops.size(); ++i) {
    PlannedOp& p = call->ops[i];
    // Copies of an event applied earlier in the call were decided as its
    // duplicates or conflicts: only the first applied copy is written.
    const CounterInfo& c = call->counters[p.counter];
    if (p.sent || !Writes(c, p.op, p.d)) continue;
    p.sent = true;
    const std::string tag = keys_.Tag(c, p.d.shard, p.op.key);
    TagCall& t = tags[tag];
    if (t.tag.empty()) t.tag = tag;
    t.all_ops.push_back(i);
    const std::string value = KeySpace::ValueIn(tag, p.op.key, p.d.bucket);
    const size_t value_index = t.KeyIndex(value);
    const std::string vi = std::to_string(value_index);
    if (p.d.bucket != core::kNoBucket) AddBucket(c, p, now, value, &t);
    if (p.strict != SIZE_MAX &&
        std::find(t.strict.begin(), t.strict.end(), p.strict) ==
            t.strict.end()) {
      const WriteCall::StrictKey& k = call->strict[p.strict];
      assert(k.value_key == value && "decided in the window it was read in");
      t.strict.push_back(p.strict);
      t.guards.emplace_back(value_index, k.read);
      if (!k.previous_key.empty()) {
        t.guards.emplace_back(t.KeyIndex(k.previous_key), k.previous_read);
      }
      if (!k.holds_key.empty()) {
        t.guards.emplace_back(t.KeyIndex(k.holds_key), k.holds_read);
      }
    }
    const std::string key_member(p.op.key);
    if (!p.op.once) {
      auto [at, added] = t.fold_of.try_emplace(value, t.folds.size());
      if (added) {
        t.folds.push_back({t.ops.size(), 0, i, {}});
        t.AddOp(SIZE_MAX, {"p", vi, "0", "", "", "0", "", "0", key_member});
      }
      t.folds[at->second].sum += p.d.applied;
      t.folds[at->second].last_op = i;
      t.folds[at->second].members.push_back(i);
      continue;
    }
    const WriteCall::Marker& m = call->markers[p.marker];
    const std::string mi = std::to_string(t.keys.size() + 4);
    t.keys.push_back(KeySpace::Marker(tag, m.name));
    MarkerInfo info = InfoOf(core::MarkerOf(c, p.op, p.d));
    info.created_at_ms = now;
    info.expires_at_ms = p.d.expires_at;
    info.pinned = !p.op.affinity_key.empty() || p.d.shard != m.home;
    t.AddOp(i, {"o", vi, mi, std::to_string(p.d.applied), EncodeMarker(info),
                TtlOf(p.d, now), m.name, std::to_string(p.d.expires_at),
                key_member});
    if (p.reset != SIZE_MAX) {
      // The key's reset sequence: guarded as read, and bumped with it.
      const WriteCall::ResetKey& r = call->resets[p.reset];
      const size_t seq_index = t.KeyIndex(r.seq_key);
      t.resets.push_back(p.reset);
      t.guards.emplace_back(seq_index, r.seq);
      t.AddOp(SIZE_MAX, {"p", std::to_string(seq_index), "0", "1", "", "0",
                         "", "0", ""});
    }
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
    c.args.reserve(9 + t.keys.size() + t.args.size() + 2 * t.guards.size());
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
    c.args.push_back(std::to_string(t.guards.size()));
    for (const auto& [index, read] : t.guards) {
      c.args.push_back(std::to_string(index));
      c.args.push_back(read);
    }
    if (!t.buckets.empty()) {
      c.args.push_back(std::to_string(t.buckets.size() / kBucketFields));
      c.args.insert(c.args.end(), std::make_move_iterator(t.buckets.begin()),
                    std::make_move_iterator(t.buckets.end()));
    }
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
    s = TakeReply(*order[j], replies[j], call, moved, stale);
    if (!s.ok() && first_error.ok()) first_error = s;
  }
  return first_error;
}

// What every tag call's answer must be: an array of `n` entries, from a
// node that had the counter (`counter` names it), confirmed by the
// replicas the target asks for.
Status RedisDb::CheckReply(const std::string& tag, const Reply& r, size_t n,
                           size_t counter, WriteCall* call) {
  if (r.kind == Reply::Kind::kUnknown) {
    return Status::IOError(
        "outcome unknown: the write to " + core::Quote(tag) +
        " was sent but its answer was lost (" + r.str +
        "); it may or may not have been counted, and a plain increment is "
        "not retried (a once-increment is safe to retry under its event id)");
  }
  if (r.kind == Reply::Kind::kError) {
    if (StartsWith(r.str, kGone)) {
      const CounterInfo& c = call->counters[counter];
      Forget(c.name, c.id);
      call->gone = true;
      return core::CounterNotFound(c.name);
    }
    return Status::IOError("write to " + core::Quote(tag) + ": " + r.str);
  }
  if (r.kind != Reply::Kind::kArray || r.elements.size() != n) {
    return Status::IOError("write to " + core::Quote(tag) +
                           ": unexpected answer from its function");
  }
  Status s = CheckAcked("the write to " + core::Quote(tag), r);
  if (!s.ok()) {
    return Status::IOError(s.message() +
                           " (a once-increment is safe to retry under its "
                           "event id)");
  }
  return Status::OK();
}

// With replicas=N an acknowledgement means N replicas hold the write
// (WAIT on the same connection); fewer in wait_ms and the call is not
// acknowledged, though the master holds it (docs/cluster.md,
// "Durability").
Status RedisDb::CheckAcked(const std::string& what, const Reply& r) const {
  if (target_.wait_replicas > 0 && r.replicas_acked < target_.wait_replicas) {
    return Status::IOError(
        what + " is on its master but " +
        std::to_string(std::max(r.replicas_acked, 0)) + " of the " +
        std::to_string(target_.wait_replicas) +
        " replicas the target asks for (replicas=) confirmed it within " +
        std::to_string(target_.wait_ms) +
        " ms: not acknowledged; a failover now could lose it");
  }
  return Status::OK();
}

// One tag's tally_write answer: per function op 1 (applied), the stored
// marker of an event counted before, or (at home) a forward.
Status RedisDb::TakeReply(const TagCall& t, const Reply& r, WriteCall* call,
                          bool* moved, bool* stale) {
  // The call's op the tag's first function op stands for.
  const size_t first = t.ops[0] != SIZE_MAX ? t.ops[0] : t.folds[0].last_op;
  if (r.kind == Reply::Kind::kError && StartsWith(r.str, kStale)) {
    // Nothing of the tag was written: read, decide and send again.
    for (const size_t i : t.all_ops) call->ops[i].sent = false;
    for (const size_t k : t.strict) call->strict[k].fresh = false;
    for (const size_t k : t.resets) call->resets[k].fresh = false;
    *stale = true;
    return Status::OK();
  }
  if (r.kind == Reply::Kind::kError && StartsWith(r.str, kOverflow)) {
    return Status::OutOfRange(
        "increment of " +
        core::CounterKeyNaming(call->counters[call->ops[first].counter].name,
                               call->ops[first].op.key) +
        " would take a shard's value beyond int64 (a Redis Cluster "
        "shard holds an int64); nothing of " + core::Quote(t.tag) +
        " was written");
  }
  Status s =
      CheckReply(t.tag, r, t.ops.size(), call->ops[first].counter, call);
  if (!s.ok()) return s;
  for (size_t k = 0; k < t.ops.size(); ++k) {
    const Reply& e = r.elements[k];
    if (e.kind == Reply::Kind::kInteger) {  // written
      if (t.ops[k] != SIZE_MAX) {
        call->ops[t.ops[k]].committed = true;
        continue;
      }
      for (const TagCall::Fold& f : t.folds) {
        if (f.function_op != k) continue;
        for (const size_t i : f.members) call->ops[i].committed = true;
      }
      continue;
    }
    const size_t i = t.ops[k];
    assert(i != SIZE_MAX);
    bool follow = false;
    const size_t marker = call->ops[i].marker;
    s = TakeStored(call, marker,
                   KeySpace::Marker(t.tag, call->markers[marker].name), e.str,
                   &follow);
    if (!s.ok()) return s;
    if (follow) {
      call->ops[i].sent = false;  // sent again, where the forward points
      *moved = true;
    }
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
