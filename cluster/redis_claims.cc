// RedisDb's claims (Db::Claim, CompleteClaim, ReleaseClaim, GetClaim,
// ListClaims; docs/cluster.md, "Claims"). The rules are core/claims.h's:
// every call reads the claim's record (GET on its master), reads the
// client's clock, decides with core::ClaimStep and writes what it decided
// with one tally_guarded call guarded on the bytes it read (or on their
// absence), so two clients deciding on one record at once cannot both
// write: the loser finds the guard changed, reads again and decides again
// (at most kMaxStaleRounds times, then Busy; cluster/stale_rounds.h).
//
// A completion with counts takes two steps, since the record and the
// counters live in different slots (FinishCompletion,
// claim_counts.cc): the record is first written completing (its
// decision made: read as done), then the counts are applied as once-ops
// under derived event ids, then the record is written done.

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "cluster/claim_counts.h"
#include "cluster/guarded_call.h"
#include "cluster/redis_db.h"
#include "cluster/stale_rounds.h"
#include "core/validate.h"
#include "tally/limits.h"

namespace tally::cluster {
namespace {

using core::ClaimCall;

// Claims are read on their masters: a record is guarded by what its
// master holds, and a list shows what the calls decided on.
Command MasterRead(std::vector<std::string> args, const std::string& key) {
  return ReadCommand(std::move(args), key, false);
}

}  // namespace

// A claim's record as read: its bytes (the guard of the write after it).
struct RedisDb::ClaimRead {
  bool found = false;
  std::string bytes;
  StoredClaim stored;
};

Status RedisDb::ReadClaim(std::string_view key, ClaimRead* read) {
  const std::string record = KeySpace::Claim(keys_.ClaimTag(key), key);
  std::vector<Reply> replies;
  Status s = Run({MasterRead({"GET", record}, record)}, &replies, false);
  if (!s.ok()) return s;
  const Reply& r = replies[0];
  *read = ClaimRead();
  if (r.kind == Reply::Kind::kNil) return Status::OK();
  if (r.kind != Reply::Kind::kString) {
    return Status::IOError("read " + core::ClaimNaming(key) + ": " + r.str);
  }
  read->found = true;
  read->bytes = r.str;
  return DecodeClaim(record, read->bytes, &read->stored);
}

Status RedisDb::WriteClaim(std::string_view key, const ClaimRead& read,
                           const StoredClaim& next, bool* written) {
  const std::string tag = keys_.ClaimTag(key);
  const std::string record = KeySpace::Claim(tag, key);
  GuardedCall g(tag);
  g.Guard(record, read.found ? std::optional<std::string>(read.bytes)
                             : std::nullopt);
  g.Set(record, EncodeClaim(next), 0);  // kept for good: tokens only grow
  if (!read.found) g.ZAdd(KeySpace::ClaimIndex(tag), 0, std::string(key));
  GuardedCall::Outcome outcome = GuardedCall::Outcome::kStale;
  const Status s = RunGuarded(g, core::ClaimNaming(key), &outcome);
  *written = outcome == GuardedCall::Outcome::kWritten;
  return s;
}

Status RedisDb::FinishCompletion(std::string_view key, const ClaimRead& marked,
                                 const Batch& counts, ClaimResult* r,
                                 bool* stale) {
  *stale = false;
  const StoredClaim& c = marked.stored;
  const std::string what = core::ClaimNaming(key);
  if (CountsDigest(counts) != c.counts) {
    return Status::InvalidArgument(
        "token " + std::to_string(c.rec.token) + " of " + what +
        " began its completion with other counts: retry CompleteClaim with "
        "the batch it was first called with, to finish it");
  }
  const DerivedCounts d = DeriveCounts(key, c, counts);
  std::vector<IncrementResult> results;
  bool gone = false;
  bool sent = false;
  const Status applied = Execute(d.ops, true, &results, &gone, &sent);
  StoredClaim next = c;
  next.completing = false;
  if (!applied.ok() && (sent || !core::IsRefusal(applied))) {
    // Some of the counts may be written: only this attempt's ids may
    // finish them, so the claim stays completing.
    return applied.WithContext(
        what + " stays completing (CompleteClaim with token " +
        std::to_string(c.rec.token) + " and the same counts finishes it)");
  }
  if (!applied.ok()) {
    // Refused with nothing sent: held again, and the next attempt's ops
    // get ids of their own (a batch may differ from the refused one).
    next.rec.state = static_cast<uint8_t>(ClaimState::kHeld);
    next.rec.ended_at_ms = 0;
    next.rec.result.clear();
    next.attempt = c.attempt + 1;
    next.counts = 0;
  }
  bool written = false;
  Status s = WriteClaim(key, marked, next, &written);
  if (!s.ok()) return s;
  *stale = !written;
  if (!applied.ok()) return written ? applied : Status::OK();
  r->counted = std::move(results);
  return Status::OK();
}

Result<ClaimResult> RedisDb::ClaimOne(ClaimCall call, std::string_view key,
                                      const core::ClaimArgs& args,
                                      const Batch* counts) {
  Status s = CheckWritable();
  if (s.ok()) s = core::CheckClaimCall(call, key, args);
  const bool with_counts = counts != nullptr && !counts->empty();
  if (s.ok() && with_counts) s = core::ValidateBatchSize(counts->size());
  if (!s.ok()) return s;
  for (int round = 0; round < kMaxStaleRounds; ++round) {
    ClaimRead read;
    s = ReadClaim(key, &read);
    if (!s.ok()) return s;
    // The clock after the read, as the engine reads it.
    const int64_t now = clock_->NowMillis();
    StoredClaim next = read.stored;
    ClaimResult r;
    bool write = false;
    s = core::ClaimStep(call, key, args, read.found, now, &next.rec, &r,
                        &write);
    if (!s.ok()) return s;
    const ClaimRead* finish = nullptr;
    ClaimRead marked;
    if (read.stored.completing && call == ClaimCall::kComplete &&
        r.answer == ClaimAnswer::kCompleted) {
      // This token's completion, marked by an earlier call whose counts
      // may not all be applied: finished now, with the same derived ids.
      r.repeated = true;
      finish = &read;
    } else if (write) {
      if (next.rec.token != read.stored.rec.token) {
        next.attempt = 0;  // a new grant's first completion attempt
      }
      if (with_counts) {
        next.completing = true;
        next.counts = CountsDigest(*counts);
        s = CheckBatch(DeriveCounts(key, next, *counts).ops);
        if (!s.ok()) return s;  // refused before anything was written
      }
      bool written = false;
      s = WriteClaim(key, read, next, &written);
      if (!s.ok()) return s;
      if (!written) continue;  // another client wrote it: read again
      if (with_counts) {
        marked = ClaimRead{true, EncodeClaim(next), next};
        finish = &marked;
      }
    }
    if (finish != nullptr) {
      bool stale = false;
      s = FinishCompletion(key, *finish, with_counts ? *counts : Batch(), &r,
                           &stale);
      if (!s.ok()) return s;
      if (stale) continue;
    }
    r.claim = core::ClaimInfoOf(key, next.rec, now);
    return r;
  }
  return StaleBusy(core::ClaimNaming(key), "nothing was decided, retry");
}

Result<ClaimResult> RedisDb::Claim(std::string_view key,
                                   std::string_view holder,
                                   int64_t lease_ms) {
  core::ClaimArgs args;
  args.holder = holder;
  args.lease_ms = lease_ms;
  return ClaimOne(ClaimCall::kClaim, key, args, nullptr);
}

Result<ClaimResult> RedisDb::CompleteClaim(std::string_view key,
                                           uint64_t token,
                                           std::string_view result,
                                           const Batch& counts) {
  core::ClaimArgs args;
  args.token = token;
  args.result = result;
  return ClaimOne(ClaimCall::kComplete, key, args, &counts);
}

Result<ClaimResult> RedisDb::ReleaseClaim(std::string_view key,
                                          uint64_t token) {
  core::ClaimArgs args;
  args.token = token;
  return ClaimOne(ClaimCall::kRelease, key, args, nullptr);
}

Result<ClaimInfo> RedisDb::GetClaim(std::string_view key) {
  Status s = core::ValidateClaimKey(key);
  ClaimRead read;
  if (s.ok()) s = ReadClaim(key, &read);
  if (!s.ok()) return s;
  if (!read.found) {
    return Status::NotFound(core::ClaimNaming(key) + " was never claimed");
  }
  return core::ClaimInfoOf(key, read.stored.rec, clock_->NowMillis());
}

Result<std::vector<ClaimInfo>> RedisDb::ListClaims(
    const ListClaimsOptions& options) {
  Status s = core::CheckListClaims(options);
  if (!s.ok()) return s;
  std::vector<ClaimInfo> out;
  std::string after = options.start_after;
  for (bool more = true; more && out.size() < options.limit;) {
    // The next `limit` keys of each group after `after`, merged: the first
    // `limit` of them are the next keys of all.
    std::vector<Command> ranges;
    for (uint32_t g = 0; g < kClaimGroups; ++g) {
      const std::string index = KeySpace::ClaimIndex(keys_.ClaimGroupTag(g));
      ranges.push_back(MasterRead(
          {"ZRANGEBYLEX", index, after.empty() ? "-" : "(" + after, "+",
           "LIMIT", "0", std::to_string(options.limit)},
          index));
    }
    std::vector<Reply> replies;
    s = Run(ranges, &replies, false);
    if (!s.ok()) return s;
    std::vector<std::string> keys;
    more = false;
    for (const Reply& r : replies) {
      if (r.kind != Reply::Kind::kArray) {
        return Status::IOError("list claims: " + r.str);
      }
      more |= r.elements.size() == options.limit;
      for (const Reply& k : r.elements) keys.push_back(k.str);
    }
    std::sort(keys.begin(), keys.end());
    if (keys.size() > options.limit) {
      keys.resize(options.limit);
      more = true;
    }
    s = ListRecords(keys, options.filter, options.limit, &out);
    if (!s.ok()) return s;
    if (!keys.empty()) after = keys.back();
  }
  return out;
}

Status RedisDb::ListRecords(const std::vector<std::string>& keys,
                            ClaimFilter filter, size_t limit,
                            std::vector<ClaimInfo>* out) {
  std::vector<Command> gets;
  for (const std::string& key : keys) {
    const std::string record = KeySpace::Claim(keys_.ClaimTag(key), key);
    gets.push_back(MasterRead({"GET", record}, record));
  }
  std::vector<Reply> replies;
  Status s = Run(gets, &replies, false);
  if (!s.ok()) return s;
  const int64_t now = clock_->NowMillis();
  for (size_t i = 0; i < keys.size() && out->size() < limit; ++i) {
    const Reply& r = replies[i];
    if (r.kind == Reply::Kind::kNil) continue;  // indexed, not written yet
    if (r.kind != Reply::Kind::kString) {
      return Status::IOError("read " + core::ClaimNaming(keys[i]) + ": " +
                             r.str);
    }
    StoredClaim c;
    s = DecodeClaim(gets[i].args[1], r.str, &c);
    if (!s.ok()) return s;
    ClaimInfo info = core::ClaimInfoOf(keys[i], c.rec, now);
    if (core::ClaimListed(filter, info)) out->push_back(std::move(info));
  }
  return Status::OK();
}

}  // namespace tally::cluster
