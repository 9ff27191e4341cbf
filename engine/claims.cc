// Claims (Db::Claim, CompleteClaim, ReleaseClaim, GetClaim, ListClaims): a
// side effect outside tally done once, however often its trigger is
// delivered and to however many workers (docs/claims.md).
//
// A claim is one record in the claims family at its key (docs/format.md,
// "claims"): the latest grant (fencing token, holder, lease) and, once
// completed, its end and result for good. Every call reads the record,
// decides and writes it under the key's stripe of claim_locks_, so two
// calls on one key never interleave: one Claim acquires, the other sees it
// held. The token only grows: a grant writes the record's token plus one,
// and the record is never deleted (a released or expired claim keeps its
// token for the next grant).
//
// CompleteClaim's counts are a Batch applied by ApplyInto with the record as
// its `also` write: the completion and the counts are one WriteBatch, so
// "done" and "counted" cannot disagree after any crash. The claim stripe is
// taken first and ApplyInto's catalog hold and event stripes after it;
// nothing takes a claim stripe while holding those, so no lock cycle.

#include <rocksdb/iterator.h>
#include <rocksdb/write_batch.h>

#include <cassert>

#include "engine/db_impl.h"
#include "engine/format.h"
#include "engine/rules.h"
#include "engine/perf_counters.h"
#include "tally/limits.h"
#include "util/rocks_status.h"

namespace tally::engine {
namespace {

// The stored claim at `key`: *found false when there is none.
Status ReadClaim(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* claims,
                 const rocksdb::ReadOptions& ro, std::string_view key,
                 ClaimRecord* rec, bool* found) {
  *found = false;
  if (claims == nullptr) return Status::OK();  // an old read-only database
  rocksdb::PinnableSlice v;
  rocksdb::Status rs =
      db->Get(ro, claims, rocksdb::Slice(key.data(), key.size()), &v);
  if (rs.IsNotFound()) return Status::OK();
  if (!rs.ok()) return FromRocks(rs, "read " + ClaimNaming(key));
  Status s = schema::DecodeClaim(v.ToStringView(), rec);
  if (!s.ok()) return Status::Corruption(ClaimNaming(key) + ": " + s.message());
  *found = true;
  return Status::OK();
}

}  // namespace

Result<ClaimResult> DbImpl::Claim(std::string_view key, std::string_view holder,
                                  int64_t lease_ms) {
  ClaimArgs args;
  args.holder = holder;
  args.lease_ms = lease_ms;
  Result<ClaimResult> r = ClaimOne(ClaimCall::kClaim, key, args, nullptr);
  CountRefusal(r.status());
  return r;
}

Result<ClaimResult> DbImpl::CompleteClaim(std::string_view key, uint64_t token,
                                          std::string_view result,
                                          const Batch& counts) {
  ClaimArgs args;
  args.token = token;
  args.result = result;
  Result<ClaimResult> r = ClaimOne(ClaimCall::kComplete, key, args, &counts);
  CountRefusal(r.status());
  return r;
}

Result<ClaimResult> DbImpl::ReleaseClaim(std::string_view key,
                                         uint64_t token) {
  ClaimArgs args;
  args.token = token;
  Result<ClaimResult> r = ClaimOne(ClaimCall::kRelease, key, args, nullptr);
  CountRefusal(r.status());
  return r;
}

Result<ClaimResult> DbImpl::ClaimOne(ClaimCall call, std::string_view key,
                                     const ClaimArgs& args,
                                     const Batch* counts) {
  const PerfCountersOff perf_off;
  Status s = CheckWritable();
  if (s.ok()) s = CheckClaimCall(call, key, args);
  // The first claim raises the format: before the stripe.
  if (s.ok() && call == ClaimCall::kClaim) {
    s = RaiseFormatOnFirstUse(kFormatClaims,
                              [](const Catalog::Reader&) { return Status::OK(); });
  }
  if (!s.ok()) return s;
  EventLocks::Guard guard(&claim_locks_,
                          claim_locks_.StripeOf(0, StableHash(key)));
  ClaimRecord rec;
  bool found = false;
  s = ReadClaim(db_.get(), claims_, rocksdb::ReadOptions(), key, &rec, &found);
  if (!s.ok()) return s;
  // The clock after the read, as for markers.
  const int64_t now = clock_->NowMillis();
  ClaimResult r;
  bool write = false;
  s = ClaimStep(call, key, args, found, now, &rec, &r, &write);
  if (!s.ok()) return s;
  if (write) {
    std::string bytes;
    schema::EncodeClaim(rec, &bytes);
    const rocksdb::Slice k(key.data(), key.size());
    auto put = [&](rocksdb::WriteBatch* wb) {
      return FromRocks(wb->Put(claims_, k, bytes), "write " + ClaimNaming(key));
    };
    if (counts != nullptr && !counts->empty()) {
      // The counts and the completion in one write; a refused batch
      // writes neither and leaves the claim held.
      assert(call == ClaimCall::kComplete);
      s = ApplyInto(*counts, &r.counted, put);
    } else {
      rocksdb::WriteBatch wb;
      s = put(&wb);
      if (s.ok()) s = commit_->Commit(&wb);
    }
    if (!s.ok()) return s;
  }
  r.claim = ClaimInfoOf(key, rec, now);
  return r;
}

Result<ClaimInfo> DbImpl::GetClaim(std::string_view key) {
  Status s = CheckReads(kReadMarkers, "GetClaim");
  if (s.ok()) s = ValidateClaimKey(key);
  if (!s.ok()) return s;
  // A read-only instance is swapped only under the catalog held
  // exclusively (Refresh).
  Catalog::Reader catalog(catalog_.get());
  ClaimRecord rec;
  bool found = false;
  s = ReadClaim(db_.get(), claims_, rocksdb::ReadOptions(), key, &rec, &found);
  if (!s.ok()) return s;
  if (!found) return Status::NotFound(ClaimNaming(key) + " was never claimed");
  return ClaimInfoOf(key, rec, clock_->NowMillis());
}

Result<std::vector<ClaimInfo>> DbImpl::ListClaims(
    const ListClaimsOptions& options) {
  Status s = CheckReads(kReadMarkers, "ListClaims");
  if (s.ok()) s = CheckListClaims(options);
  if (!s.ok()) return s;
  Catalog::Reader catalog(catalog_.get());
  std::vector<ClaimInfo> out;
  if (claims_ == nullptr) return out;  // an old read-only database
  const int64_t now = clock_->NowMillis();
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), claims_));
  it->Seek(options.start_after);
  if (it->Valid() && !options.start_after.empty() &&
      it->key() == options.start_after) {
    it->Next();  // start_after is exclusive
  }
  for (; it->Valid() && out.size() < options.limit; it->Next()) {
    const std::string_view key = it->key().ToStringView();
    ClaimRecord rec;
    s = schema::DecodeClaim(it->value().ToStringView(), &rec);
    if (!s.ok()) return Status::Corruption(ClaimNaming(key) + ": " + s.message());
    ClaimInfo info = ClaimInfoOf(key, rec, now);
    if (!ClaimListed(options.filter, info)) continue;
    out.push_back(std::move(info));
  }
  if (!it->status().ok()) return FromRocks(it->status(), "list claims");
  return out;
}

}  // namespace tally::engine
