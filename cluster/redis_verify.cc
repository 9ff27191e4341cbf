// RedisDb::Verify (docs/cluster.md, "Verify"): reads the whole database
// from the masters, a counter at a time and its tags in pipelined rounds,
// and checks what it finds against docs/format.md ("Redis Cluster keys")
// and the invariants between records:
//   - every counter record decodes (ListCounters) and every tag of the
//     counter has its live key;
//   - every value is an integer; every marker the index lists (unexpired
//     by the client's clock) decodes and names its own tag's shard, or is
//     a forward to another shard;
//   - for a counter that never had a plain increment and keeps its markers
//     forever (no dedupe window, no buckets), each shard's value (a keyed
//     counter's: each key's) equals the sum of its markers' deltas;
//   - every reservation record and open-holds record decodes;
//   - every claim record decodes.
// Not one snapshot: a counter written while it is checked can show a sum
// that is not wrong; verify a quiet database (or again).

#include <charconv>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cluster/records.h"
#include "cluster/redis_db.h"
#include "core/findings.h"
#include "core/decide.h"
#include "core/validate.h"

namespace tally::cluster {
namespace {

// Tags a round reads (each costs a few commands in one pipeline).
constexpr size_t kTagsPerRound = 256;

}  // namespace

// What one tag of a counter lists.
struct RedisDb::TagLists {
  std::string tag;
  uint32_t shard = 0;
  bool live = false;
  // Unexpired markers (and forwards): name, expiry (0: kept forever).
  std::vector<std::pair<std::string, int64_t>> markers;
  std::vector<std::string> keys;     // a keyed counter's
  std::vector<std::string> holds;    // reservation entries ("h...", "r:...")
};

namespace {

// The key of a keyed counter's marker name ("5:post1e-9" -> "post1").
bool KeyOfMarker(std::string_view name, std::string* key) {
  const size_t colon = name.find(':');
  size_t len = 0;
  const auto [ptr, ec] = std::from_chars(name.data(), name.data() + colon, len);
  if (colon == std::string_view::npos || ec != std::errc() ||
      ptr != name.data() + colon || colon + 1 + len > name.size()) {
    return false;
  }
  *key = std::string(name.substr(colon + 1, len));
  return true;
}

std::vector<std::string> Strings(const Reply& r) {
  std::vector<std::string> out;
  for (const Reply& e : r.elements) out.push_back(e.str);
  return out;
}

}  // namespace

Status RedisDb::Verify(VerifyReport* report, const ProgressFn& progress) {
  *report = VerifyReport();
  core::Findings findings(report);
  Result<std::vector<CounterInfo>> counters = ListCounters();
  if (counters.status().IsCorruption()) {
    findings.Add("catalog: " + counters.status().message());
    return Status::OK();
  }
  if (!counters.ok()) return counters.status();
  uint64_t done = 0;
  for (const CounterInfo& c : counters.value()) {
    ++report->counters;
    const std::vector<std::string> tags = keys_.TagsOf(c);
    for (size_t at = 0; at < tags.size(); at += kTagsPerRound) {
      std::vector<TagLists> lists;
      for (size_t i = at; i < std::min(tags.size(), at + kTagsPerRound); ++i) {
        TagLists t;
        t.tag = tags[i];
        t.shard = static_cast<uint32_t>(c.keyed ? i / kKeyGroups : i);
        lists.push_back(std::move(t));
      }
      Status s = ListTags(c, &lists);
      if (s.ok()) s = VerifyTags(c, lists, report);
      if (!s.ok()) return s;
    }
    if (progress) progress(ProgressReport{"counters", ++done,
                                          counters.value().size(), false});
  }
  return VerifyClaims(&findings);
}

// Round 1: each tag's live key and its indexes.
Status RedisDb::ListTags(const CounterInfo& c, std::vector<TagLists>* lists) {
  std::vector<Command> cmds;
  for (const TagLists& t : *lists) {
    cmds.push_back(ReadCommand({"EXISTS", KeySpace::Live(t.tag)}, t.tag));
    cmds.push_back(ReadCommand(
        {"ZRANGE", KeySpace::MarkerIndex(t.tag), "0", "-1", "WITHSCORES"},
        t.tag));
    cmds.push_back(
        ReadCommand({"ZRANGE", KeySpace::KeyIndex(t.tag), "0", "-1"}, t.tag));
    cmds.push_back(
        ReadCommand({"ZRANGE", KeySpace::HoldIndex(t.tag), "0", "-1"}, t.tag));
  }
  std::vector<Reply> r;
  Status s = Run(cmds, &r, false);
  if (!s.ok()) return s;
  const int64_t now = clock_->NowMillis();
  for (size_t i = 0; i < lists->size(); ++i) {
    TagLists& t = (*lists)[i];
    for (size_t j = 1; j < 4; ++j) {
      if (r[4 * i + j].kind != Reply::Kind::kArray) {
        return Status::IOError("verify counter " + core::Quote(c.name) +
                               ": " + r[4 * i + j].str);
      }
    }
    t.live = r[4 * i].kind == Reply::Kind::kInteger && r[4 * i].integer == 1;
    ForEachUnexpired(r[4 * i + 1], now,
                     [&t](const std::string& name, int64_t expires) {
                       t.markers.emplace_back(name, expires);
                     });
    t.keys = Strings(r[4 * i + 2]);
    t.holds = Strings(r[4 * i + 3]);
  }
  return Status::OK();
}

// Round 2: each tag's values, markers and reservations, checked.
Status RedisDb::VerifyTags(const CounterInfo& c,
                           const std::vector<TagLists>& lists,
                           VerifyReport* report) {
  const bool buckets = c.bucket != BucketWidth::kNone;
  std::vector<Command> cmds;
  for (const TagLists& t : lists) {
    if (!buckets && !c.keyed) {
      cmds.push_back(ReadCommand({"GET", KeySpace::Value(t.tag, {})}, t.tag));
    }
    for (const std::string& k : t.keys) {
      if (!buckets) {
        cmds.push_back(ReadCommand({"GET", KeySpace::Value(t.tag, k)}, t.tag));
      }
    }
    for (const auto& [name, expires] : t.markers) {
      cmds.push_back(ReadCommand({"GET", KeySpace::Marker(t.tag, name)}, t.tag));
    }
    for (const std::string& h : t.holds) {
      cmds.push_back(ReadCommand({"GET", t.tag + ":" + h}, t.tag));
    }
  }
  std::vector<Reply> r;
  Status s = Run(cmds, &r, false);
  if (!s.ok()) return s;
  core::Findings findings(report);
  // Sums are compared where every count has its marker for good.
  const bool compare = (c.flags & kCounterFlagPlainIncrements) == 0 &&
                       c.dedupe_window_ms == 0 && !buckets;
  if (compare) ++report->sums_compared;
  size_t at = 0;
  for (const TagLists& t : lists) {
    const std::string where =
        "counter " + core::Quote(c.name) + " tag " + core::Quote(t.tag);
    if (!t.live) findings.Add(where + ": no live key");
    KeySums sums;
    if (!buckets) {
      if (!c.keyed) sums[""];
      for (const std::string& k : t.keys) sums[k];
      for (auto& [key, sum] : sums) {
        const Reply& v = r[at++];
        if (v.kind == Reply::Kind::kNil) continue;
        ++report->shard_keys;
        const char* last = v.str.data() + v.str.size();
        auto [ptr, ec] = std::from_chars(v.str.data(), last, sum.first);
        if (v.str.empty() || ec != std::errc() || ptr != last) {
          findings.Add(where + ": value of key " + core::Quote(key) +
                       " is not an integer: " + core::Quote(v.str));
        }
      }
    }
    VerifyMarkers(c, t, r, &at, &sums, where, report);
    VerifyHolds(c, t, r, &at, where, report);
    if (!compare) continue;
    for (const auto& [key, sum] : sums) {
      if (c.keyed) ++report->keys_compared;
      if (sum.first == sum.second) continue;
      findings.Add(where + (key.empty() ? std::string() : " key " + core::Quote(key)) +
                   ": value " + std::to_string(sum.first) +
                   " != its markers' delta sum");
    }
  }
  return Status::OK();
}

// The markers of tag `t` (their GETs from r[*at] on): each decodes and is
// in its shard's tag (or is a forward elsewhere); their deltas go to
// `sums` by key.
void RedisDb::VerifyMarkers(
    const CounterInfo& c, const TagLists& t, const std::vector<Reply>& r,
    size_t* at, std::map<std::string, std::pair<int64_t, __int128>>* sums,
    const std::string& where, VerifyReport* report) {
  core::Findings findings(report);
  for (const auto& [name, expires] : t.markers) {
    const Reply& m = r[(*at)++];
    const std::string what = where + " marker " + core::Quote(name);
    if (m.kind != Reply::Kind::kString) {
      // A windowed marker Redis dropped by its own clock is not a loss.
      if (expires == 0) findings.Add(what + ": indexed but missing");
      continue;
    }
    uint32_t shard = 0;
    const std::string key_name = KeySpace::Marker(t.tag, name);
    if (IsForward(m.str)) {
      const Status s = DecodeForward(key_name, m.str, c.shards, &shard);
      if (!s.ok()) findings.Add(s.message());
      else if (shard == t.shard) findings.Add(what + ": forwards to its own shard");
      continue;
    }
    MarkerInfo info;
    const Status s = DecodeMarker(key_name, m.str, &info);
    std::string key;
    if (s.ok() && c.keyed && !KeyOfMarker(name, &key)) {
      findings.Add(what + ": a keyed counter's marker name without its key");
      continue;
    }
    if (!s.ok()) {
      findings.Add(s.message());
    } else if (info.shard != t.shard) {
      findings.Add(what + ": names shard " + std::to_string(info.shard) +
                   ", found in shard " + std::to_string(t.shard));
    } else {
      ++report->markers;
      (*sums)[key].second += info.delta;
    }
  }
}

// The reservation records and open holds of tag `t` (their GETs from
// r[*at] on): each decodes.
void RedisDb::VerifyHolds(const CounterInfo& c, const TagLists& t,
                          const std::vector<Reply>& r, size_t* at,
                          const std::string& where, VerifyReport* report) {
  core::Findings findings(report);
  for (const std::string& h : t.holds) {
    const Reply& rec = r[(*at)++];
    const std::string what = where + " " + core::Quote(h);
    if (rec.kind != Reply::Kind::kString) {
      if (h.compare(0, 2, "r:") == 0) findings.Add(what + ": indexed but missing");
      continue;  // open holds go when none is held
    }
    const std::string key_name = t.tag + ":" + h;
    Status s;
    if (h.compare(0, 2, "r:") == 0) {
      core::HoldRecord hold;
      s = DecodeHold(key_name, rec.str, c.id, &hold);
      if (s.ok()) ++report->reservations;
    } else {
      std::vector<core::HoldRecord> open;
      s = DecodeOpenHolds(key_name, rec.str, c.id, &open);
    }
    if (!s.ok()) findings.Add(s.message());
  }
}

// Every claim record the claim indexes list decodes.
Status RedisDb::VerifyClaims(core::Findings* findings) {
  std::vector<Command> lists;
  std::vector<std::string> tags;
  for (uint32_t g = 0; g < kClaimGroups; ++g) {
    tags.push_back(keys_.ClaimGroupTag(g));
    lists.push_back(ReadCommand(
        {"ZRANGE", KeySpace::ClaimIndex(tags.back()), "0", "-1"}, tags.back()));
  }
  std::vector<Reply> r;
  Status s = Run(lists, &r, false);
  if (!s.ok()) return s;
  std::vector<Command> gets;
  std::vector<std::string> names;
  for (size_t g = 0; g < r.size(); ++g) {
    for (const Reply& k : r[g].elements) {
      names.push_back(KeySpace::Claim(tags[g], k.str));
      gets.push_back(ReadCommand({"GET", names.back()}, tags[g]));
    }
  }
  s = Run(gets, &r, false);
  if (!s.ok()) return s;
  for (size_t i = 0; i < gets.size(); ++i) {
    if (r[i].kind != Reply::Kind::kString) {
      findings->Add("claim " + core::Quote(names[i]) + ": indexed but missing");
      continue;
    }
    StoredClaim claim;
    s = DecodeClaim(names[i], r[i].str, &claim);
    if (!s.ok()) findings->Add(s.message());
  }
  return Status::OK();
}

}  // namespace tally::cluster
