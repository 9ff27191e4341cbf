// Outbox identity across power cuts and copies (docs/sync.md, "Why no two
// entries collide"): an edge that lost its unsynced tail to a power cut, a
// checkpoint opened as a second device and a restore from an older backup
// all keep syncing into one hub with nothing answered `duplicate` that was
// not already counted there, and nothing counted twice.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tally/backup.h"
#include "tally/checkpoint.h"
#include "tally/db.h"
#include "tally/outbox.h"
#include "tally/sync.h"
#include "testutil/db_fixture.h"
#include "testutil/power_cut_fs.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

class OutboxCopies : public test::DbTest {
 protected:
  std::unique_ptr<Db> OpenHub() {
    Options o;
    o.sync = true;  // what counterctl sync does: the hub is durable
    o.rollup_interval_ms = 0;
    auto hub = OpenAt("hub", o);
    EXPECT_OK(hub->CreateCounter("orders", {16}));
    return hub;
  }
  static std::unique_ptr<Db> OpenEdge(const std::string& path,
                                      rocksdb::Env* env = nullptr) {
    Options o;  // sync = false: an edge that may lose its tail
    o.rollup_interval_ms = 0;
    return test::OpenOrDie(path, o, env);
  }
  static SyncReport Sync(Db* edge, Db* hub) {
    SyncReport report;
    EXPECT_OK(SyncOutbox(edge, hub, SyncOptions(), &report));
    return report;
  }
};

// A power cut after the hub committed a sync batch and before the edge's
// acknowledgement reached its disk: the edge comes back without the batch's
// entries (and their increments: the price of sync=false), but the hub
// holds them. What the edge counts afterwards must reach the hub, not be
// answered as duplicates of the lost entries.
TEST_F(OutboxCopies, Item04_PowerCutBeforeAckNeverLosesLaterIncrements) {
  auto hub = OpenHub();
  auto fs = std::make_shared<test::PowerCutFs>();
  std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(fs);
  const std::string edge_path = Sub("edge");
  const std::string cut_path = Sub("edge-after-cut");
  auto edge = OpenEdge(edge_path, env.get());
  ASSERT_OK(edge->CreateCounter("orders", test::OutboxSpec(4)));
  for (int i = 0; i < 5; ++i) ASSERT_OK(edge->Increment("orders", 1));
  EXPECT_EQ(Sync(edge.get(), hub.get()).applied, 5u);  // acked, synced

  // Three more, unsynced on the edge; the sync's hub batch commits, then
  // the power fails inside the acknowledgement's fsync.
  for (int i = 0; i < 3; ++i) ASSERT_OK(edge->Increment("orders", 10));
  fs->CutBeforeNextSync(edge_path, cut_path);
  EXPECT_EQ(Sync(edge.get(), hub.get()).applied, 3u);
  ASSERT_TRUE(fs->cut_done());
  ASSERT_EQ(fs->cut_error(), "");
  edge.reset();
  EXPECT_EQ(test::OkValue(hub->ReadExact("orders")), 35);

  auto after = OpenEdge(cut_path);
  ASSERT_EQ(test::OkValue(after->ReadExact("orders")), 5)
      << "the cut kept the tail";
  // After the cut the edge counts on: a plain increment, a once-increment
  // and a batch.
  ASSERT_OK(after->Increment("orders", 100));
  ASSERT_OK(after->IncrementOnce("orders", "late-1", 200));
  Batch b;
  b.Add("orders", 300);
  std::vector<IncrementResult> results;
  ASSERT_OK(after->Apply(b, &results));
  const SyncReport report = Sync(after.get(), hub.get());
  EXPECT_EQ(report.applied, 3u);
  EXPECT_EQ(report.duplicates, 0u) << "a new entry was taken for a lost one";
  // The hub holds every increment once: the 8 made before the cut (3 of
  // them lost on the edge) and the 3 after.
  EXPECT_EQ(test::OkValue(hub->ReadExact("orders")), 35 + 600);
  EXPECT_EQ(test::OkValue(after->ReadExact("orders")), 5 + 600);
  EXPECT_EQ(test::OkValue(tally::GetOutboxStatus(*after)).entries, 0u);

  // Entries that survive a cut unsynced keep their identity: a second cut,
  // this time with the edge's entries on disk but not yet on the hub, then
  // a sync cut after the hub's commit, resent after reopen: duplicates.
  after.reset();
  auto fs2 = std::make_shared<test::PowerCutFs>();
  std::unique_ptr<rocksdb::Env> env2 = rocksdb::NewCompositeEnv(fs2);
  auto again = OpenEdge(cut_path, env2.get());
  for (int i = 0; i < 4; ++i) {
    ASSERT_OK(again->IncrementOnce("orders", "keep-" + std::to_string(i), 7));
  }
  const std::string cut2 = Sub("edge-after-cut-2");
  // Make the four entries durable (an ack of nothing syncs nothing, so a
  // synced write of an unrelated counter does it), then cut inside the
  // next sync's acknowledgement.
  ASSERT_OK(again->CreateCounter("scratch", {1}));
  fs2->CutBeforeNextSync(cut_path, cut2);
  EXPECT_EQ(Sync(again.get(), hub.get()).applied, 4u);
  ASSERT_TRUE(fs2->cut_done());
  again.reset();
  auto third = OpenEdge(cut2);
  EXPECT_EQ(test::OkValue(tally::GetOutboxStatus(*third)).entries, 4u);
  const SyncReport resent = Sync(third.get(), hub.get());
  EXPECT_EQ(resent.duplicates, 4u);
  EXPECT_EQ(resent.applied, 0u);
  EXPECT_EQ(test::OkValue(hub->ReadExact("orders")), 35 + 600 + 28);
  EXPECT_EQ(test::OkValue(third->ReadExact("orders")), 5 + 600 + 28);
}

// A checkpoint opened as a second device beside the original: both keep
// counting and both sync into one hub. The entries the copy inherited are
// the original's increments (the hub counts them once, whichever device
// sends them first); everything either device counts after the copy is
// counted on the hub, never answered duplicate or conflict.
TEST_F(OutboxCopies, Item05_CheckpointAsSecondDeviceNeverCollides) {
  auto hub = OpenHub();
  auto a = OpenEdge(Sub("a"));
  ASSERT_OK(a->CreateCounter("orders", test::OutboxSpec(4)));
  for (int i = 0; i < 4; ++i) ASSERT_OK(a->Increment("orders", 1));
  Sync(a.get(), hub.get());  // 4 on the hub
  for (int i = 0; i < 3; ++i) ASSERT_OK(a->Increment("orders", 2));  // unsynced
  ASSERT_OK(tally::Checkpoint(*a, Sub("b")));
  auto b = OpenEdge(Sub("b"));
  const int64_t inherited = test::OkValue(b->ReadExact("orders"));
  ASSERT_EQ(inherited, 10);

  // After the copy each device counts its own increments, with different
  // deltas (so a reused id would be a conflict, not only a duplicate).
  for (int i = 0; i < 5; ++i) ASSERT_OK(a->Increment("orders", 100));
  for (int i = 0; i < 5; ++i) ASSERT_OK(b->Increment("orders", 1000));
  ASSERT_OK(b->IncrementOnce("orders", "b-only", 7));

  const SyncReport rb = Sync(b.get(), hub.get());
  EXPECT_EQ(rb.applied, 3u + 6u);  // inherited 3 and its own 6
  const SyncReport ra = Sync(a.get(), hub.get());
  EXPECT_EQ(ra.duplicates, 3u);  // the inherited ones, sent by b already
  EXPECT_EQ(ra.applied, 5u);
  const int64_t a_total = test::OkValue(a->ReadExact("orders"));
  const int64_t b_total = test::OkValue(b->ReadExact("orders"));
  EXPECT_EQ(test::OkValue(hub->ReadExact("orders")),
            a_total + b_total - inherited);
  EXPECT_EQ(test::OkValue(hub->ReadExact("orders")), 10 + 500 + 5007);
}

// An edge restored from an older backup replaces the same device: the hub
// has seen seqs past the backup. The restored edge's old entries are
// duplicates on the hub; what it counts after the restore is counted.
TEST_F(OutboxCopies, Item05_RestoredOlderBackupNeverReusesIdentities) {
  auto hub = OpenHub();
  const std::string backups = Sub("backups");
  auto edge = OpenEdge(Sub("edge"));
  ASSERT_OK(edge->CreateCounter("orders", test::OutboxSpec(4)));
  for (int i = 0; i < 3; ++i) ASSERT_OK(edge->Increment("orders", 1));
  ASSERT_OK(tally::CreateBackup(*edge, backups));  // 3 unsynced entries in it
  for (int i = 0; i < 4; ++i) ASSERT_OK(edge->Increment("orders", 10));
  EXPECT_EQ(Sync(edge.get(), hub.get()).applied, 7u);
  edge.reset();  // the device is lost; its backup is restored

  ASSERT_OK(RestoreBackup(backups, 1, Sub("restored")));
  auto restored = OpenEdge(Sub("restored"));
  for (int i = 0; i < 4; ++i) ASSERT_OK(restored->Increment("orders", 1000));
  const SyncReport r = Sync(restored.get(), hub.get());
  EXPECT_EQ(r.duplicates, 3u);  // the backup's entries: already on the hub
  EXPECT_EQ(r.applied, 4u);
  EXPECT_EQ(test::OkValue(hub->ReadExact("orders")), 43 + 4000);
}

}  // namespace
}  // namespace tally
