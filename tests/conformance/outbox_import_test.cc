// Conformance: the change feed of counters with an outbox (tally/outbox.h)
// and restoring an export (tally/import.h), both through the free
// functions every backend offers.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "conformance/conformance.h"
#include "tally/import.h"
#include "tally/outbox.h"

namespace tally::conformance {
namespace {

class OutboxAndImport : public ConformanceTest {};

TEST_P(OutboxAndImport, AppliedIncrementsAreFedInOrderUntilAcknowledged) {
  CounterSpec spec{2};
  spec.outbox = true;
  ASSERT_OK(db_->CreateCounter("orders", spec));
  CounterSpec keyed = spec;
  keyed.keyed = true;
  ASSERT_OK(db_->CreateCounter("per-shop", keyed));
  ASSERT_OK(db_->IncrementOnce("orders", "o1", 3));
  ASSERT_OK(db_->IncrementOnce("orders", "o1", 3));  // a duplicate: no entry
  clock_.Advance(kSecond);
  ASSERT_OK(db_->Increment("orders", 2));
  ASSERT_OK(db_->IncrementOnce({"per-shop", "shop-9"}, "o2", 1));
  ASSERT_OK(db_->Reset("orders", "close", 1));  // ships its delta, -4
  const std::vector<OutboxEntry> all = Got(ReadOutbox(*db_, 0, 10));
  ASSERT_EQ(all.size(), 4u);
  for (size_t i = 1; i < all.size(); ++i) EXPECT_GT(all[i].seq, all[i - 1].seq);
  EXPECT_EQ(all[0].counter, "orders");
  EXPECT_EQ(all[0].event_id, "o1");
  EXPECT_EQ(all[0].delta, 3);
  EXPECT_EQ(all[0].time_ms, kStart);
  EXPECT_EQ(all[1].event_id, "");  // a plain increment
  EXPECT_EQ(all[1].delta, 2);
  EXPECT_EQ(all[1].time_ms, kStart + kSecond);
  EXPECT_EQ(all[2].counter, "per-shop");
  EXPECT_EQ(all[2].key, "shop-9");
  EXPECT_EQ(all[3].event_id, "close");
  EXPECT_EQ(all[3].delta, -4);
  EXPECT_NE(all[0].origin, "");
  EXPECT_NE(all[0].origin_seq, all[1].origin_seq);
  // Acknowledged entries go; the rest stay, in order.
  ASSERT_OK(AckOutbox(*db_, all[1].seq));
  const OutboxStatus status = Got(GetOutboxStatus(*db_));
  EXPECT_EQ(status.entries, 2u);
  EXPECT_EQ(status.acked_through, all[1].seq);
  EXPECT_EQ(status.last_seq, all[3].seq);
  const std::vector<OutboxEntry> rest = Got(ReadOutbox(*db_, 0, 10));
  ASSERT_EQ(rest.size(), 2u);
  EXPECT_EQ(rest[0].seq, all[2].seq);
  EXPECT_EQ(Got(ReadOutbox(*db_, all[2].seq, 10)).size(), 1u);
  ASSERT_OK(AckOutbox(*db_, all[1].seq));  // idempotent
  EXPECT_TRUE(Fails(ReadOutbox(*db_, 0, 0), Code::kInvalidArgument));
  // The asynchronous calls refuse an outbox counter.
  Status async = Status::OK();
  db_->IncrementAsync("orders", 1, [&async](const Result<IncrementResult>& r) {
    async = r.status();
  });
  EXPECT_TRUE(Fails(async, Code::kNotSupported));
  // The database's id: 32 hex characters, kept across a reopen.
  const std::string id = Got(DatabaseId(*db_));
  EXPECT_EQ(id.size(), 32u);
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
  Reopen();
  ASSERT_NE(db_, nullptr);
  EXPECT_EQ(Got(DatabaseId(*db_)), id);
  EXPECT_EQ(Got(GetOutboxStatus(*db_)).entries, 2u);
}

TEST_P(OutboxAndImport, AnExportedCounterImportsWithItsValuesAndMarkers) {
  ASSERT_OK(db_->CreateCounter("src", CounterSpec{3}));
  for (int i = 0; i < 6; ++i) {
    ASSERT_OK(db_->IncrementOnce("src", "e" + std::to_string(i), i + 1));
  }
  ASSERT_OK(db_->Increment("src", 100));
  // An export, made of public reads.
  CounterImport im;
  im.info = Got(db_->DescribeCounter("src"));
  im.shard_values = Got(db_->ShardCounts("src"));
  im.markers = Got(db_->ListMarkers("src", {}));
  ASSERT_EQ(im.markers.size(), 6u);
  im.info.name = "copy";
  ASSERT_OK(ImportCounter(*db_, im));
  const CounterInfo copy = Got(db_->DescribeCounter("copy"));
  EXPECT_NE(copy.id, im.info.id);  // a new id
  EXPECT_EQ(copy.shards, 3u);
  EXPECT_EQ(copy.flags, kCounterFlagPlainIncrements);
  EXPECT_EQ(Got(db_->ShardCounts("copy")), im.shard_values);
  EXPECT_EQ(Got(db_->ReadExact("copy")), 121);
  EXPECT_EQ(Got(db_->CountMarkers("copy")), 6u);
  // Its markers answer redeliveries; nothing is counted again.
  EXPECT_EQ(Got(db_->IncrementOnce("copy", "e2", 3)).outcome,
            Outcome::kDuplicate);
  EXPECT_EQ(Got(db_->IncrementOnce("copy", "e2", 4)).outcome,
            Outcome::kConflict);
  EXPECT_EQ(Got(db_->ReadExact("copy")), 121);
  // A taken name, or a malformed export, imports nothing.
  EXPECT_TRUE(Fails(ImportCounter(*db_, im), Code::kAlreadyExists));
  im.info.name = "bad";
  im.shard_values.push_back(0);  // one value too many
  EXPECT_TRUE(Fails(ImportCounter(*db_, im), Code::kInvalidArgument));
  EXPECT_TRUE(Fails(db_->DescribeCounter("bad"), Code::kNotFound));
}

TALLY_CONFORMANCE_SUITE(OutboxAndImport);

}  // namespace
}  // namespace tally::conformance
