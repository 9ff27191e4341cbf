// RedisDb's commits (cluster/redis_writes.cc plans and decides the ops):
// each applied once-op placed away from its event's home leaves its
// forward (tally_forward), then one tally_write per hash tag of the ops
// decided and not sent yet, all tags pipelined in one Run, and their
// answers taken back into the call.
//
// A tally_write is formatted as it is built (cluster/client/resp.h): its
// keys and arguments go once into the command's bytes, with no string per
// argument, and a tag's keys are found again by what they are (TagItem:
// the op's key and bucket), not by a name built to look them up. A write
// of one op in a tag of its own, the common call, costs a few allocations
// (docs/cluster.md, "Performance").

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <functional>
#include <map>
#include <numeric>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cluster/client/resp.h"
#include "cluster/redis_db.h"
#include "cluster/stale_rounds.h"
#include "cluster/write_call.h"
#include "core/buckets.h"
#include "core/decide.h"
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

// Fields per bucket entry of tally_write (cluster/functions/tally.lua).
constexpr size_t kBucketFields = 5;

// A bucket value lives this long past its counter's retention before Redis
// drops it (its TTL): reads skip it by the client's clock from the end of
// retention on, so clients whose clocks run up to this much behind the
// writer's still find it while their rules keep it.
constexpr int64_t kBucketTtlMarginMs = 60 * 60 * 1000;

bool StartsWith(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

// A marker's (and its forward's) TTL: Redis drops it when its window has
// passed by the node's clock; the rules judge by the engine's
// (docs/cluster.md, "Time").
int64_t TtlOf(const core::Decision& d, int64_t now) {
  return d.expires_at == 0 ? 0 : std::max<int64_t>(1, d.expires_at - now);
}

// Something of one tag call found again by what it is: a key other than
// a marker (those are listed once each), a bucket's entry, a fold of
// plain ops. The name of a key follows from it (cluster/keys.h): the
// value of `key` in `bucket` (core::kNoBucket: none), the bucket index,
// open holds or reset sequence of `key`.
struct TagItem {
  enum class Kind : uint8_t {
    kValueKey,
    kBucketIndexKey,
    kHoldsKey,
    kSequenceKey,
    kBucketEntry,  // the value's bucket entry is written
    kFold,         // the fold of the plain ops of a value
  };
  size_t tag = 0;  // index into TagCalls::tags
  Kind kind = Kind::kValueKey;
  std::string_view key;  // the ops' key (the caller's)
  int64_t bucket = core::kNoBucket;

  bool operator==(const TagItem& o) const {
    return tag == o.tag && kind == o.kind && bucket == o.bucket &&
           key == o.key;
  }
};

struct TagItemHash {
  size_t operator()(const TagItem& i) const {
    size_t h = std::hash<std::string_view>()(i.key);
    for (const uint64_t v : {uint64_t{i.tag}, static_cast<uint64_t>(i.kind),
                             static_cast<uint64_t>(i.bucket)}) {
      h = (h ^ std::hash<uint64_t>()(v)) * 0x9e3779b97f4a7c15ULL;
    }
    return h;
  }
};

}  // namespace

// One tally_write call: a tag's ops, as sent and as its answer is read.
struct TagCall {
  std::string tag;
  // Its ops: TagCalls::members[first, first + count), in op order.
  size_t first = 0;
  size_t count = 0;
  // Its function ops: TagCalls::function_ops[fn_first, fn_first +
  // fn_count), each the call's op it stands for (SIZE_MAX: a fold of plain
  // ops, or a reset's sequence).
  size_t fn_first = 0;
  size_t fn_count = 0;
  // Plain ops fold into one function op per value key.
  struct Fold {
    size_t function_op = SIZE_MAX;  // its index among the tag's
    __int128 sum = 0;
    size_t last_op;               // the call's last op in it, for messages
    std::vector<size_t> members;  // the call's ops in it
  };
  std::vector<Fold> folds;
  std::vector<size_t> strict;  // the strict keys guarded (WriteCall::strict)
  std::vector<size_t> resets;  // the reset keys guarded (WriteCall::resets)
};

// The tag calls of one round of CommitWrites, and the scratch their
// commands are formatted in (reused tag after tag).
struct TagCalls {
  std::vector<TagCall> tags;
  std::vector<size_t> order;  // the tags by name: the order they are sent in
  std::vector<size_t> members;
  std::vector<size_t> function_ops;
  std::unordered_map<TagItem, size_t, TagItemHash> items;  // -> KEYS index,
                                                           // or fold
  RespArgs keys;     // KEYS[4..]
  RespArgs args;     // kWriteFields per function op
  RespArgs guards;   // (KEYS index, value read) per strict key or sequence
  RespArgs buckets;  // kBucketFields per bucket entry
  RespArgs head;     // what comes before the keys, between, and after
  RespArgs middle;
  RespArgs tail;
  std::string text;  // a key's name, a marker record

  // Room for a tag of a few ops (the buffers are reused tag after tag),
  // and for every op's function op and keys.
  void Reserve() {
    items.reserve(2 * members.size());
    function_ops.reserve(members.size());
    for (RespArgs* a : {&keys, &guards, &buckets, &head, &middle, &tail}) {
      a->Reserve(512);
    }
    args.Reserve(1024);
    text.reserve(256);
  }
  size_t FunctionOp(const TagCall& t, size_t k) const {
    return function_ops[t.fn_first + k];
  }
  // The KEYS index of `item` (1-based: after the live, marker-index and
  // key-index keys), named `name` when new.
  size_t KeyIndex(const TagItem& item, std::string_view name) {
    auto [at, added] = items.try_emplace(item, keys.count() + 4);
    if (added) keys.Add(name);
    return at->second;
  }
  void AddGuard(size_t index, std::string_view read) {
    guards.AddNumber(static_cast<int64_t>(index));
    guards.Add(read);
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
        return StaleBusy("a strict counter's value",
                         "nothing more of this call was written, retry it");
      }
      WaitBeforeRound(stale_rounds);  // apart from the other writers
      s = ReadState(call);
      if (!s.ok()) return s;
    }
    s = Decide(now, call);
    if (!s.ok()) return s;
  }
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
    const std::string home_tag = call->TagOf(keys_, m, m.home);
    HomeCall& h = homes[home_tag];
    h.keys.push_back(KeySpace::Marker(home_tag, m.name));
    h.args.insert(h.args.end(),
                  {std::to_string(h.keys.size() + 2), EncodeForward(p.d.shard),
                   std::to_string(TtlOf(p.d, now)), m.name,
                   std::to_string(p.d.expires_at)});
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

namespace {

// The tag calls of the call's ops decided to be written and not sent yet
// (marked sent): each op's tag, found by its counter, shard and key group,
// and each tag's ops in op order (members).
void GroupByTag(const KeySpace& keys, WriteCall* call, TagCalls* calls) {
  static_assert(kMaxShards <= (1u << 16) && kKeyGroups <= (1u << 8) &&
                kMaxBatchOps < (1u << 24));
  const size_t n = call->ops.size();
  std::unordered_map<uint64_t, size_t> tag_of;  // counter, shard, group
  std::vector<size_t> tag_of_op(n, SIZE_MAX);
  for (size_t i = 0; i < n; ++i) {
    PlannedOp& p = call->ops[i];
    // Copies of an event applied earlier in the call were decided as its
    // duplicates or conflicts: only the first applied copy is written.
    const CounterInfo& c = call->counters[p.counter];
    if (p.sent || !Writes(c, p.op, p.d)) continue;
    p.sent = true;
    const uint64_t group = c.keyed ? KeyGroupOf(p.op.key) : 0;
    const uint64_t id = (uint64_t{p.counter} << 24) |
                        (uint64_t{p.d.shard} << 8) | group;
    auto [at, added] = tag_of.try_emplace(id, calls->tags.size());
    if (added) {
      calls->tags.emplace_back();
      keys.TagInto(c, p.d.shard, p.op.key, &calls->tags.back().tag);
    }
    tag_of_op[i] = at->second;
    ++calls->tags[at->second].count;
  }
  size_t next = 0;
  for (TagCall& t : calls->tags) {
    t.first = next;
    next += t.count;
    t.count = 0;
  }
  calls->members.resize(next);
  for (size_t i = 0; i < n; ++i) {
    if (tag_of_op[i] == SIZE_MAX) continue;
    TagCall& t = calls->tags[tag_of_op[i]];
    calls->members[t.first + t.count++] = i;
  }
  calls->order.resize(calls->tags.size());
  std::iota(calls->order.begin(), calls->order.end(), size_t{0});
  std::sort(calls->order.begin(), calls->order.end(),
            [calls](size_t a, size_t b) {
              return calls->tags[a].tag < calls->tags[b].tag;
            });
}

// Tag call `ti`'s plain ops, folded per value (their sums checked against
// int64 as the engine checks its folds), before any of its ops is written.
Status FoldPlainOps(const WriteCall& call, size_t ti, TagCalls* calls) {
  TagCall& t = calls->tags[ti];
  for (size_t k = t.first; k < t.first + t.count; ++k) {
    const size_t i = calls->members[k];
    const PlannedOp& p = call.ops[i];
    if (p.op.once) continue;
    const TagItem fold{ti, TagItem::Kind::kFold, p.op.key, p.d.bucket};
    auto [at, added] = calls->items.try_emplace(fold, t.folds.size());
    if (added) t.folds.emplace_back();
    TagCall::Fold& f = t.folds[at->second];
    f.sum += p.d.applied;
    f.last_op = i;
    f.members.push_back(i);
  }
  for (const TagCall::Fold& f : t.folds) {
    if (f.sum >= kMinDelta && f.sum <= kMaxDelta) continue;
    const PlannedOp& last = call.ops[f.last_op];
    return Status::OutOfRange(
        "batch op " + std::to_string(f.last_op) +
        ": the batch's deltas for counter " +
        core::Quote(call.counters[last.counter].name) +
        (last.op.key.empty() ? std::string()
                             : " key " + core::Quote(last.op.key)) +
        " shard " + std::to_string(last.d.shard) +
        " sum beyond int64; nothing was written");
  }
  return Status::OK();
}

// The bucket entry of op `p` (of bucketed counter `c`) in tag call `ti`,
// whose value is KEYS[value_index], once: tally_write indexes its
// bucket's start, gives it a TTL of the counter's retention (and
// kBucketTtlMarginMs) and prunes the index.
void AddBucket(const CounterInfo& c, const PlannedOp& p, int64_t now,
               size_t ti, size_t value_index, TagCalls* calls) {
  const TagItem entry{ti, TagItem::Kind::kBucketEntry, p.op.key, p.d.bucket};
  if (!calls->items.try_emplace(entry, 0).second) return;
  const int64_t width = BucketWidthMs(c.bucket);
  const size_t index = calls->KeyIndex(
      {ti, TagItem::Kind::kBucketIndexKey, p.op.key, core::kNoBucket},
      KeySpace::BucketIndex(calls->tags[ti].tag, p.op.key));
  int64_t ttl = 0;
  if (c.retention_ms != 0) {
    ttl = std::max<int64_t>(
        1, p.d.bucket + width + c.retention_ms + kBucketTtlMarginMs - now);
  }
  const int64_t floor = core::FirstRetainedBucket(width, c.retention_ms, now);
  for (const int64_t v : {static_cast<int64_t>(value_index),
                          static_cast<int64_t>(index), p.d.bucket, ttl,
                          floor}) {
    calls->buckets.AddNumber(v);
  }
}

// The guards of strict key `k` (of op `p`, whose value is
// KEYS[value_index]) in tag call `ti`, once: the value, a sliding quota's
// previous window and the open holds, each as read.
void GuardStrict(const PlannedOp& p, size_t ti, size_t value_index,
                 const WriteCall& call, TagCalls* calls) {
  TagCall& t = calls->tags[ti];
  if (std::find(t.strict.begin(), t.strict.end(), p.strict) != t.strict.end())
    return;
  const WriteCall::StrictKey& k = call.strict[p.strict];
  assert(k.value_key == calls->text && "decided in the window it was read in");
  t.strict.push_back(p.strict);
  calls->AddGuard(value_index, k.read);
  if (!k.previous_key.empty()) {
    const TagItem previous{ti, TagItem::Kind::kValueKey, p.op.key,
                           k.previous_bucket};
    calls->AddGuard(calls->KeyIndex(previous, k.previous_key),
                    k.previous_read);
  }
  if (!k.holds_key.empty()) {
    const TagItem holds{ti, TagItem::Kind::kHoldsKey, p.op.key,
                        core::kNoBucket};
    calls->AddGuard(calls->KeyIndex(holds, k.holds_key), k.holds_read);
  }
}

// The function op of once-op `i` (a marker and its count) in tag call
// `ti`, its value KEYS[value_index]; a reset's also guards and bumps its
// key's reset sequence.
void AddOnceOp(int64_t now, const WriteCall& call, size_t i, size_t ti,
               size_t value_index, TagCalls* calls) {
  const PlannedOp& p = call.ops[i];
  const CounterInfo& c = call.counters[p.counter];
  const WriteCall::Marker& m = call.markers[p.marker];
  const size_t marker_index = calls->keys.count() + 4;
  KeySpace::MarkerInto(calls->tags[ti].tag, m.name, &calls->text);
  calls->keys.Add(calls->text);
  MarkerInfo info = InfoOf(core::MarkerOf(c, p.op, p.d));
  info.created_at_ms = now;
  info.expires_at_ms = p.d.expires_at;
  info.pinned = !p.op.affinity_key.empty() || p.d.shard != m.home;
  EncodeMarkerInto(info, &calls->text);
  calls->function_ops.push_back(i);
  RespArgs& a = calls->args;
  a.Add("o");
  a.AddNumber(static_cast<int64_t>(value_index));
  a.AddNumber(static_cast<int64_t>(marker_index));
  a.AddNumber(p.d.applied);
  a.Add(calls->text);
  a.AddNumber(TtlOf(p.d, now));
  a.Add(m.name);
  a.AddNumber(p.d.expires_at);
  a.Add(p.op.key);
  if (p.reset == SIZE_MAX) return;
  // The key's reset sequence: guarded as read, and bumped with it.
  const WriteCall::ResetKey& r = call.resets[p.reset];
  const size_t seq_index = calls->KeyIndex(
      {ti, TagItem::Kind::kSequenceKey, p.op.key, core::kNoBucket}, r.seq_key);
  calls->tags[ti].resets.push_back(p.reset);
  calls->AddGuard(seq_index, r.seq);
  calls->function_ops.push_back(SIZE_MAX);
  a.Add("p");
  a.AddNumber(static_cast<int64_t>(seq_index));
  for (const std::string_view v : {"0", "1", "", "0", "", "0", ""}) a.Add(v);
}

// Op `i` of tag call `ti`: its value key, bucket entry and guards, then
// its function op (a plain op's: its value's fold, at its first op).
void AddOp(int64_t now, const WriteCall& call, size_t i, size_t ti,
           TagCalls* calls) {
  const PlannedOp& p = call.ops[i];
  const CounterInfo& c = call.counters[p.counter];
  TagCall& t = calls->tags[ti];
  KeySpace::ValueInInto(t.tag, p.op.key, p.d.bucket, &calls->text);
  const size_t value_index = calls->KeyIndex(
      {ti, TagItem::Kind::kValueKey, p.op.key, p.d.bucket}, calls->text);
  if (p.d.bucket != core::kNoBucket) {
    AddBucket(c, p, now, ti, value_index, calls);
  }
  if (p.strict != SIZE_MAX) {
    GuardStrict(p, ti, value_index, call, calls);  // reads calls->text
  }
  if (p.op.once) {
    AddOnceOp(now, call, i, ti, value_index, calls);
    return;
  }
  TagCall::Fold& f = t.folds[calls->items.at(
      {ti, TagItem::Kind::kFold, p.op.key, p.d.bucket})];
  if (f.function_op != SIZE_MAX) return;  // written at its first op
  f.function_op = calls->function_ops.size() - t.fn_first;
  calls->function_ops.push_back(SIZE_MAX);
  RespArgs& a = calls->args;
  a.Add("p");
  a.AddNumber(static_cast<int64_t>(value_index));
  a.Add("0");
  a.AddNumber(static_cast<int64_t>(f.sum));  // checked: FoldPlainOps
  for (const std::string_view v : {"", "0", "", "0"}) a.Add(v);
  a.Add(p.op.key);
}

// The tally_write of tag call `ti` (tally.lua): FCALL tally_write NUMKEYS,
// the live, marker-index and key-index keys, KEYS[4..], the client's now,
// the function ops and their fields, the guards, the bucket entries.
Status FormatTagCall(int64_t now, WriteCall* call, size_t ti,
                     TagCalls* calls, Command* out) {
  for (RespArgs* a : {&calls->keys, &calls->args, &calls->guards,
                      &calls->buckets, &calls->head, &calls->middle,
                      &calls->tail}) {
    a->Clear();
  }
  Status s = FoldPlainOps(*call, ti, calls);
  if (!s.ok()) return s;
  TagCall& t = calls->tags[ti];
  t.fn_first = calls->function_ops.size();
  for (size_t k = t.first; k < t.first + t.count; ++k) {
    AddOp(now, *call, calls->members[k], ti, calls);
  }
  t.fn_count = calls->function_ops.size() - t.fn_first;
  RespArgs& head = calls->head;
  head.Add("FCALL");
  head.Add("tally_write");
  head.AddNumber(static_cast<int64_t>(calls->keys.count() + 3));
  for (void (*name)(std::string_view, std::string*) :
       {&KeySpace::LiveInto, &KeySpace::MarkerIndexInto,
        &KeySpace::KeyIndexInto}) {
    name(t.tag, &calls->text);
    head.Add(calls->text);
  }
  calls->middle.AddNumber(now);
  calls->middle.AddNumber(static_cast<int64_t>(t.fn_count));
  calls->tail.AddNumber(static_cast<int64_t>(calls->guards.count() / 2));
  calls->tail.Append(calls->guards);
  if (calls->buckets.count() > 0) {
    calls->tail.AddNumber(
        static_cast<int64_t>(calls->buckets.count() / kBucketFields));
    calls->tail.Append(calls->buckets);
  }
  out->resp = RespCommand({&calls->head, &calls->keys, &calls->middle,
                           &calls->args, &calls->tail});
  out->slot = ClusterClient::SlotOf(t.tag);
  // A call of once-ops only may run twice: its markers make the second
  // run answer what the first counted. One with a plain op may not.
  out->idempotent = t.folds.empty();
  return Status::OK();
}

}  // namespace

// One tally_write per tag of the ops decided and not sent yet, pipelined.
// `moved`: an op found a forward at home and must be sent where it
// points; `stale`: a tag's strict value changed since it was read.
Status RedisDb::CommitWrites(int64_t now, WriteCall* call, bool* moved,
                             bool* stale) {
  *moved = false;
  *stale = false;
  TagCalls calls;
  calls.tags.reserve(call->ops.size());
  GroupByTag(keys_, call, &calls);
  if (calls.tags.empty()) return Status::OK();
  calls.Reserve();
  std::vector<Command> cmds(calls.order.size());
  for (size_t j = 0; j < calls.order.size(); ++j) {
    Status s = FormatTagCall(now, call, calls.order[j], &calls, &cmds[j]);
    if (!s.ok()) return s;
  }
  std::vector<Reply> replies;
  Status s = Run(cmds, &replies, true);
  if (!s.ok()) return s;
  Status first_error;
  for (size_t j = 0; j < replies.size(); ++j) {
    s = TakeReply(calls, calls.tags[calls.order[j]], replies[j], call, moved,
                  stale);
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
  if (Acked(r)) return Status::OK();  // no message built: every write asks
  const Status s = CheckAcked("the write to " + core::Quote(tag), r);
  return Status::IOError(s.message() +
                         " (a once-increment is safe to retry under its "
                         "event id)");
}

// With replicas=N an acknowledgement means N replicas hold the write
// (WAIT on the same connection); fewer in wait_ms and the call is not
// acknowledged, though the master holds it (docs/cluster.md,
// "Durability").
Status RedisDb::RunGuarded(const GuardedCall& g, const std::string& what,
                           GuardedCall::Outcome* outcome) {
  std::vector<Reply> replies;
  Status s = Run({g.Build()}, &replies, true);
  if (s.ok()) s = GuardedCall::Read(replies[0], what, outcome);
  if (s.ok() && *outcome == GuardedCall::Outcome::kWritten) {
    s = CheckAcked("the write of " + what, replies[0]);
  }
  return s;
}

bool RedisDb::Acked(const Reply& r) const {
  return target_.wait_replicas == 0 || r.replicas_acked >= target_.wait_replicas;
}

Status RedisDb::CheckAcked(const std::string& what, const Reply& r) const {
  if (!Acked(r)) {
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
Status RedisDb::TakeReply(const TagCalls& calls, const TagCall& t,
                          const Reply& r, WriteCall* call, bool* moved,
                          bool* stale) {
  // The call's op the tag's first function op stands for.
  const size_t first = calls.FunctionOp(t, 0) != SIZE_MAX
                           ? calls.FunctionOp(t, 0)
                           : t.folds[0].last_op;
  if (r.kind == Reply::Kind::kError && StartsWith(r.str, kStale)) {
    // Nothing of the tag was written: read, decide and send again.
    for (size_t k = t.first; k < t.first + t.count; ++k) {
      call->ops[calls.members[k]].sent = false;
    }
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
  Status s = CheckReply(t.tag, r, t.fn_count, call->ops[first].counter, call);
  if (!s.ok()) return s;
  for (size_t k = 0; k < t.fn_count; ++k) {
    const Reply& e = r.elements[k];
    const size_t i = calls.FunctionOp(t, k);
    if (e.kind == Reply::Kind::kInteger) {  // written
      if (i != SIZE_MAX) {
        call->ops[i].committed = true;
        continue;
      }
      for (const TagCall::Fold& f : t.folds) {
        if (f.function_op != k) continue;
        for (const size_t member : f.members) {
          call->ops[member].committed = true;
        }
      }
      continue;
    }
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

}  // namespace tally::cluster
